// Householder QR (lab 002: 512, and a 64..2048 sweep): Kokkos Kernels 4.6 has
// none, so through portalab's own dispatch to the vendor LAPACK
// (libraries/lapack.hpp): geqrf then orgqr, cuSOLVER on Cuda, LAPACKE on the host.
#include "experiment/experiment.hpp"
#include "kernels/factorization.hpp"
#include "libraries/lapack.hpp"
#include "experiment/matrix_check.hpp"

#include <fmt/format.h>

namespace portalab {
namespace {

template <class Space, class T>
class Qr {
 public:
  using Device = Kokkos::Device<Space, typename Space::memory_space>;

  Qr(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_a(ctx, "A", In{-1.0, 1.0}, n, n),
        m_q(ctx, "Q", Out{}, n, n),
        m_r(ctx, "R", Out{}, n, n),
        m_tau("tau", n) {}  // zeroed, untimed: the library is handed no undefined memory

  static auto variants() {
    return std::array{Variant<Qr>{.name = "vendor",
                                  .run = &Qr::vendor,
                                  .missing_library = &libraries::why_no_vendor<Space, T>}};
  }

  void vendor(RunState<Space>& s) {
    const Space& exec = s.exec();
    const auto& Q = m_q.device();
    Kokkos::deep_copy(exec, Q, m_a.device());  // factored in place, into Q
    libraries::geqrf(exec, Q, m_tau, m_workspace);
    kernels::upper_triangle(exec, Q, m_r.device());
    libraries::orgqr(exec, Q, m_tau, m_workspace);
  }

  // ‖A − Q·R‖₁ / ‖A‖₁ and ‖QᵀQ − I‖₁, each within 30·n·eps (LAPACK's xQRT01).
  Check verify() const {
    const auto n = static_cast<std::int64_t>(m_q.host().extent(0));
    const T* a = m_a.host().data();
    const T* q = m_q.host().data();
    const T* r = m_r.host().data();
    const double factor = worst_column(n, [&](std::int64_t j) {
      std::vector<double> qr;
      matvec(q, n, r + j * n, qr);
      double s = 0.0;
      for (std::int64_t i = 0; i < n; ++i) s += std::abs(qr[i] - static_cast<double>(a[j * n + i]));
      return s;
    });
    const double orthogonality = worst_column(n, [&](std::int64_t j) {
      double s = 0.0;
      for (std::int64_t i = 0; i < n; ++i) {  // (QᵀQ)(i,j) = q_i · q_j
        double d = 0.0;
        for (std::int64_t k = 0; k < n; ++k)
          d += static_cast<double>(q[i * n + k]) * static_cast<double>(q[j * n + k]);
        s += std::abs(d - (i == j ? 1.0 : 0.0));
      }
      return s;
    });
    Check check = residual_check<T>(factor, norm1(a, n), n, "A − Q·R");
    const Check orth = residual_check<T>(orthogonality, 1.0, n, "QᵀQ − I");
    check.pass = check.pass && orth.pass;
    check.rel_error = std::max(check.rel_error, orth.rel_error);
    check.detail = fmt::format("‖A − QR‖/‖A‖ {:.2e}, ‖QᵀQ − I‖ {:.2e}", factor / norm1(a, n),
                               orthogonality);
    return check;
  }

  static Work work(std::size_t n, const Parameters&) {
    const double m = static_cast<double>(n);
    return {4.0 * sizeof(T) * m * m, 8.0 / 3.0 * m * m * m};  // geqrf 4n³/3, orgqr 4n³/3
  }
  static std::size_t footprint(std::size_t n, const Parameters&) {
    return 3 * sizeof(T) * n * n + sizeof(T) * n;
  }

 private:
  Mirrored<T**, Space, Kokkos::LayoutLeft> m_a, m_q, m_r;
  Kokkos::View<T*, Device> m_tau;
  libraries::LapackWorkspace<Space, T> m_workspace;
};

[[maybe_unused]] const bool qr_registered = register_experiment<Qr, double, float>({
    .name = "qr",
    .summary = "Householder QR, Q and R (lab 002): vendor geqrf+orgqr through libraries/lapack.hpp",
    .default_sizes = {512},
    .default_dtypes = {"float32"},
    .bound = Bound::compute,
});

}  // namespace
}  // namespace portalab
