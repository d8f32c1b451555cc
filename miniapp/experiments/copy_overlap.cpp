// An array too large to move at once, processed in chunks: each chunk copied
// to the space, y = 1 + x + … + x^degree computed there (kernels/polynomial.hpp,
// `degree` setting the arithmetic per byte), and copied back.
//   serial       one instance: copy in, compute, copy out, then the next
//                chunk, each phase fenced and timed on its own
//   pipelined_2  chunk c on instance c mod 2 (of 2 from partition_space), so
//   pipelined_3  one chunk's copies overlap another's compute; buffers per
//                instance, reused in stream order
// The host arrays are pinned or pageable as the copy mode says: only pinned
// memory lets a copy run asynchronously, so pageable pipelines do not overlap.
// The serial row measures the bound a perfect overlap allows, max(copy time,
// compute time) with copy = h2d + d2h; the pipelined rows get their speedup
// and their fraction of that bound (`of_perfect`, 1 = perfect).
#include "experiment.hpp"
#include "instances.hpp"
#include "polynomial_check.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <string>

namespace portalab {
namespace {

constexpr int max_pipelines = 3;

int pipelines(std::string_view variant) {
  return variant == "pipelined_2" ? 2 : variant == "pipelined_3" ? 3 : 1;
}

template <class Space, class T>
class CopyOverlap {
 public:
  using device_buffer = Kokkos::View<T*, Kokkos::Device<Space, typename Space::memory_space>>;

