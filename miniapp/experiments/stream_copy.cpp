// z = x: the memory-bandwidth yardstick that streaming experiments are
// measured against in the same run.
#include "experiment/experiment.hpp"
#include "kernels/stream.hpp"

namespace portalab {
namespace {

template <class Space, class T>
class StreamCopy {
 public:
  StreamCopy(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{-1.0, 1.0}, n), m_z(ctx, "z", Out{}, n) {}

  static auto variants() {
    return std::array{
        Variant<StreamCopy>{.name = "kernel", .run = &StreamCopy::kernel},
        Variant<StreamCopy>{.name = "naive", .run = &StreamCopy::naive},
        Variant<StreamCopy>{.name = "deep_copy", .run = &StreamCopy::deep_copy},
    };
  }

  void kernel(RunState<Space>& s) {
    kernels::stream_copy(s.exec(), s.paths(), m_x.device(), m_z.device());
  }
  // One element per thread, as BabelStream's Kokkos port: what the 16-byte
  // accesses of `kernel` gain on a GPU.
  void naive(RunState<Space>& s) {
    kernels::stream_copy_naive(s.exec(), s.paths(), m_x.device(), m_z.device());
  }
  void deep_copy(RunState<Space>& s) { Kokkos::deep_copy(s.exec(), m_z.device(), m_x.device()); }

  Check verify() const {
    const T* x = m_x.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) { return static_cast<double>(x[i]); }, 0.0);
  }

  static Work work(std::size_t n, const Parameters&) { return {2.0 * sizeof(T) * n, 0.0}; }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 2 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_x, m_z;
};

[[maybe_unused]] const bool stream_copy_registered = register_experiment<StreamCopy, double, float>(
    {
        .name = "stream_copy",
        .summary = "z = x: the copy bandwidth other streaming kernels are compared with",
        .default_sizes = {1'000'000},
        .default_dtypes = {"float64"},
    });

}  // namespace
}  // namespace portalab
