// z = a·x² + b·y + c, the vector function of the first lab, two ways.
#pragma once

#include "operators.hpp"
#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// One pass, as a compiled loop or a GPU ufunc does it: reads x and y, writes
// z; 3·sizeof(T) bytes and 5 FLOPs per element.
template <class T>
struct VectorPoly {
  T a, b, c;
  KOKKOS_INLINE_FUNCTION T operator()(const Kokkos::Array<T, 2>& v) const {
    return a * v[0] * v[0] + b * v[1] + c;
  }
};
template <class Exec, class T, class X, class Y, class Z>
void vector_poly_fused(const Exec& exec, Paths& paths, T a, T b, T c, const X& x, const Y& y,
                       const Z& z) {
  map("portalab::vector_poly_fused", exec, paths, VectorPoly<T>{a, b, c}, z, x, y);
}

// Operation by operation into temporaries, as NumPy evaluates a*x**2 + b*y + c
// (reusing its temporaries in place): five kernels, 11·sizeof(T) bytes and
// 5 FLOPs per element.
template <class Exec, class T, class X, class Y, class Tmp, class Z>
void vector_poly_unfused(const Exec& exec, Paths& paths, T a, T b, T c, const X& x, const Y& y,
                         const Tmp& t1, const Tmp& t2, const Z& z) {
  each("portalab::vector_poly_square", exec, paths, op::Square{}, t1, x);
  each("portalab::vector_poly_scale_a", exec, paths, op::Scale<T>{a}, t1, t1);
  each("portalab::vector_poly_scale_b", exec, paths, op::Scale<T>{b}, t2, y);
  each("portalab::vector_poly_add", exec, paths, op::Add{}, t1, t1, t2);
  each("portalab::vector_poly_add_c", exec, paths, op::AddScalar<T>{c}, z, t1);
}

}  // namespace portalab::kernels
