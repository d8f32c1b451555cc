// Determinant (lab 002: 512 float32, first call against warm calls): LU with
// partial pivoting through Kokkos Kernels' gesv (LAPACK or cuSOLVER under it)
// or the vendor getrf called directly (libraries/lapack.hpp); then sign and
// log|det| from U's diagonal and the pivots, which cannot overflow. A singular
// matrix gives sign 0 and log|det| = −inf, reported as such.
#include "experiment/experiment.hpp"
#include "kernels/factorization.hpp"
#include "libraries/lapack.hpp"
#include "experiment/matrix_check.hpp"

#include <KokkosLapack_gesv.hpp>
#include <fmt/format.h>

namespace portalab {
namespace {

template <class Space, class T>
class Det {
 public:
  using Device = Kokkos::Device<Space, typename Space::memory_space>;

  Det(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_a(ctx, "A", In{-1.0, 1.0}, n, n),
        m_summary(ctx, "det", Out{}, 3),
        m_lu(Kokkos::view_alloc(Kokkos::WithoutInitializing, "LU"), n, n),
        m_ipiv("ipiv", n),  // zeroed, untimed: the library is handed no undefined memory
        m_rhs("rhs", n, 1) {}

  static auto variants() {
    return std::array{
        Variant<Det>{.name = "kokkos_kernels",
                     .run = &Det::kokkos_kernels,
                     .missing_library = &libraries::why_no_kokkos_kernels_gesv<Space, T>},
        Variant<Det>{.name = "vendor",
                     .run = &Det::vendor,
                     .missing_library = &libraries::why_no_vendor<Space, T>},
    };
  }

  // gesv factors and solves; the 1-column solve is the price of having no
  // getrf alone in Kokkos Kernels 4.6.
  void kokkos_kernels(RunState<Space>& s) {
    const Space& exec = s.exec();
    Kokkos::deep_copy(exec, m_lu, m_a.device());  // LU overwrites its input
    Kokkos::deep_copy(exec, m_rhs, T(1));
    KokkosLapack::gesv(exec, m_lu, m_rhs, m_ipiv);
    kernels::lu_summary(exec, m_lu, m_ipiv, m_summary.device());
  }
  void vendor(RunState<Space>& s) {
    const Space& exec = s.exec();
    Kokkos::deep_copy(exec, m_lu, m_a.device());
    libraries::getrf(exec, m_lu, m_ipiv, m_workspace);
    kernels::lu_summary(exec, m_lu, m_ipiv, m_summary.device());
  }

  // The factors first: ‖P·A − L·U‖₁ / ‖A‖₁ within 30·n·eps (LAPACK's xGET01),
  // whatever A's condition; then sign and log|det| against the same
  // factors' diagonal and pivots, recomputed here.
  Check verify() const {
    const auto n = static_cast<std::int64_t>(m_lu.extent(0));
    const auto lu_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_lu);
    const auto ipiv_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_ipiv);
    const T* a = m_a.host().data();
    const T* lu = lu_h.data();
    const double residual = worst_column(n, [&](std::int64_t j) {
      std::vector<double> pa(a + j * n, a + (j + 1) * n);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t p = ipiv_h(i) - 1;
        if (p < 0 || p >= n) return std::numeric_limits<double>::infinity();
        std::swap(pa[i], pa[p]);
      }
      double r = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {  // (L·U)(i,j) = Σ_k≤min(i,j) L(i,k)·U(k,j), L(i,i) = 1
        double s = i <= j ? static_cast<double>(lu[j * n + i]) : 0.0;
        for (std::int64_t k = 0; k < std::min(i, j + 1); ++k)
          s += static_cast<double>(lu[k * n + i]) * static_cast<double>(lu[j * n + k]);
        r += std::abs(s - pa[i]);
      }
      return r;
    });
    Check check = residual_check<T>(residual, norm1(a, n), n, "P·A − L·U");
    if (!check.pass) return check;

    double log_abs = 0.0;
    std::int64_t flips = 0, zeros = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      const double u = static_cast<double>(lu[k * n + k]);
      zeros += u == 0.0;
      flips += (u < 0.0) + (ipiv_h(k) != k + 1);
      if (u != 0.0) log_abs += std::log(std::abs(u));
    }
    const double sign = zeros ? 0.0 : (flips % 2 ? -1.0 : 1.0);
    const auto& got = m_summary.host();
    const bool log_matches = zeros ? got(1) == -std::numeric_limits<double>::infinity()
                                   : std::abs(got(1) - log_abs) <=
                                         1e-12 * std::max(1.0, std::abs(log_abs)) * n;
    if (got(0) != sign || !log_matches || got(2) != static_cast<double>(zeros)) {
      check.pass = false;
      check.detail =
          fmt::format("det: got sign {} log|det| {} ({} zero pivots), expected {} {} ({})", got(0),
                      got(1), got(2), sign, log_abs, zeros);
      return check;
    }
    check.detail = zeros ? fmt::format("singular: det = 0 ({} zero pivots in U)", zeros)
                         : fmt::format("det = {:+.0f}·exp({:.6g})", sign, log_abs);
    return check;
  }

  static Work work(std::size_t n, const Parameters&) {
    const double m = static_cast<double>(n);
    return {3.0 * sizeof(T) * m * m, 2.0 / 3.0 * m * m * m};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) {
    return 2 * sizeof(T) * n * n + (sizeof(int) + sizeof(T)) * n + 3 * sizeof(double);
  }

 private:
  Mirrored<T**, Space, Kokkos::LayoutLeft> m_a;
  Mirrored<double*, Space> m_summary;  // sign, log|det|, zero pivots
  Kokkos::View<T**, Kokkos::LayoutLeft, Device> m_lu;
  Kokkos::View<int*, Kokkos::LayoutLeft, Device> m_ipiv;
  Kokkos::View<T**, Kokkos::LayoutLeft, Device> m_rhs;
  libraries::LapackWorkspace<Space, T> m_workspace;
};

[[maybe_unused]] const bool det_registered = register_experiment<Det, double, float>({
    .name = "det",
    .summary = "det(A) as sign and log|det| from LU (lab 002): Kokkos Kernels gesv or vendor getrf",
    .default_sizes = {512},
    .default_dtypes = {"float32"},
    .bound = Bound::compute,
});

}  // namespace
}  // namespace portalab
