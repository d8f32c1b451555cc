// The memory-bandwidth and launch yardsticks: copy, triad, an empty kernel.
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// z = x: 2·sizeof(T) bytes per element.
template <class Exec, class X, class Z>
void stream_copy(const Exec& exec, const X& x, const Z& z) {
  Kokkos::parallel_for("portalab::stream_copy", Range<Exec>(exec, 0, z.extent(0)),
                       KOKKOS_LAMBDA(std::int64_t i) { z(i) = x(i); });
}

// a = b + s·c (STREAM triad): 3·sizeof(T) bytes and 2 FLOPs per element.
template <class Exec, class T, class A, class B, class C>
void stream_triad(const Exec& exec, T s, const A& a, const B& b, const C& c) {
  Kokkos::parallel_for("portalab::stream_triad", Range<Exec>(exec, 0, a.extent(0)),
                       KOKKOS_LAMBDA(std::int64_t i) { a(i) = b(i) + s * c(i); });
}

// The sum of x's elements, accumulated in double.
template <class Exec, class X>
double sum(const Exec& exec, const X& x) {
  double total = 0.0;
  Kokkos::parallel_reduce(
      "portalab::sum", Range<Exec>(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, double& acc) { acc += static_cast<double>(x(i)); }, total);
  return total;
}

// A kernel of one iteration that does nothing: what a launch alone costs.
template <class Exec>
void empty_kernel(const Exec& exec) {
  Kokkos::parallel_for("portalab::empty_kernel", Range<Exec>(exec, 0, 1),
                       KOKKOS_LAMBDA(std::int64_t) {});
}

}  // namespace portalab::kernels
