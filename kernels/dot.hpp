// x·y as a Kokkos reduction, accumulated in the result's type.
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace portalab::kernels {

// The terms of dot_reduce: item i adds chunks i, i + stride, ... of x·y,
// each lane of a chunk into its own partial sum (independent FMAs, all loads
// issued first), and one of the last n mod Chunk::size terms if i is below
// their count.
template <class X, class Y, class Acc, int U, bool Chunked>
struct DotChunks {
  using T = typename X::non_const_value_type;
  static constexpr int V = Chunk<T>::size;
  X x;
  Y y;
  std::int64_t chunks, stride, n;

  KOKKOS_INLINE_FUNCTION Chunk<T> load(const T* p, std::int64_t j) const {
    if constexpr (Chunked) {
      return load_chunk(p, j);
    } else {
      Chunk<T> c;
      for (int e = 0; e < V; ++e) c.v[e] = p[j * V + e];
      return c;
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Acc& acc) const {
    // Items from stride on hold a tail term only (there are more tail terms
    // than stride when chunks are few).
    const bool chunked = i < stride;
    Chunk<T> a[U] = {}, b[U] = {};
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u)
      if (chunked && i + u * stride < chunks) {
        a[u] = load(x.data(), i + u * stride);
        b[u] = load(y.data(), i + u * stride);
      }
    Acc part[V] = {};
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u)
      if (chunked && i + u * stride < chunks) {
        PORTALAB_UNROLL
        for (int e = 0; e < V; ++e)
          part[e] += static_cast<Acc>(a[u].v[e]) * static_cast<Acc>(b[u].v[e]);
      }
    const std::int64_t t = chunks * V + i;
    if (t < n) part[0] += static_cast<Acc>(x.data()[t]) * static_cast<Acc>(y.data()[t]);
    Acc sum = part[0];
    PORTALAB_UNROLL
    for (int e = 1; e < V; ++e) sum += part[e];
    acc += sum;
  }
};

// The host's loop: a block's products summed in vector registers of Acc.
// Doubles in four partial sums, each a vector of 32 bytes (faster than the
// compiler's one 64-byte sum under -mprefer-vector-width=512). Or (`chain`)
// in one 16-byte partial sum, each FMA waiting for the one before: a pace the
// hardware prefetchers keep ahead of beyond the cache, but bound by the FMA's
// latency, so slow in the caches and sensitive to where the code sits. Which
// is faster depends on the machine and the thread count: hence calibration's
// choice by space and size (HostPolicy::dot_chain_from), never a rule. Floats keep
// the compiler's loop, whose speed does not depend on the arrays' offsets.
// Figures: docs/performance.md, "The host's dot".
template <class T, class Acc>
struct HostDotBlock {
  const T* x;
  const T* y;
  bool chain = false;
  Acc operator()(std::int64_t lo, std::int64_t hi) const {
    const T* const a = x;
    const T* const b = y;
    std::int64_t i = lo;
    Acc sum = 0;
    if constexpr (std::is_same_v<T, double> && std::is_same_v<Acc, double>) {
      if (chain) {
        Acc part[2] = {};
        for (; i + 2 <= hi; i += 2) {
          PORTALAB_SIMD_LEN(2)
          for (int e = 0; e < 2; ++e) part[e] += a[i + e] * b[i + e];
        }
        sum = part[0] + part[1];
      } else {
        constexpr int lanes = 4, terms = 4 * lanes;
        Acc part[terms] = {};
        for (; i + terms <= hi; i += terms) {
          PORTALAB_SIMD_LEN(lanes)
          for (int e = 0; e < terms; ++e) part[e] += a[i + e] * b[i + e];
        }
        for (int e = 0; e < terms; ++e) sum += part[e];
      }
    }
    PORTALAB_SIMD_SUM(sum)
    for (std::int64_t j = i; j < hi; ++j) sum += static_cast<Acc>(a[j]) * static_cast<Acc>(b[j]);
    return sum;
  }
};

template <class X, class Y, class Acc>
struct DotElements {
  X x;
  Y y;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Acc& acc) const {
    acc += static_cast<Acc>(x(i)) * static_cast<Acc>(y(i));
  }
};

// result() = Σ x(i)·y(i), each product and the sum in result's value type
// (a float64 result keeps a float32 dot of 1e8 terms accurate). Reads 2n
// elements, 2n FLOPs. Into a View, so the reduction does not fence.
// Contiguous x and y are read in 16-byte chunks, several per work item (see
// chunks_per_item): Kokkos' Cuda reduction launches no more threads than the
// device holds at once, each looping over items, so one element per item
// leaves too few loads in flight. Chunks a stride apart, not side by side:
// side by side was fast in a scratch kernel but not as nvcc compiled this
// functor (docs/performance.md, "Work per GPU thread"). Strided views take
// one element per item. A host sums blocks in vector registers (HostDotBlock).
template <class Exec, class X, class Y, class R>
void dot_reduce(const Exec& exec, Paths& paths, const X& x, const Y& y, const R& result) {
  using Acc = typename R::non_const_value_type;
  using T = typename X::non_const_value_type;
  const std::int64_t n = x.extent(0);
  if constexpr (is_host_exec_v<Exec>) {
    if (contiguous(x, y)) {
      // Beyond the cache, where calibration found it faster, the float64
      // dot sums in one chain: from the policy's bytes (both arrays).
      const bool chain = HostPolicy::reaches(paths.policy().dot_chain_from,
                                             2 * n * std::int64_t(sizeof(T)));
      if constexpr (std::is_same_v<T, double> && std::is_same_v<Acc, double>)
        paths.took(chain ? Path::dot_chain : Path::dot_vectors);
      else
        paths.took(Path::loops);
      reduce_blocks("portalab::dot", exec, n, HostDotBlock<T, Acc>{x.data(), y.data(), chain},
                    result);
      return;
    }
  }
  paths.took(Path::loops);
  if (!(x.span_is_contiguous() && y.span_is_contiguous())) {
    Kokkos::parallel_reduce("portalab::dot", Range<Exec>(exec, 0, n), DotElements<X, Y, Acc>{x, y},
                            result);
    return;
  }
  constexpr int U = chunks_per_item<Exec>;
  const std::int64_t chunks = n / Chunk<T>::size;
  const std::int64_t stride = (chunks + U - 1) / U;
  const std::int64_t items = std::max<std::int64_t>(stride, n - chunks * Chunk<T>::size);
  if (chunkable(x, y))
    Kokkos::parallel_reduce("portalab::dot", Range<Exec>(exec, 0, items),
                            DotChunks<X, Y, Acc, U, true>{x, y, chunks, stride, n}, result);
  else
    Kokkos::parallel_reduce("portalab::dot", Range<Exec>(exec, 0, items),
                            DotChunks<X, Y, Acc, U, false>{x, y, chunks, stride, n}, result);
}

}  // namespace portalab::kernels
