// Lab 004 (seed 004): a kernel calling a device function (polar → cartesian,
// KOKKOS_INLINE_FUNCTION in kernels/elementwise.hpp) for the distance between
// two points in polar form; ρ uniform in [0.5, 1.5), θ in [−π, π); 1e6 float32
// in the lab.
#include "experiment/experiment.hpp"
#include "kernels/elementwise.hpp"

#include <cmath>

namespace portalab {
namespace {

template <class Space, class T>
class PolarDistance {
 public:
  PolarDistance(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_rho1(ctx, "rho1", In{0.5, 1.5}, n),
        m_theta1(ctx, "theta1", In{-M_PI, M_PI}, n),
        m_rho2(ctx, "rho2", In{0.5, 1.5}, n),
        m_theta2(ctx, "theta2", In{-M_PI, M_PI}, n),
        m_z(ctx, "z", Out{}, n) {}

  static auto variants() {
    return std::array{Variant<PolarDistance>{.name = "kernel", .run = &PolarDistance::kernel}};
  }

  void kernel(RunState<Space>& s) {
    const Space& exec = s.exec();
    kernels::polar_distance(exec, s.paths(), m_rho1.device(), m_theta1.device(), m_rho2.device(),
                            m_theta2.device(), m_z.device());
  }

  Check verify() const {
    const T *r1 = m_rho1.host().data(), *t1 = m_theta1.host().data();
    const T *r2 = m_rho2.host().data(), *t2 = m_theta2.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) {
          const double dx = r1[i] * std::cos(double(t1[i])) - r2[i] * std::cos(double(t2[i]));
          const double dy = r1[i] * std::sin(double(t1[i])) - r2[i] * std::sin(double(t2[i]));
          return std::sqrt(dx * dx + dy * dy);
        },
        // Coordinates up to 1.5 carry a few ulp each (device sin and cos may
        // be 2 ulp off); close points cancel them into the distance, so the
        // error is absolute below 1 (floor) and relative above.
        elementwise_tolerance<T>(32), 1.0);
  }

  static Work work(std::size_t n, const Parameters&) {
    const auto w = kernels::polar_distance_work;
    return {w.arrays * sizeof(T) * n, w.flops * n};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 5 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_rho1, m_theta1, m_rho2, m_theta2, m_z;
};

[[maybe_unused]] const bool polar_distance_registered =
    register_experiment<PolarDistance, double, float>({
        .name = "polar_distance",
        .summary = "distance of two points in polar form, via a device function (lab 004)",
        .default_sizes = {1'000'000, 10'000'000},
        .default_dtypes = {"float32"},
    });

}  // namespace
}  // namespace portalab
