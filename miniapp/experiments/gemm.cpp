// Matrix multiply (labs 001, 002, 003): C = A·B, square n, through Kokkos
// Kernels (the vendor BLAS underneath), a portable tiled Kokkos kernel, and
// the vendor BLAS called directly (cuBLAS on the instance's stream, CBLAS on
// the host) to show what the Kokkos Kernels layer costs.
#include "experiment/experiment.hpp"
#include "kernels/gemm.hpp"
#include "libraries/kokkos_kernels_gemm.hpp"
#include "libraries/vendor_blas.hpp"
#include "experiment/matrix_check.hpp"

#include <fmt/format.h>

namespace portalab {
namespace {

template <class Space, class T>
class Gemm {
 public:
  Gemm(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_a(ctx, "A", In{-1.0, 1.0}, n, n),
        m_b(ctx, "B", In{-1.0, 1.0}, n, n),
        m_c(ctx, "C", Out{}, n, n) {}

  static auto variants() {
    return std::array{
        Variant<Gemm>{.name = "kokkos_kernels", .run = &Gemm::kokkos_kernels},
        Variant<Gemm>{.name = "native", .run = &Gemm::native},
        Variant<Gemm>{.name = "vendor",
                      .run = &Gemm::vendor,
                      .missing_library = &libraries::why_no_vendor<Space, T>},
    };
  }

  void kokkos_kernels(RunState<Space>& s) {
    libraries::kokkos_kernels_gemm<Space, T>(s.exec(), m_a.device(), m_b.device(), m_c.device());
  }
  void native(RunState<Space>& s) {
    kernels::gemm_tiled(s.exec(), m_a.device(), m_b.device(), m_c.device());
  }
  void vendor(RunState<Space>& s) {
    libraries::vendor_gemm(s.exec(), m_a.device(), m_b.device(), m_c.device());
  }

  // Each checked column of C against A·B(:,j) in double; an element's error
  // is relative to (|A|·|B|)(i,j), the scale its rounding errors have.
  Check verify() const {
    const auto n = static_cast<std::int64_t>(m_c.host().extent(0));
    const T* a = m_a.host().data();
    const T* b = m_b.host().data();
    const T* c = m_c.host().data();
    Check check;
    check.tolerance = summation_tolerance<T>(n);
    check.rel_error = worst_column(n, [&](std::int64_t j) {
      std::vector<double> ref, scale;
      matvec(a, n, b + j * n, ref, &scale);
      double worst = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double got = static_cast<double>(c[j * n + i]);
        if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, std::abs(got - ref[i]) /
                                    std::max(scale[i], std::numeric_limits<double>::min()));
      }
      return worst;
    });
    check.pass = check.rel_error <= check.tolerance;
    if (!check.pass)
      check.detail = fmt::format("C = A·B off by {:.2e} of |A|·|B| in {} checked columns",
                                 check.rel_error, check_columns(n).size());
    return check;
  }

  static Work work(std::size_t n, const Parameters&) {
    const double m = static_cast<double>(n);
    return {3.0 * sizeof(T) * m * m, 2.0 * m * m * m};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 3 * sizeof(T) * n * n; }

 private:
  using Matrix = Mirrored<T**, Space, Kokkos::LayoutLeft>;
  Matrix m_a, m_b, m_c;
};

[[maybe_unused]] const bool gemm_registered = register_experiment<Gemm, double, float>({
    .name = "gemm",
    .summary = "C = A*B (labs 001-003): Kokkos Kernels, a tiled Kokkos kernel, the vendor BLAS",
    .default_sizes = {128, 512},
    .default_dtypes = {"float32"},
    .bound = Bound::compute,
});

}  // namespace
}  // namespace portalab
