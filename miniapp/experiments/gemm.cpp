// Matrix multiply (labs 001, 002, 003): C = A·B, square n, through Kokkos
// Kernels (the vendor BLAS underneath), a portable tiled Kokkos kernel, and
// the vendor BLAS called directly (cuBLAS on the instance's stream, CBLAS on
// the host) to show what the Kokkos Kernels layer costs.
#include "experiment.hpp"
#include "kernels/gemm.hpp"
#include "kernels/vendor_blas.hpp"
#include "library_probe.hpp"
#include "matrix_check.hpp"

#include <KokkosBlas3_gemm.hpp>
#include <fmt/format.h>

namespace portalab {
namespace {

template <class Space, class T>
class Gemm {
 public:
  Gemm(CaseContext<Space>& ctx, std::size_t n)
      : m_a(ctx, "A", In{-1.0, 1.0}, n, n),
        m_b(ctx, "B", In{-1.0, 1.0}, n, n),
        m_c(ctx, "C", Out{}, n, n) {}

  void run(const Space& exec, std::string_view variant) {
    const auto& A = m_a.device();
    const auto& B = m_b.device();
    const auto& C = m_c.device();
    if (variant == "kokkos_kernels") {
      const kernels::LibraryThreads threads(exec);
      m_recorded.run_recording_first(
          variant, [&] { KokkosBlas::gemm(exec, "N", "N", T(1), A, B, T(0), C); });
    } else if (variant == "native")
      kernels::gemm_tiled(exec, A, B, C);
    else
      kernels::vendor_gemm(exec, A, B, C);
  }

  static std::string not_applicable(const Space&, std::string_view variant, CopyMode,
                                    const Parameters&) {
    return variant == "vendor" ? kernels::why_no_vendor<Space, T>() : std::string();
  }

  std::string library(std::string_view variant) const {
    if (variant == "kokkos_kernels") return m_recorded(variant);
    if (variant == "native") return "native";
    return vendor_library(kernels::DenseVendorFor<Space, T>::blas);
  }

  // Each checked column of C against A·B(:,j) in double; an element's error
  // is relative to (|A|·|B|)(i,j), the scale its rounding errors have.
  Check verify(std::string_view) const {
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

  static Work work(std::size_t n, std::string_view) {
    const double m = static_cast<double>(n);
    return {3.0 * sizeof(T) * m * m, 2.0 * m * m * m};
  }
  static std::size_t footprint(std::size_t n) { return 3 * sizeof(T) * n * n; }

 private:
  using Matrix = Mirrored<T**, Space, Kokkos::LayoutLeft>;
  Matrix m_a, m_b, m_c;
  LibraryByVariant m_recorded;
};

[[maybe_unused]] const bool registered = register_experiment<Gemm, double, float>({
    .name = "gemm",
    .summary = "C = A*B (labs 001-003): Kokkos Kernels, a tiled Kokkos kernel, the vendor BLAS",
    .variants = {"kokkos_kernels", "native", "vendor"},
    .default_sizes = {128, 1024},
    .default_dtypes = {"float32"},
    .bound = "compute",
});

}  // namespace
}  // namespace portalab
