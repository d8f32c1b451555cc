// Matrix inverse (lab 002: 6000 float32) through the LU factors, solving
// A·X = I: Kokkos Kernels' gesv, or the vendor getrf + getrs called directly
// (kernels/lapack.hpp). A singular A has no inverse and is reported as such.
#include "experiment.hpp"
#include "kernels/factorization.hpp"
#include "kernels/lapack.hpp"
#include "library_probe.hpp"
#include "matrix_check.hpp"

#include <KokkosLapack_gesv.hpp>
#include <fmt/format.h>

namespace portalab {
namespace {

template <class Space, class T>
class Inverse {
 public:
  using Device = Kokkos::Device<Space, typename Space::memory_space>;

  Inverse(CaseContext<Space>& ctx, std::size_t n)
      : m_a(ctx, "A", In{-1.0, 1.0}, n, n),
        m_x(ctx, "Ainv", Out{}, n, n),
        m_lu(Kokkos::view_alloc(Kokkos::WithoutInitializing, "LU"), n, n),
        m_ipiv(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ipiv"), n),
        m_summary("lu_summary", 3) {}

  void run(const Space& exec, std::string_view variant) {
    const auto& X = m_x.device();
    Kokkos::deep_copy(exec, m_lu, m_a.device());
    kernels::set_identity(exec, X);
    if (variant == "kokkos_kernels") {
      const kernels::LibraryThreads threads(exec);
      m_recorded.run_recording_first(variant, [&] { KokkosLapack::gesv(exec, m_lu, X, m_ipiv); });
    } else {
      kernels::getrf(exec, m_lu, m_ipiv, m_workspace);
      kernels::getrs(exec, m_lu, m_ipiv, X, m_workspace);
    }
    // Zero pivots, for the check to tell a singular A from a wrong result.
    kernels::lu_summary(exec, m_lu, m_ipiv, m_summary);
  }

  std::string library(std::string_view variant) const {
    if (variant == "kokkos_kernels") return m_recorded(variant);
    return vendor_library(kernels::DenseVendorFor<Space, T>::lapack);
  }

  static std::string not_applicable(const Space&, std::string_view variant, CopyMode,
                                    const Parameters&) {
    return variant == "kokkos_kernels" ? kernels::why_no_kokkos_kernels_gesv<Space, T>()
                                       : kernels::why_no_vendor<Space, T>();
  }

  // ‖A·X − I‖₁ / (‖A‖₁·‖X‖₁) within 30·n·eps, LAPACK's xGET03 test.
  Check verify(std::string_view) const {
    const auto summary = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_summary);
    return inverse_check(m_a.host().data(), m_x.host().data(),
                         static_cast<std::int64_t>(m_x.host().extent(0)), summary(2));
  }

  static Work work(std::size_t n, std::string_view) {
    const double m = static_cast<double>(n);
    // getrf 2n³/3, then n triangular solve pairs 2n³.
    return {4.0 * sizeof(T) * m * m, 8.0 / 3.0 * m * m * m};
  }
  static std::size_t footprint(std::size_t n) {
    return 3 * sizeof(T) * n * n + sizeof(int) * n + 3 * sizeof(double);
  }

 private:
  Mirrored<T**, Space, Kokkos::LayoutLeft> m_a, m_x;
  Kokkos::View<T**, Kokkos::LayoutLeft, Device> m_lu;
  Kokkos::View<int*, Kokkos::LayoutLeft, Device> m_ipiv;
  Kokkos::View<double*, Device> m_summary;  // sign, log|det|, zero pivots
  kernels::LapackWorkspace<Space, T> m_workspace;
  LibraryByVariant m_recorded;
};

[[maybe_unused]] const bool registered = register_experiment<Inverse, double, float>({
    .name = "inverse",
    .summary = "A^-1 through LU, solving A*X = I (lab 002): Kokkos Kernels gesv or vendor getrf+getrs",
    .variants = {"kokkos_kernels", "vendor"},
    .default_sizes = {1000},
    .default_dtypes = {"float32"},
    .bound = "compute",
});

}  // namespace
}  // namespace portalab
