// The limits between GPUs and among ranks: peer copy bandwidth by the copy
// engines, and the allreduce bus bandwidth of the run's ranks.
#include "limits/calibrate.hpp"
#include "ranks/comm.hpp"
#include "ranks/nccl.hpp"
#include "results/result.hpp"
#include "platform/spaces.hpp"
#include "platform/timing.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <ostream>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace portalab {

double Links::peer_gbps(int ranks, bool both_ways) const {
  const auto& m = both_ways ? peer_both_ways : peer_one_way;
  const auto k = std::min<std::size_t>(static_cast<std::size_t>(ranks), m.size());
  double slowest = 0.0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j)
      if (i != j && m[i][j] > 0) slowest = slowest == 0.0 ? m[i][j] : std::min(slowest, m[i][j]);
  return slowest;
}

double Links::allreduce_busbw(const std::string& space, int ranks) const {
  double best = 0.0;
  for (const auto& a : allreduce)
    if (a.space == space && a.ranks == ranks) best = std::max(best, a.busbw_gbps);
  return best;
}

namespace {

double median_of(std::vector<double> v) { return summarize(std::move(v)).median; }

#if defined(KOKKOS_ENABLE_CUDA)
void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}

// Device i to j by cudaMemcpyPeerAsync, one way, and both at once on two
// streams; GB/s of bytes moved (not read + written), median of reps.
void measure_peers(Links& links, bool quick) {
  int devices = 0, current = 0;
  cuda_check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  cuda_check(cudaGetDevice(&current), "cudaGetDevice");
  if (devices < 2) {
    links.peer_note = fmt::format(
        "{} GPU visible to rank 0 (CUDA_VISIBLE_DEVICES, or Slurm's "
        "--gpu-bind): no peer copies measured",
        devices);
    return;
  }
  const std::size_t bytes = quick ? (256u << 20) : (1u << 30);
  const int reps = quick ? 5 : 10;
  links.peer_bytes = bytes;
  links.peer_one_way.assign(devices, std::vector<double>(devices, 0.0));
  links.peer_both_ways = links.peer_one_way;
  std::vector<void*> buffer(devices, nullptr);
  std::vector<cudaStream_t> stream(devices, nullptr);
  for (int d = 0; d < devices; ++d) {
    cuda_check(cudaSetDevice(d), "cudaSetDevice");
    cuda_check(cudaMalloc(&buffer[d], 2 * bytes), "cudaMalloc");
    cuda_check(cudaStreamCreateWithFlags(&stream[d], cudaStreamNonBlocking), "cudaStreamCreate");
    for (int p = 0; p < devices; ++p) {
      int can = 0;
      cudaDeviceCanAccessPeer(&can, d, p);
      if (p != d && can) {
        const cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();
        else
          cuda_check(e, "cudaDeviceEnablePeerAccess");
      }
    }
  }
  auto time_ms = [&](auto&& queue, std::vector<int> on) {
    const auto start = std::chrono::steady_clock::now();
    queue();
    for (int d : on) cuda_check(cudaStreamSynchronize(stream[d]), "cudaStreamSynchronize");
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  for (int i = 0; i < devices; ++i)
    for (int j = 0; j < devices; ++j) {
      if (i == j) continue;
      auto* src_i = static_cast<char*>(buffer[i]);
      auto* dst_j = static_cast<char*>(buffer[j]) + bytes;  // upper half: received
      auto* src_j = static_cast<char*>(buffer[j]);
      auto* dst_i = static_cast<char*>(buffer[i]) + bytes;
      auto one = [&] { cudaMemcpyPeerAsync(dst_j, j, src_i, i, bytes, stream[i]); };
      auto both = [&] {
        cudaMemcpyPeerAsync(dst_j, j, src_i, i, bytes, stream[i]);
        cudaMemcpyPeerAsync(dst_i, i, src_j, j, bytes, stream[j]);
      };
      time_ms(one, {i});  // warm-up: first-touch and peer mappings
      time_ms(both, {i, j});
      std::vector<double> t1, t2;
      for (int r = 0; r < reps; ++r) t1.push_back(time_ms(one, {i}));
      for (int r = 0; r < reps; ++r) t2.push_back(time_ms(both, {i, j}));
      cuda_check(cudaGetLastError(), "cudaMemcpyPeerAsync");
      links.peer_one_way[i][j] = bytes / (median_of(t1) * 1e6);
      links.peer_both_ways[i][j] = 2.0 * bytes / (median_of(t2) * 1e6);
    }
  for (int d = 0; d < devices; ++d) {
    cudaSetDevice(d);
    cudaStreamDestroy(stream[d]);
    cudaFree(buffer[d]);
  }
  cuda_check(cudaSetDevice(current), "cudaSetDevice");  // Kokkos' device again
}
#endif

// One allreduce of `bytes` among the world's ranks, timed after a barrier
// until the slowest rank is done: bus GB/s, median of reps.
template <class Space>
Links::Allreduce measure_allreduce(const Comm& world, std::size_t bytes, int reps) {
  Links::Allreduce a;
  a.space = Space::name();
  a.ranks = world.size();
  a.bytes = bytes;
  const std::size_t n = bytes / sizeof(float);
  Kokkos::View<float*, typename Space::memory_space> send("allreduce_send", n),
      recv("allreduce_recv", n);
  const Space exec;
  std::function<void()> once;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    if (nccl_unavailable().empty()) {
      a.path = "nccl";
      once = [&] {
        Nccl::of(world).allreduce_sum(send.data(), recv.data(), n, Datatype::float32,
                                      exec.cuda_stream());
        exec.fence("portalab::calibrate::allreduce");
      };
    }
  }
#endif
  Kokkos::View<float*, Kokkos::HostSpace> host_send, host_recv;
  if (!once) {
    a.path = "mpi_host";
    host_send = decltype(host_send)("allreduce_host_send", n);
    host_recv = decltype(host_recv)("allreduce_host_recv", n);
    once = [&] {
      Kokkos::deep_copy(exec, host_send, send);
      exec.fence("portalab::calibrate::allreduce");
      world.allreduce_sum(host_send.data(), host_recv.data(), n, Datatype::float32);
      Kokkos::deep_copy(exec, recv, host_recv);
      exec.fence("portalab::calibrate::allreduce");
    };
  }
  std::vector<double> ms;
  for (int r = 0; r < reps + 2; ++r) {
    world.barrier();
    const auto start = std::chrono::steady_clock::now();
    once();
    const double t = world.max(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    if (r >= 2) ms.push_back(t);  // two warm-ups: NCCL's first calls set up its channels
  }
  const double k = world.size();
  a.busbw_gbps = bytes * 2.0 * (k - 1.0) / k / (median_of(ms) * 1e6);
  return a;
}

}  // namespace

