// Dot product (lab 002: 1e8 float32): Kokkos Kernels (which in 4.6 never
// calls cuBLAS), the vendor BLAS called directly (cublas<S|D>dot on the
// instance's stream, CBLAS on the host), and a Kokkos reduction accumulating
// in T or in float64.
#include "experiment/experiment.hpp"
#include "kernels/dot.hpp"
#include "libraries/vendor_blas.hpp"
#include "experiment/matrix_check.hpp"

#include <KokkosBlas1_dot.hpp>
#include <fmt/format.h>

namespace portalab {
namespace {

template <class Space, class T>
class Dot {
 public:
  // Zero-mean inputs: partial sums stay small, as in most real dots, so the
  // error grows as √n rather than by stagnation of a float32 sum.
  Dot(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{-1.0, 1.0}, n),
        m_y(ctx, "y", In{-1.0, 1.0}, n),
        m_dot(ctx, "dot", Out{}, 1),
        m_dot64(ctx, "dot_acc64", Out{}, 1) {}

  static auto variants() {
    return std::array{
        Variant<Dot>{.name = "kokkos_kernels", .run = &Dot::kokkos_kernels},
        Variant<Dot>{.name = "vendor",
                     .run = &Dot::vendor,
                     .missing_library = &libraries::why_no_vendor<Space, T>},
        Variant<Dot>{.name = "native", .run = &Dot::native},
        Variant<Dot>{.name = "native_acc64",
                     .run = &Dot::native_acc64,
                     .verify = &Dot::verify_acc64},
    };
  }

  void kokkos_kernels(RunState<Space>& s) {
    KokkosBlas::dot(s.exec(), result(), m_x.device(), m_y.device());
  }
  void vendor(RunState<Space>& s) {
    libraries::vendor_dot(s.exec(), m_x.device(), m_y.device(), result());
  }
  void native(RunState<Space>& s) {
    kernels::dot_reduce(s.exec(), s.paths(), m_x.device(), m_y.device(), result());
  }
  // Accumulated in float64 whatever T is.
  void native_acc64(RunState<Space>& s) {
    kernels::dot_reduce(s.exec(), s.paths(), m_x.device(), m_y.device(),
                        Kokkos::subview(m_dot64.device(), 0));
  }

  Check verify() const { return verify_sum(false); }
  Check verify_acc64() const { return verify_sum(true); }

  static Work work(std::size_t n, const Parameters&) {
    return {2.0 * sizeof(T) * n, 2.0 * static_cast<double>(n)};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) {
    return 2 * sizeof(T) * n + sizeof(T) + 8;
  }

 private:
  auto result() const { return Kokkos::subview(m_dot.device(), 0); }

  // Against a compensated (Neumaier) sum of the exact products in double;
  // the error is relative to Σ|x_i·y_i| and may grow as √n·eps of the type
  // the sum was accumulated in.
  Check verify_sum(bool acc64) const {
    const auto n = static_cast<std::int64_t>(m_x.size());
    const T* x = m_x.host().data();
    const T* y = m_y.host().data();
    double sum = 0.0, compensation = 0.0, magnitude = 0.0;
#if defined(_OPENMP)
#pragma omp parallel
#endif
    {
      double s = 0.0, c = 0.0, m = 0.0;
#if defined(_OPENMP)
#pragma omp for nowait
#endif
      for (std::int64_t i = 0; i < n; ++i) {
        const double p = static_cast<double>(x[i]) * static_cast<double>(y[i]);
        const double t = s + p;
        c += std::abs(s) >= std::abs(p) ? (s - t) + p : (p - t) + s;
        s = t;
        m += std::abs(p);
      }
#if defined(_OPENMP)
#pragma omp critical
#endif
      {
        const double t = sum + s;
        compensation += (std::abs(sum) >= std::abs(s) ? (sum - t) + s : (s - t) + sum) + c;
        sum = t;
        magnitude += m;
      }
    }
    const double expected = sum + compensation;
    const double got = acc64 ? m_dot64.host()(0) : static_cast<double>(m_dot.host()(0));
    Check check;
    check.tolerance = acc64 ? summation_tolerance<double>(n) : summation_tolerance<T>(n);
    check.rel_error = std::isfinite(got)
                          ? std::abs(got - expected) /
                                std::max(magnitude, std::numeric_limits<double>::min())
                          : std::numeric_limits<double>::infinity();
    check.pass = check.rel_error <= check.tolerance;
    if (!check.pass)
      check.detail = fmt::format("got {:.17g}, expected {:.17g} (sum of |x·y| {:.6g})", got,
                                 expected, magnitude);
    return check;
  }

  Mirrored<T*, Space> m_x, m_y, m_dot;
  Mirrored<double*, Space> m_dot64;
};

[[maybe_unused]] const bool dot_registered = register_experiment<Dot, double, float>({
    .name = "dot",
    .summary = "x.y (lab 002): Kokkos Kernels, the vendor BLAS, a Kokkos reduction in T or float64",
    .default_sizes = {1'000'000},
    .default_dtypes = {"float32"},
    .bound = Bound::read,  // two arrays read, nothing written
});

}  // namespace
}  // namespace portalab
