// z = a·x² + b·y + c, the vector function of the first lab, two ways.
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// One pass, as a compiled loop or a GPU ufunc does it: reads x and y, writes
// z; 3·sizeof(T) bytes and 5 FLOPs per element.
template <class Exec, class T, class X, class Y, class Z>
void vector_poly_fused(const Exec& exec, T a, T b, T c, const X& x, const Y& y,
                       const Z& z) {
  map("portalab::vector_poly_fused", exec,
      KOKKOS_LAMBDA(const Kokkos::Array<T, 2>& v) { return a * v[0] * v[0] + b * v[1] + c; }, z,
      x, y);
}

// Operation by operation into temporaries, as NumPy evaluates a*x**2 + b*y + c
// (reusing its temporaries in place): five kernels, 11·sizeof(T) bytes and
// 5 FLOPs per element.
template <class Exec, class T, class X, class Y, class Tmp, class Z>
void vector_poly_unfused(const Exec& exec, T a, T b, T c, const X& x, const Y& y,
                         const Tmp& t1, const Tmp& t2, const Z& z) {
  const Range<Exec> all(exec, 0, z.extent(0));
  Kokkos::parallel_for("portalab::vector_poly_square", all,
                       KOKKOS_LAMBDA(std::int64_t i) { t1(i) = x(i) * x(i); });
  Kokkos::parallel_for("portalab::vector_poly_scale_a", all,
                       KOKKOS_LAMBDA(std::int64_t i) { t1(i) = a * t1(i); });
  Kokkos::parallel_for("portalab::vector_poly_scale_b", all,
                       KOKKOS_LAMBDA(std::int64_t i) { t2(i) = b * y(i); });
  Kokkos::parallel_for("portalab::vector_poly_add", all,
                       KOKKOS_LAMBDA(std::int64_t i) { t1(i) = t1(i) + t2(i); });
  Kokkos::parallel_for("portalab::vector_poly_add_c", all,
                       KOKKOS_LAMBDA(std::int64_t i) { z(i) = t1(i) + c; });
}

}  // namespace portalab::kernels
