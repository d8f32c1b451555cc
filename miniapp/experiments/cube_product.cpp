// Lab 003 (seed 003): the custom ElementwiseKernel z = (x·y)³ on inputs
// uniform in [0, 1), 1024 float32 in the lab.
#include "experiment/experiment.hpp"
#include "kernels/elementwise.hpp"

namespace portalab {
namespace {

template <class Space, class T>
class CubeProduct {
 public:
  CubeProduct(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{0.0, 1.0}, n), m_y(ctx, "y", In{0.0, 1.0}, n), m_z(ctx, "z", Out{}, n) {}

  static auto variants() {
    return std::array{Variant<CubeProduct>{.name = "kernel", .run = &CubeProduct::kernel}};
  }

  void kernel(RunState<Space>& s) {
    const Space& exec = s.exec();
    kernels::cube_product(exec, s.paths(), m_x.device(), m_y.device(), m_z.device());
  }

  Check verify() const {
    const T* x = m_x.host().data();
    const T* y = m_y.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) {
          const double p = static_cast<double>(x[i]) * static_cast<double>(y[i]);
          return p * p * p;
        },
        // Three products rounded in T, the first one's error tripled by the cube;
        // absolute below T's smallest normal number, where T loses digits.
        elementwise_tolerance<T>(4), static_cast<double>(std::numeric_limits<T>::min()));
  }

  static Work work(std::size_t n, const Parameters&) {
    const auto w = kernels::cube_product_work;
    return {w.arrays * sizeof(T) * n, w.flops * n};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 3 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_x, m_y, m_z;
};

[[maybe_unused]] const bool cube_product_registered =
    register_experiment<CubeProduct, double, float>({
        .name = "cube_product",
        .summary = "z = (x*y)^3 (lab 003's custom elementwise kernel)",
        .default_sizes = {1024, 100'000'000},
        .default_dtypes = {"float32"},
    });

}  // namespace
}  // namespace portalab
