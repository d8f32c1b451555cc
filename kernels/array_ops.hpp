// Lab 003's tour of array operations, one kernel per operation as CuPy
// launches them: arithmetic with scalars and arrays, creation routines
// (zeros, ones, identity, arange) and element-wise math (cos, sin, sqrt).
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// x + 10, 10·x, x + y, x − y, x·y, x / y.
template <class Exec, class T, class V, class Out>
void array_arithmetic(const Exec& exec, T scalar, const V& x, const V& y, const Out& plus_scalar,
                      const Out& times_scalar, const Out& sum, const Out& difference,
                      const Out& product, const Out& quotient) {
  const Range<Exec> all(exec, 0, x.extent(0));
  Kokkos::parallel_for("portalab::array_plus_scalar", all,
                       KOKKOS_LAMBDA(std::int64_t i) { plus_scalar(i) = x(i) + scalar; });
  Kokkos::parallel_for("portalab::array_times_scalar", all,
                       KOKKOS_LAMBDA(std::int64_t i) { times_scalar(i) = scalar * x(i); });
  Kokkos::parallel_for("portalab::array_sum", all,
                       KOKKOS_LAMBDA(std::int64_t i) { sum(i) = x(i) + y(i); });
  Kokkos::parallel_for("portalab::array_difference", all,
                       KOKKOS_LAMBDA(std::int64_t i) { difference(i) = x(i) - y(i); });
  Kokkos::parallel_for("portalab::array_product", all,
                       KOKKOS_LAMBDA(std::int64_t i) { product(i) = x(i) * y(i); });
  Kokkos::parallel_for("portalab::array_quotient", all,
                       KOKKOS_LAMBDA(std::int64_t i) { quotient(i) = x(i) / y(i); });
}

// v(i) = start + step·i.
template <class Exec, class T, class V>
void arange(const Exec& exec, T start, T step, const V& v) {
  Kokkos::parallel_for("portalab::arange", Range<Exec>(exec, 0, v.extent(0)),
                       KOKKOS_LAMBDA(std::int64_t i) { v(i) = start + step * static_cast<T>(i); });
}

// m = the identity matrix.
template <class Exec, class M>
void identity(const Exec& exec, const M& m) {
  using T = typename M::non_const_value_type;
  Kokkos::parallel_for(
      "portalab::identity",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>(
          exec, {0, 0}, {std::int64_t(m.extent(0)), std::int64_t(m.extent(1))}),
      KOKKOS_LAMBDA(std::int64_t i, std::int64_t j) { m(i, j) = i == j ? T(1) : T(0); });
}

// zeros, ones, identity and arange(0, n), as the lab creates them.
template <class Exec, class M, class V>
void array_creation(const Exec& exec, const M& zeros, const M& ones, const M& eye,
                    const V& range) {
  using T = typename M::non_const_value_type;
  Kokkos::deep_copy(exec, zeros, T(0));
  Kokkos::deep_copy(exec, ones, T(1));
  identity(exec, eye);
  arange(exec, T(0), T(1), range);
}

// cos, sin and sqrt of v = arange(0, n), v made first as the lab does.
template <class Exec, class V>
void array_math(const Exec& exec, const V& v, const V& cos_v, const V& sin_v, const V& sqrt_v) {
  using T = typename V::non_const_value_type;
  arange(exec, T(0), T(1), v);
  const Range<Exec> all(exec, 0, v.extent(0));
  Kokkos::parallel_for("portalab::array_cos", all,
                       KOKKOS_LAMBDA(std::int64_t i) { cos_v(i) = Kokkos::cos(v(i)); });
  Kokkos::parallel_for("portalab::array_sin", all,
                       KOKKOS_LAMBDA(std::int64_t i) { sin_v(i) = Kokkos::sin(v(i)); });
  Kokkos::parallel_for("portalab::array_sqrt", all,
                       KOKKOS_LAMBDA(std::int64_t i) { sqrt_v(i) = Kokkos::sqrt(v(i)); });
}

}  // namespace portalab::kernels