  CopyOverlap(CaseContext<Space>& ctx, std::size_t n, const Parameters& p)
      : m_x(ctx, "x", In{-0.5, 0.5}, n),
        m_y(ctx, "y", Out{}, n),
        m_chunks(static_cast<std::size_t>(std::clamp<std::int64_t>(p.at("chunks"), 1, n))),
        m_chunk((n + m_chunks - 1) / m_chunks),
        m_degree(p.at("degree")),
        m_pool(ctx.exec()) {
    for (auto& b : m_buffers)
      b = {device_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "chunk_in"), m_chunk),
           device_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "chunk_out"), m_chunk)};
  }

  void run(const Space&, std::string_view variant) {
    const int k = pipelines(variant);
    m_phase_ms = {0.0, 0.0, 0.0};
    m_times = run_concurrently(m_pool.get(k), [&](std::size_t i, const Space& e) {
      for (std::size_t c = i; c < m_chunks; c += k)
        k == 1 ? process_timed(e, c) : process(e, c, m_buffers[i]);
    });
  }

  std::optional<double> self_timed_ms() const { return m_times.last_ms(); }
  std::string timed_by(std::string_view variant) const {
    const int k = pipelines(variant);
    return k == 1 ? "fence on its instance after each phase" : instance_timing<Space>(k);
  }

  Metrics metrics() const {
    const double total = m_times.last_ms();
    const double bytes = 2.0 * sizeof(T) * static_cast<double>(m_x.size());
    Metrics m{{"chunks", static_cast<double>(m_chunks)},
              {"copy_gbps", total > 0 ? bytes / (total * 1e6) : 0.0}};
    if (m_times.done_ms.size() == 1) {
      const auto [h2d, compute, d2h] = m_phase_ms;
      m.insert(m.end(), {{"h2d_ms", h2d},
                         {"compute_ms", compute},
                         {"d2h_ms", d2h},
                         {"h2d_gbps", h2d > 0 ? bytes / 2 / (h2d * 1e6) : 0.0},
                         {"d2h_gbps", d2h > 0 ? bytes / 2 / (d2h * 1e6) : 0.0},
                         {"perfect_overlap_ms", std::max(h2d + d2h, compute)},
                         {"duplex_overlap_ms", std::max({h2d, d2h, compute})}});
    } else {
      const Metrics per_instance = m_times.metrics();
      m.insert(m.end(), per_instance.begin(), per_instance.end());
    }
    return m;
  }

  static std::string not_applicable(const Space& exec, std::string_view variant, CopyMode mode,
                                    const Parameters&) {
    if (mode == CopyMode::none) return "copy_overlap times copies; copies = none makes none";
    const int k = pipelines(variant);
    return k > 1 ? why_not_partitionable(exec, k) : std::string();
  }

  Check verify(std::string_view) const {
    return check_geometric_sum(m_x.host().data(), m_y.host().data(),
                               static_cast<std::int64_t>(m_y.size()), m_degree);
  }

  static Work work(std::size_t n, std::string_view, const Parameters& p) {
    const double m = static_cast<double>(n);
    return {2.0 * sizeof(T) * m, kernels::horner_flops_per_degree * p.at("degree") * m};
  }
  static std::size_t footprint(std::size_t n, const Parameters& p) {
    const auto chunks = static_cast<std::size_t>(std::clamp<std::int64_t>(p.at("chunks"), 1, n));
    return sizeof(T) * (2 * n + 2 * max_pipelines * ((n + chunks - 1) / chunks));
  }

 private:
  struct Buffers {
    device_buffer in, out;
  };

  // Chunk c's elements of x and y, and of a buffer.
  auto range(std::size_t c) const {
    const std::size_t lo = std::min(c * m_chunk, m_x.size());
    return std::make_pair(lo, std::min(lo + m_chunk, m_x.size()));
  }

  void copy_in(const Space& e, std::size_t c, const Buffers& b) const {
    const auto [lo, hi] = range(c);
    Kokkos::deep_copy(e, Kokkos::subview(b.in, std::make_pair(std::size_t(0), hi - lo)),
                      Kokkos::subview(m_x.host(), std::make_pair(lo, hi)));
  }
  void compute(const Space& e, std::size_t c, const Buffers& b) const {
    const auto [lo, hi] = range(c);
    const auto part = std::make_pair(std::size_t(0), hi - lo);
    kernels::horner(e, Kokkos::subview(b.in, part), Kokkos::subview(b.out, part), m_degree);
  }
  void copy_out(const Space& e, std::size_t c, const Buffers& b) const {
    const auto [lo, hi] = range(c);
    Kokkos::deep_copy(e, Kokkos::subview(m_y.host(), std::make_pair(lo, hi)),
                      Kokkos::subview(b.out, std::make_pair(std::size_t(0), hi - lo)));
  }

  void process(const Space& e, std::size_t c, const Buffers& b) const {
    copy_in(e, c, b);
    compute(e, c, b);
    copy_out(e, c, b);
  }

  // As process, each phase ended by a fence on e and added to m_phase_ms.
  void process_timed(const Space& e, std::size_t c) {
    using clock = std::chrono::steady_clock;
    const Buffers& b = m_buffers[0];
    auto phase = [&](double& sum, auto&& f) {
      const auto start = clock::now();
      f();
      e.fence("portalab::copy_overlap::phase");
      sum += std::chrono::duration<double, std::milli>(clock::now() - start).count();
    };
    phase(m_phase_ms[0], [&] { copy_in(e, c, b); });
    phase(m_phase_ms[1], [&] { compute(e, c, b); });
    phase(m_phase_ms[2], [&] { copy_out(e, c, b); });
  }

  HostStaged<T, Space> m_x, m_y;
  std::size_t m_chunks, m_chunk;
  std::int64_t m_degree;
  std::array<Buffers, max_pipelines> m_buffers;
  InstancePool<Space> m_pool;
  std::array<double, 3> m_phase_ms{};  // serial: h2d, compute, d2h summed over chunks
  InstanceTimes m_times;
};

// speedup and of_perfect on the pipelined rows, from the serial row's phases.
void relate_copy_overlap(std::span<Result> rows) {
  const Result* serial = passing_row(rows, "serial");
  if (!serial) return;
  for (auto& r : rows) {
    if (r.variant == "serial" || r.status != Status::pass || r.kernel.median <= 0) continue;
    r.set_metric("speedup", serial->kernel.median / r.kernel.median);
    r.set_metric("of_perfect", serial->metric("perfect_overlap_ms") / r.kernel.median);
    r.set_metric("of_duplex", serial->metric("duplex_overlap_ms") / r.kernel.median);
  }
}

[[maybe_unused]] const bool registered = register_experiment<CopyOverlap, float, double>(
    {
        .name = "copy_overlap",
        .summary = "chunked copy-compute-copy, serial vs pipelined over 2 or 3 instances",
        .variants = {"serial", "pipelined_2", "pipelined_3"},
        .default_sizes = {10'000'000},
        .default_dtypes = {"float32"},
        .bound = "transfer",
        .parameters = {{"chunks", 16, 1, 1 << 20, "pieces the array is processed in"},
                       {"degree", 16, 0, 1 << 24,
                        "multiply-adds per element: the compute against the copies"}},
        .same_outputs = true,
    },
    relate_copy_overlap);

}  // namespace
}  // namespace portalab
