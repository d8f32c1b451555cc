// Lab 003's tour of array operations, one kernel per operation as CuPy
// launches them: arithmetic with scalars and arrays, creation routines
// (zeros, ones, identity, arange) and element-wise math (cos, sin, sqrt).
#pragma once

#include "operators.hpp"
#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// x + 10, 10·x, x + y, x − y, x·y, x / y.
template <class Exec, class T, class V, class Out>
void array_arithmetic(const Exec& exec, Paths& paths, T scalar, const V& x, const V& y,
                      const Out& plus_scalar, const Out& times_scalar, const Out& sum,
                      const Out& difference, const Out& product, const Out& quotient) {
  each("portalab::array_plus_scalar", exec, paths, op::AddScalar<T>{scalar}, plus_scalar, x);
  each("portalab::array_times_scalar", exec, paths, op::Scale<T>{scalar}, times_scalar, x);
  each("portalab::array_sum", exec, paths, op::Add{}, sum, x, y);
  each("portalab::array_difference", exec, paths, op::Subtract{}, difference, x, y);
  each("portalab::array_product", exec, paths, op::Multiply{}, product, x, y);
  each("portalab::array_quotient", exec, paths, op::Divide{}, quotient, x, y);
}

// v(i) = start + step·i.
template <class V, class T>
struct Arange {
  V v;
  T start, step;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    v(i) = start + step * static_cast<T>(i);
  }
};
template <class Exec, class T, class V>
void arange(const Exec& exec, T start, T step, const V& v) {
  Kokkos::parallel_for("portalab::arange", Range<Exec>(exec, 0, v.extent(0)),
                       Arange<V, T>{v, start, step});
}

// m = the identity matrix.
template <class Exec, class M>
void identity(const Exec& exec, const M& m) {
  Kokkos::parallel_for(
      "portalab::identity",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>(
          exec, {0, 0}, {std::int64_t(m.extent(0)), std::int64_t(m.extent(1))}),
      SetIdentity<M>{m});
}

// zeros, ones, identity and arange(0, n), as the lab creates them.
template <class Exec, class M, class V>
void array_creation(const Exec& exec, const M& zeros, const M& ones, const M& eye, const V& range) {
  using T = typename M::non_const_value_type;
  Kokkos::deep_copy(exec, zeros, T(0));
  Kokkos::deep_copy(exec, ones, T(1));
  identity(exec, eye);
  arange(exec, T(0), T(1), range);
}

// cos, sin and sqrt of v = arange(0, n), v made first as the lab does.
template <class Exec, class V>
void array_math(const Exec& exec, Paths& paths, const V& v, const V& cos_v, const V& sin_v,
                const V& sqrt_v) {
  using T = typename V::non_const_value_type;
  arange(exec, T(0), T(1), v);
  each("portalab::array_cos", exec, paths, op::Cos{}, cos_v, v);
  each("portalab::array_sin", exec, paths, op::Sin{}, sin_v, v);
  each("portalab::array_sqrt", exec, paths, op::Sqrt{}, sqrt_v, v);
}

}  // namespace portalab::kernels
