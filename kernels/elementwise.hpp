// The element-wise kernels of the CuPy and Numba labs (seeds 002, 003, 004),
// and the traffic and arithmetic each one declares per element: experiments
// and benchmarks take their bytes and FLOPs from here, nowhere else.
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// Minimal work per element: arrays of the element type read or written, and
// floating-point operations (exp, sin, cos, sqrt count as one each).
struct PerElement {
  double arrays;
  double flops;
};
inline constexpr PerElement squared_diff_fused_work{3, 2};    // x, y in; z out
inline constexpr PerElement squared_diff_unfused_work{9, 3};  // three kernels, 3 arrays each
inline constexpr PerElement cube_product_work{3, 3};          // p = x·y; p·p·p
inline constexpr PerElement gaussian_pdf_work{2, 7};          // −, /, ², ·½, exp, σ·c, /
inline constexpr PerElement polar_distance_work{5, 14};       // 2 cos, 2 sin, 4 ·, 2 −, 2 ², +, √

// z = (x − y)² in one pass, as cupy.fuse makes it.
template <class Exec, class X, class Y, class Z>
void squared_diff_fused(const Exec& exec, const X& x, const Y& y, const Z& z) {
  using T = typename Z::non_const_value_type;
  map("portalab::squared_diff_fused", exec,
      KOKKOS_LAMBDA(const Kokkos::Array<T, 2>& v) {
        const T d = v[0] - v[1];
        return d * d;
      },
      z, x, y);
}

// z = (x − y)·(x − y) as CuPy evaluates the unfused expression: a kernel per
// operator, so x − y is computed twice into two temporaries, then multiplied.
template <class Exec, class X, class Y, class Tmp, class Z>
void squared_diff_unfused(const Exec& exec, const X& x, const Y& y, const Tmp& t1,
                          const Tmp& t2, const Z& z) {
  const Range<Exec> all(exec, 0, z.extent(0));
  Kokkos::parallel_for("portalab::squared_diff_left", all,
                       KOKKOS_LAMBDA(std::int64_t i) { t1(i) = x(i) - y(i); });
  Kokkos::parallel_for("portalab::squared_diff_right", all,
                       KOKKOS_LAMBDA(std::int64_t i) { t2(i) = x(i) - y(i); });
  Kokkos::parallel_for("portalab::squared_diff_product", all,
                       KOKKOS_LAMBDA(std::int64_t i) { z(i) = t1(i) * t2(i); });
}

// z = (x·y)³, lab 003's ElementwiseKernel.
template <class Exec, class X, class Y, class Z>
void cube_product(const Exec& exec, const X& x, const Y& y, const Z& z) {
  using T = typename Z::non_const_value_type;
  map("portalab::cube_product", exec,
      KOKKOS_LAMBDA(const Kokkos::Array<T, 2>& v) {
        const T p = v[0] * v[1];
        return p * p * p;
      },
      z, x, y);
}

// z = exp(−½((x − μ)/σ)²) / (σ·√(2π)), lab 004's ufunc.
template <class Exec, class T, class X, class Z>
void gaussian_pdf(const Exec& exec, T mean, T sigma, const X& x, const Z& z) {
  // Rounded to T once, as the lab precomputes it as a float32 constant.
  const T sqrt_2pi = static_cast<T>(2.50662827463100050242);
  map("portalab::gaussian_pdf", exec,
      KOKKOS_LAMBDA(const Kokkos::Array<T, 1>& v) {
        const T u = (v[0] - mean) / sigma;
        return T(Kokkos::exp(T(-0.5) * u * u) / (sigma * sqrt_2pi));
      },
      z, x);
}

// A device function, callable from any kernel and inlined by the compiler:
// the cartesian coordinates of the point (rho, theta).
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::pair<T, T> polar_to_cartesian(T rho, T theta) {
  return {rho * Kokkos::cos(theta), rho * Kokkos::sin(theta)};
}

// z = distance between (rho1, theta1) and (rho2, theta2), lab 004.
template <class Exec, class V, class Z>
void polar_distance(const Exec& exec, const V& rho1, const V& theta1, const V& rho2,
                    const V& theta2, const Z& z) {
  using T = typename Z::non_const_value_type;
  map("portalab::polar_distance", exec,
      KOKKOS_LAMBDA(const Kokkos::Array<T, 4>& v) {
        const auto p1 = polar_to_cartesian(v[0], v[1]);
        const auto p2 = polar_to_cartesian(v[2], v[3]);
        const T dx = p1.first - p2.first, dy = p1.second - p2.second;
        return T(Kokkos::sqrt(dx * dx + dy * dy));
      },
      z, rho1, theta1, rho2, theta2);
}

template <class Exec>
using Range2D =
    Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;

// z(i, j) = m(i, j) + row(j): a row vector broadcast over every row.
template <class Exec, class M, class V, class Z>
void broadcast_add_row(const Exec& exec, const M& m, const V& row, const Z& z) {
  Kokkos::parallel_for("portalab::broadcast_add_row",
                       Range2D<Exec>(exec, {0, 0}, {std::int64_t(z.extent(0)),
                                                    std::int64_t(z.extent(1))}),
                       KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { z(i, j) = m(i, j) + row(j); });
}

// z(i, j) = m(i, j) + column(i): a column vector broadcast over every column.
template <class Exec, class M, class V, class Z>
void broadcast_add_column(const Exec& exec, const M& m, const V& column, const Z& z) {
  Kokkos::parallel_for("portalab::broadcast_add_column",
                       Range2D<Exec>(exec, {0, 0}, {std::int64_t(z.extent(0)),
                                                    std::int64_t(z.extent(1))}),
                       KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) {
                         z(i, j) = m(i, j) + column(i);
                       });
}

}  // namespace portalab::kernels
