// Lab 004 (seed 004): a ufunc with a special function, the Gaussian density
// at x uniform in [−3, 3) with μ = 0, σ = 1; 1e6 float32 in the lab.
#include "experiment/experiment.hpp"
#include "kernels/elementwise.hpp"

#include <cmath>

namespace portalab {
namespace {

template <class Space, class T>
class GaussianPdf {
 public:
  static constexpr double mean = 0.0, sigma = 1.0;  // the lab's

  GaussianPdf(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{-3.0, 3.0}, n), m_z(ctx, "z", Out{}, n) {}

  static auto variants() {
    return std::array{Variant<GaussianPdf>{.name = "kernel", .run = &GaussianPdf::kernel}};
  }

  void kernel(RunState<Space>& s) {
    const Space& exec = s.exec();
    kernels::gaussian_pdf(exec, s.paths(), T(mean), T(sigma), m_x.device(), m_z.device());
  }

  Check verify() const {
    const T* x = m_x.host().data();
    const double norm = sigma * std::sqrt(2.0 * M_PI);
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) {
          const double u = (static_cast<double>(x[i]) - mean) / sigma;
          return std::exp(-0.5 * u * u) / norm;
        },
        // exp multiplies its argument's relative error by |argument| (up to
        // 4.5 here), and device exp may be 2 ulp off: 16 ulp in all.
        elementwise_tolerance<T>(16));
  }

  static Work work(std::size_t n, const Parameters&) {
    const auto w = kernels::gaussian_pdf_work;
    return {w.arrays * sizeof(T) * n, w.flops * n};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 2 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_x, m_z;
};

[[maybe_unused]] const bool gaussian_pdf_registered =
    register_experiment<GaussianPdf, double, float>({
        .name = "gaussian_pdf",
        .summary = "exp(-((x-mu)/sigma)^2/2)/(sigma*sqrt(2pi)) (lab 004's ufunc with exp)",
        .default_sizes = {1'000'000, 10'000'000},
        .default_dtypes = {"float32"},
    });

}  // namespace
}  // namespace portalab