Links calibrate_links(const Comm& world, const std::vector<std::string>& spaces,
                      const CalibrationOptions& options) {
  Links links;
  auto say = [&](const std::string& what) {
    if (options.progress && world.rank() == 0)
      fmt::print(*options.progress, "calibrate: {}\n", what);
  };
#if defined(KOKKOS_ENABLE_CUDA)
  const bool cuda_wanted = spaces.empty() ||
                           std::find(spaces.begin(), spaces.end(), "Cuda") != spaces.end();
  if (cuda_wanted && world.rank() == 0) {
    say("peer copy bandwidth between the GPUs rank 0 sees (copy engines)");
    measure_peers(links, options.quick);
  }
  world.barrier();
#endif
  if (world.size() > 1) {
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      const std::string name = Space::name();
      // NCCL's bus bandwidth still grows past 256 MiB (docs/performance.md,
      // "Several GPUs"): the limit is taken at 1 GiB, a few ms. Host memory
      // through MPI is a thousand times slower: less is enough there.
      const std::size_t bytes = !is_host_space_v<Space> ? (1u << 30)
                                : options.quick         ? (64u << 20)
                                                        : (256u << 20);
      if (!spaces.empty() && std::find(spaces.begin(), spaces.end(), name) == spaces.end()) return;
      say(fmt::format("{}: allreduce bus bandwidth among {} ranks, {} MiB", name, world.size(),
                      bytes >> 20));
      links.allreduce.push_back(measure_allreduce<Space>(world, bytes, options.quick ? 5 : 10));
    });
  }
  return links;
}

nlohmann::json to_json(const Links& l) {
  nlohmann::json allreduce = nlohmann::json::array();
  for (const auto& a : l.allreduce)
    allreduce.push_back({{"space", a.space},
                         {"path", a.path},
                         {"ranks", a.ranks},
                         {"bytes", a.bytes},
                         {"busbw_gbps", a.busbw_gbps}});
  return {{"peer_one_way_gbps", l.peer_one_way},
          {"peer_both_ways_gbps", l.peer_both_ways},
          {"peer_bytes", l.peer_bytes},
          {"peer_note", l.peer_note},
          {"allreduce", allreduce}};
}

Links links_from_json(const nlohmann::json& j) {
  Links l;
  l.peer_one_way = j.at("peer_one_way_gbps").get<std::vector<std::vector<double>>>();
  l.peer_both_ways = j.at("peer_both_ways_gbps").get<std::vector<std::vector<double>>>();
  l.peer_bytes = j.at("peer_bytes").get<std::size_t>();
  l.peer_note = j.value("peer_note", "");
  for (const auto& a : j.at("allreduce"))
    l.allreduce.push_back({a.at("space").get<std::string>(), a.at("path").get<std::string>(),
                           a.at("ranks").get<int>(), a.at("bytes").get<std::size_t>(),
                           a.at("busbw_gbps").get<double>()});
  return l;
}

std::string format_links(const Links& l) {
  std::string out;
  if (!l.peer_one_way.empty()) {
    out += fmt::format(
        "peer copies between GPUs ({} MiB, copy engines), GB/s one way / both "
        "ways at once:\n      ",
        l.peer_bytes >> 20);
    for (std::size_t j = 0; j < l.peer_one_way.size(); ++j)
      out += fmt::format("{:>14}", fmt::format("to GPU {}", j));
    out += "\n";
    for (std::size_t i = 0; i < l.peer_one_way.size(); ++i) {
      out += fmt::format("GPU {} ", i);
      for (std::size_t j = 0; j < l.peer_one_way.size(); ++j)
        out += i == j ? fmt::format("{:>14}", "-")
                      : fmt::format("{:>14}", fmt::format("{:.0f} / {:.0f}", l.peer_one_way[i][j],
                                                          l.peer_both_ways[i][j]));
      out += "\n";
    }
  } else if (!l.peer_note.empty()) {
    out += fmt::format("peer copies: {}\n", l.peer_note);
  }
  for (const auto& a : l.allreduce)
    out += fmt::format("allreduce {} among {} ranks, {} MiB ({}): bus bandwidth {:.1f} GB/s\n",
                       a.space, a.ranks, a.bytes >> 20, a.path, a.busbw_gbps);
  return out;
}

}  // namespace portalab
