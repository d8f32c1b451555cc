// What launching a kernel costs, measured three ways as Kokkos' own
// launch-latency benchmark does, with n launches of a one-iteration kernel
// per repetition (launch k writes out(k) = k + 1, so the check sees them all):
//   dispatch         n launches, timed without the fence that follows them
//   throughput       n launches, then one fence
//   completion       each launch followed by a fence
//   graph            the n launches as nodes of a Kokkos Graph, replayed
//   native_dispatch  n launches through the backend's own API, timed exactly
//                    as dispatch is: Cuda `<<<1, 1, 0, stream>>>` on the
//                    instance's stream, OpenMP `omp parallel for`, Serial a
//                    plain call; other backends have none here and use Kokkos'.
// Results give microseconds per launch (kernel time / n).
#include "experiment/experiment.hpp"
#include "kernels/launch.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace portalab {
namespace {

#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
__global__ void bare_write_index(std::int64_t* out, std::int64_t k) { out[k] = k + 1; }
#endif

// Kept out of line, as a launch would be, so the loop is not folded away.
[[gnu::noinline]] void host_write_index(std::int64_t* out, std::int64_t k) { out[k] = k + 1; }

// n launches of out(k) = k + 1 without Kokkos.
template <class Space>
void native_write_index(const Space& exec, std::int64_t* out, std::int64_t n) {
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    for (std::int64_t k = 0; k < n; ++k) bare_write_index<<<1, 1, 0, exec.cuda_stream()>>>(out, k);
    return;
  }
#endif
#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP)
  if constexpr (std::is_same_v<Space, Kokkos::OpenMP>) {
    const int threads = exec.concurrency();
    for (std::int64_t k = 0; k < n; ++k) {
#pragma omp parallel for num_threads(threads)
      for (std::int64_t i = k; i < k + 1; ++i) out[i] = i + 1;
    }
    return;
  }
#endif
  if constexpr (is_host_space_v<Space>) {
    for (std::int64_t k = 0; k < n; ++k) host_write_index(out, k);
  } else {
    const Kokkos::View<std::int64_t*, typename Space::memory_space, Kokkos::MemoryUnmanaged> v(out,
                                                                                               n);
    for (std::int64_t k = 0; k < n; ++k) kernels::write_index(exec, v, k);
  }
}

template <class Space, class T>
class LaunchOverhead {
 public:
  LaunchOverhead(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_out(ctx, "out", Out{}, n) {}

  static auto variants() {
    using V = Variant<LaunchOverhead>;
    return std::array{V{.name = "dispatch", .run = &LaunchOverhead::dispatch},
                      V{.name = "throughput", .run = &LaunchOverhead::throughput},
                      V{.name = "completion", .run = &LaunchOverhead::completion},
                      V{.name = "graph", .run = &LaunchOverhead::graph},
                      V{.name = "native_dispatch", .run = &LaunchOverhead::native_dispatch}};
  }

  // n launches, timed without the fence that follows them.
  void dispatch(RunState<Space>& s) {
    s.time_dispatch([&] { launches(s.exec()); });
  }
  // n launches, then the runner's fence.
  void throughput(RunState<Space>& s) { launches(s.exec()); }
  // Each launch followed by a fence.
  void completion(RunState<Space>& s) {
    const auto& out = m_out.device();
    for (std::int64_t k = 0; k < size(); ++k) {
      kernels::write_index(s.exec(), out, k);
      s.exec().fence("portalab::launch_overhead::completion");
    }
  }
  // The n launches as nodes of a Kokkos Graph, built at the first (cold)
  // call, instantiated at its first submit, replayed.
  void graph(RunState<Space>& s) {
    if (!m_graph) m_graph = kernels::write_index_graph(s.exec(), m_out.device());
    m_graph->submit(s.exec());
  }
  // n launches through the backend's own API, timed as dispatch is.
  void native_dispatch(RunState<Space>& s) {
    s.time_dispatch([&] { native_write_index(s.exec(), m_out.device().data(), size()); });
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>)
      if (const cudaError_t e = cudaPeekAtLastError(); e != cudaSuccess)
        throw std::runtime_error(std::string("bare CUDA launch failed: ") + cudaGetErrorName(e));
#endif
  }

  Check verify() const {
    return compare_elementwise(
        m_out.host().data(), static_cast<std::int64_t>(m_out.size()),
        [](std::int64_t k) { return static_cast<double>(k + 1); }, elementwise_tolerance<T>(1));
  }

  static Work work(std::size_t n, const Parameters&) {
    return {static_cast<double>(sizeof(T) * n), 0.0, static_cast<double>(n)};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return sizeof(T) * n; }

 private:
  std::int64_t size() const { return static_cast<std::int64_t>(m_out.size()); }
  void launches(const Space& exec) {
    for (std::int64_t k = 0; k < size(); ++k) kernels::write_index(exec, m_out.device(), k);
  }

  Mirrored<T*, Space> m_out;
  std::optional<Kokkos::Experimental::Graph<Space>> m_graph;
};

[[maybe_unused]] const bool launch_overhead_registered =
    register_experiment<LaunchOverhead, std::int64_t>({
        .name = "launch_overhead",
        .summary =
            "microseconds per kernel launch: dispatch, throughput, completion, graph, native",
        .default_sizes = {1000},
        .default_dtypes = {"int64"},
    });

}  // namespace
}  // namespace portalab
