// y(i) = 1 + x + x² + … + x^degree by Horner's rule: `degree` dependent
// multiply-adds per element, so the caller sets the arithmetic per byte
// (copy_overlap balances it against the copies, concurrent_small sets how
// long a small kernel runs). One element per thread: a kernel this
// compute-bound needs no more bytes in flight.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// FLOPs per element and degree: one multiply and one add.
inline constexpr double horner_flops_per_degree = 2.0;

// A named functor, not a lambda: it is instantiated from several translation
// units, where nvcc has mishandled extended lambdas (gemm_tiled).
template <class X, class Y>
struct Horner {
  X x;
  Y y;
  std::int64_t degree;

  KOKKOS_FUNCTION void operator()(std::int64_t i) const {
    using T = typename Y::non_const_value_type;
    const T v = x(i);
    T p = 1;
    for (std::int64_t k = 0; k < degree; ++k) p = p * v + T(1);
    y(i) = p;
  }
};

template <class Exec, class X, class Y>
void horner(const Exec& exec, const X& x, const Y& y, std::int64_t degree) {
  Kokkos::parallel_for("portalab::horner",
                       Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(
                           exec, 0, static_cast<std::int64_t>(y.extent(0))),
                       Horner<X, Y>{x, y, degree});
}

// The same sum in closed form, (1 − x^(degree+1)) / (1 − x), for |x| < 1:
// an independent reference costing O(1) per element whatever the degree.
KOKKOS_INLINE_FUNCTION double geometric_sum(double x, std::int64_t degree) {
  return (1.0 - Kokkos::pow(x, static_cast<double>(degree + 1))) / (1.0 - x);
}

}  // namespace portalab::kernels
