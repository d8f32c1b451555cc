// x·y as a Kokkos reduction, accumulated in the result's type.
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// result() = Σ x(i)·y(i), each product and the sum in result's value type
// (a float64 result keeps a float32 dot of 1e8 terms accurate). Reads 2n
// elements, 2n FLOPs. Into a View, so the reduction does not fence.
template <class Exec, class X, class Y, class R>
void dot_reduce(const Exec& exec, const X& x, const Y& y, const R& result) {
  using Acc = typename R::non_const_value_type;
  Kokkos::parallel_reduce(
      "portalab::dot", Range<Exec>(exec, 0, x.extent(0)),
      KOKKOS_LAMBDA(std::int64_t i, Acc& acc) {
        acc += static_cast<Acc>(x(i)) * static_cast<Acc>(y(i));
      },
      result);
}

}  // namespace portalab::kernels
