// Matrix inverse (lab 002: 6000 float32) through the LU factors, solving
// A·X = I: Kokkos Kernels' gesv, or the vendor getrf + getrs called directly
// (libraries/lapack.hpp). A singular A has no inverse and is reported as such.
#include "experiment/experiment.hpp"
#include "kernels/factorization.hpp"
#include "libraries/lapack.hpp"
#include "experiment/matrix_check.hpp"

#include <KokkosLapack_gesv.hpp>
#include <fmt/format.h>

namespace portalab {
namespace {

template <class Space, class T>
class Inverse {
 public:
  Inverse(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_a(ctx, "A", In{-1.0, 1.0}, n, n), m_x(ctx, "Ainv", Out{}, n, n), m_factors(n) {}

  static auto variants() {
    return std::array{
        Variant<Inverse>{.name = "kokkos_kernels",
                         .run = &Inverse::kokkos_kernels,
                         .missing_library = &libraries::why_no_kokkos_kernels_gesv<Space, T>},
        Variant<Inverse>{.name = "vendor",
                         .run = &Inverse::vendor,
                         .missing_library = &libraries::why_no_vendor<Space, T>},
    };
  }

  void kokkos_kernels(RunState<Space>& s) {
    const Space& exec = s.exec();
    auto& f = m_factors;
    Kokkos::deep_copy(exec, f.lu, m_a.device());
    kernels::set_identity(exec, m_x.device());
    KokkosLapack::gesv(exec, f.lu, m_x.device(), f.ipiv);
    kernels::lu_summary(exec, f.lu, f.ipiv, f.summary);  // zero pivots: singular or wrong
  }
  void vendor(RunState<Space>& s) { m_factors.invert(s.exec(), m_a.device(), m_x.device()); }

  // ‖A·X − I‖₁ / (‖A‖₁·‖X‖₁) within 30·n·eps, LAPACK's xGET03 test.
  Check verify() const {
    const auto summary = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                             m_factors.summary);
    return inverse_check(m_a.host().data(), m_x.host().data(),
                         static_cast<std::int64_t>(m_x.host().extent(0)), summary(2));
  }

  static Work work(std::size_t n, const Parameters&) {
    const double m = static_cast<double>(n);
    // getrf 2n³/3, then n triangular solve pairs 2n³.
    return {4.0 * sizeof(T) * m * m, 8.0 / 3.0 * m * m * m};
  }
  static std::size_t footprint(std::size_t n, const Parameters&) {
    return 3 * sizeof(T) * n * n + sizeof(int) * n + 3 * sizeof(double);
  }

 private:
  Mirrored<T**, Space, Kokkos::LayoutLeft> m_a, m_x;
  libraries::LuInverse<Space, T> m_factors;
};

[[maybe_unused]] const bool inverse_registered = register_experiment<Inverse, double, float>({
    .name = "inverse",
    .summary =
        "A^-1 through LU, solving A*X = I (lab 002): Kokkos Kernels gesv or vendor getrf+getrs",
    .default_sizes = {1000},
    .default_dtypes = {"float32"},
    .bound = Bound::compute,
});

}  // namespace
}  // namespace portalab
