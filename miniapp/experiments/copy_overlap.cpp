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
#include "experiment/experiment.hpp"
#include "platform/instances.hpp"
#include "experiment/polynomial_check.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace portalab {
namespace {

constexpr int max_pipelines = 3;

template <class Space, class T>
class CopyOverlap {
 public:
  using device_buffer = Kokkos::View<T*, Kokkos::Device<Space, typename Space::memory_space>>;

  CopyOverlap(CaseContext<Space>& ctx, std::size_t n, const Parameters& p)
      : m_x(ctx, "x", In{-0.5, 0.5}, n),
        m_y(ctx, "y", Out{}, n),
        m_chunks(static_cast<std::size_t>(std::clamp<std::int64_t>(p.at("chunks"), 1, n))),
        m_chunk((n + m_chunks - 1) / m_chunks),
        m_degree(p.at("degree")) {
    for (auto& b : m_buffers)
      b = {device_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "chunk_in"), m_chunk),
           device_buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, "chunk_out"), m_chunk)};
  }

  static auto variants() {
    using V = Variant<CopyOverlap>;
    return std::array{
        V{.name = "serial", .run = &CopyOverlap::serial, .needs_copies = true},
        V{.name = "pipelined_2",
          .run = &CopyOverlap::pipelined,
          .instances = 2,
          .needs_copies = true},
        V{.name = "pipelined_3",
          .run = &CopyOverlap::pipelined,
          .instances = max_pipelines,
          .needs_copies = true},
    };
  }

  // Chunk after chunk on one instance, each phase fenced and timed: the
  // bound a perfect overlap allows comes from these phases.
  void serial(RunState<Space>& s) {
    const InstanceTimes& t = s.on_instances([&](std::size_t, const Space& e) {
      const Buffers& b = m_buffers[0];
      for (std::size_t c = 0; c < m_chunks; ++c) {
        s.fenced_phase(e, "h2d", [&] { copy_in(e, c, b); });
        s.fenced_phase(e, "compute", [&] { compute(e, c, b); });
        s.fenced_phase(e, "d2h", [&] { copy_out(e, c, b); });
      }
    });
    const double bytes = moved_bytes();
    const double h2d = s.metric_value("h2d_ms"), compute = s.metric_value("compute_ms"),
                 d2h = s.metric_value("d2h_ms");
    s.metric("chunks", static_cast<double>(m_chunks));
    s.metric("copy_gbps", gbps(bytes, t.last_ms()));
    s.metric("h2d_gbps", gbps(bytes / 2, h2d));
    s.metric("d2h_gbps", gbps(bytes / 2, d2h));
    s.metric("perfect_overlap_ms", std::max(h2d + d2h, compute));
    s.metric("duplex_overlap_ms", std::max({h2d, d2h, compute}));
  }

  // Chunk c on instance c mod k, each instance with its own buffers.
  void pipelined(RunState<Space>& s) {
    const auto k = static_cast<std::size_t>(s.instances());
    const InstanceTimes& t = s.on_instances([&](std::size_t i, const Space& e) {
      for (std::size_t c = i; c < m_chunks; c += k) {
        copy_in(e, c, m_buffers[i]);
        compute(e, c, m_buffers[i]);
        copy_out(e, c, m_buffers[i]);
      }
    });
    s.metric("chunks", static_cast<double>(m_chunks));
    s.metric("copy_gbps", gbps(moved_bytes(), t.last_ms()));
  }

  Check verify() const {
    return check_geometric_sum(m_x.host().data(), m_y.host().data(),
                               static_cast<std::int64_t>(m_y.size()), m_degree);
  }

  static Work work(std::size_t n, const Parameters& p) {
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

  double moved_bytes() const { return 2.0 * sizeof(T) * static_cast<double>(m_x.size()); }
  static double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

  HostStaged<T, Space> m_x, m_y;
  std::size_t m_chunks, m_chunk;
  std::int64_t m_degree;
  std::array<Buffers, max_pipelines> m_buffers;
};

// speedup and of_perfect on the pipelined rows, from the serial row's phases.
void relate_copy_overlap(std::span<CaseRow> rows) {
  const CaseRow* serial = passing_row(rows, "serial");
  if (!serial) return;
  for (auto& r : rows) {
    if (&r == serial || !r.passed || r.kernel_ms <= 0) continue;
    r.set_metric("speedup_over_serial", serial->kernel_ms / r.kernel_ms);
    r.set_metric("of_perfect", serial->metric("perfect_overlap_ms") / r.kernel_ms);
    r.set_metric("of_duplex", serial->metric("duplex_overlap_ms") / r.kernel_ms);
  }
}

[[maybe_unused]] const bool copy_overlap_registered =
    register_experiment<CopyOverlap, float, double>(
        {
            .name = "copy_overlap",
            .summary = "chunked copy-compute-copy, serial vs pipelined over 2 or 3 instances",
            .default_sizes = {10'000'000},
            .default_dtypes = {"float32"},
            .bound = Bound::transfer,
            .parameters = {{"chunks", 16, 1, 1 << 20, "pieces the array is processed in"},
                           {"degree", 16, 0, 1 << 24,
                            "multiply-adds per element: the compute against the copies"}},
            .same_outputs = true,
        },
        relate_copy_overlap);

}  // namespace
}  // namespace portalab
