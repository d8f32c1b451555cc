// The 1-D policy every element-wise kernel uses (64-bit indices, so sizes
// beyond 2^31 elements work), and `map`, the loop of the streaming kernels.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace portalab::kernels {

template <class Exec>
using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;

// Elements per thread of `map`. On a GPU one element per thread leaves too
// few bytes in flight for 4-byte types: float32 kernels reached 84% of the
// copy bandwidth on an H100 where float64 reached 100%. Four per thread, all
// loaded before any is stored, give each thread independent loads. One on a
// host, where the compiler vectorises the plain loop.
template <class Exec>
inline constexpr int elements_per_thread =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible ? 1
                                                                                           : 4;

template <class Op, class Out, class In, int N, int U>
struct MapFunctor {
  using T = typename In::non_const_value_type;
  Op op;
  Out out;
  In in[N];
  std::int64_t n, stride;

  // Thread i takes i, i + stride, ...: each warp access stays coalesced.
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    Kokkos::Array<T, N> v[U];
    for (int u = 0; u < U; ++u) {
      const std::int64_t j = i + u * stride;
      if (j < n)
        for (int a = 0; a < N; ++a) v[u][a] = in[a](j);
    }
    for (int u = 0; u < U; ++u) {
      const std::int64_t j = i + u * stride;
      if (j < n) out(j) = op(v[u]);
    }
  }
};

// out(i) = op({ins(i)...}) for every i of out: op takes the inputs' values as
// a Kokkos::Array<T, number of inputs>. The inputs are Views of one type.
template <class Exec, class Op, class Out, class In, class... Ins>
void map(const char* label, const Exec& exec, const Op& op, const Out& out, const In& in,
         const Ins&... ins) {
  static_assert((std::is_same_v<In, Ins> && ...), "map: inputs of one View type");
  constexpr int N = 1 + sizeof...(Ins);
  constexpr int U = elements_per_thread<Exec>;
  const std::int64_t n = out.extent(0);
  const std::int64_t stride = (n + U - 1) / U;
  Kokkos::parallel_for(label, Range<Exec>(exec, 0, stride),
                       MapFunctor<Op, Out, In, N, U>{op, out, {in, ins...}, n, stride});
}

}  // namespace portalab::kernels
