// z = x: the memory-bandwidth yardstick that streaming experiments are
// measured against in the same run.
#include "experiment.hpp"
#include "kernels/stream.hpp"

namespace portalab {
namespace {

template <class Space, class T>
class StreamCopy {
 public:
  StreamCopy(CaseContext<Space>& ctx, std::size_t n)
      : m_x(ctx, "x", In{-1.0, 1.0}, n), m_z(ctx, "z", Out{}, n) {}

  void run(const Space& exec, std::string_view variant) {
    if (variant == "kernel")
      kernels::stream_copy(exec, m_x.device(), m_z.device());
    else
      Kokkos::deep_copy(exec, m_z.device(), m_x.device());
  }

  Check verify(std::string_view) const {
    const T* x = m_x.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) { return static_cast<double>(x[i]); }, 0.0);
  }

  static Work work(std::size_t n, std::string_view) { return {2.0 * sizeof(T) * n, 0.0}; }
  static std::size_t footprint(std::size_t n) { return 2 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_x, m_z;
};

[[maybe_unused]] const bool registered = register_experiment<StreamCopy, double, float>({
    .name = "stream_copy",
    .summary = "z = x: the copy bandwidth other streaming kernels are compared with",
    .variants = {"kernel", "deep_copy"},
    .default_sizes = {1'000'000},
    .default_dtypes = {"float64"},
});

}  // namespace
}  // namespace portalab
