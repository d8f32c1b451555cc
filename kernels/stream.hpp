// The memory-bandwidth and launch yardsticks: copy, triad, an empty kernel.
#pragma once

#include "operators.hpp"
#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace portalab::kernels {

// The copy of stream_copy: item i moves chunks i, i + stride, ... (all
// loaded, then all stored), and items below the tail's length move one of
// the last n mod Chunk::size elements each. stream_copy gives it one chunk
// an item (stride = chunks): on a GPU so it moves as fast as cudaMemcpy,
// more than with several chunks an item (docs/performance.md, "Work per GPU
// thread").
template <class X, class Z, int U>
struct CopyChunks {
  using T = typename Z::non_const_value_type;
  X x;
  Z z;
  std::int64_t chunks, stride, n;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    Chunk<T> v[U];
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u)
      if (i + u * stride < chunks) v[u] = load_chunk(x.data(), i + u * stride);
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u)
      if (i + u * stride < chunks) store_chunk(z.data(), i + u * stride, v[u]);
    const std::int64_t t = chunks * Chunk<T>::size + i;
    if (t < n) z.data()[t] = x.data()[t];
  }
};

// The copy of views that cannot be read as chunks: U elements per item,
// i, i + stride, ..., as map does.
template <class X, class Z, int U>
struct CopyElements {
  using T = typename Z::non_const_value_type;
  X x;
  Z z;
  std::int64_t n, stride;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    T v[U];
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u) v[u] = i + u * stride < n ? x(i + u * stride) : T();
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u)
      if (i + u * stride < n) z(i + u * stride) = v[u];
  }
};

// z = x: 2·sizeof(T) bytes per element, 16 bytes per access
// (chunks_per_item's comment says why); views that cannot be read as chunks
// (a strided or misaligned subview) are copied element by element.
// A host's copy: each thread its contiguous share, as a compiler makes a
// copy loop (LLVM turns Numba's prange copy into memcpy). Beyond the cache,
// where calibration found it faster (HostPolicy::copy_streaming_from), with
// streaming stores, so that the copy reads and writes each byte once
// instead of also reading every line it writes (docs/performance.md,
// "Streaming stores on the host").
template <class T>
struct HostCopyParts {
  const T* x;
  T* z;
  std::int64_t n, parts;
  bool streaming;
  void operator()(std::int64_t p) const {
    const std::int64_t lo = n * p / parts, hi = n * (p + 1) / parts;
    if (hi <= lo) return;
    if (streaming)
      stream_store(z + lo, x + lo, hi - lo);
    else
      std::memcpy(z + lo, x + lo, (hi - lo) * sizeof(T));
  }
};
template <class Exec, class X, class Z>
bool host_copy(const char* label, const Exec& exec, Paths& paths, const X& x, const Z& z) {
  using T = typename Z::non_const_value_type;
  if constexpr (!is_host_exec_v<Exec> || Z::rank != 1 ||
                !std::is_same_v<T, typename X::non_const_value_type>) {
    return false;
  } else {
    if (!contiguous(x, z)) return false;
    const std::int64_t parts = exec.concurrency(), n = z.extent(0);
    const bool streaming = host_streams(paths.policy().copy_streaming_from,
                                        2 * n * std::int64_t(sizeof(T))) &&
                           apart(z.data(), n, x.data());
    paths.took(streaming ? Path::streaming_stores : Path::libc_copy);
    Kokkos::parallel_for(label, Range<Exec>(exec, 0, parts),
                         HostCopyParts<T>{x.data(), z.data(), n, parts, streaming});
    return true;
  }
}

// On a host, contiguous views take host_copy.
template <class Exec, class X, class Z>
void stream_copy(const Exec& exec, Paths& paths, const X& x, const Z& z) {
  using T = typename Z::non_const_value_type;
  if (host_copy("portalab::stream_copy", exec, paths, x, z)) return;
  paths.took(Path::loops);
  const std::int64_t n = z.extent(0);
  if (!chunkable(x, z)) {
    constexpr int U = elements_per_thread<Exec>;
    const std::int64_t stride = (n + U - 1) / U;
    Kokkos::parallel_for("portalab::stream_copy", Range<Exec>(exec, 0, stride),
                         CopyElements<X, Z, U>{x, z, n, stride});
    return;
  }
  constexpr int U = 1;  // see CopyChunks
  const std::int64_t chunks = n / Chunk<T>::size;
  const std::int64_t stride = (chunks + U - 1) / U;
  const std::int64_t items = std::max<std::int64_t>(stride, n - chunks * Chunk<T>::size);
  Kokkos::parallel_for("portalab::stream_copy", Range<Exec>(exec, 0, items),
                       CopyChunks<X, Z, U>{x, z, chunks, stride, n});
}

// z = x one element per thread, as BabelStream's Kokkos port copies: on a GPU
// too few bytes in flight per thread to reach the memory's bandwidth in
// float32, closer in float64. On a host the
// same loop a compiler makes of it (host_copy).
template <class Exec, class X, class Z>
void stream_copy_naive(const Exec& exec, Paths& paths, const X& x, const Z& z) {
  if (host_copy("portalab::stream_copy_naive", exec, paths, x, z)) return;
  each("portalab::stream_copy_naive", exec, paths, op::Copy{}, z, x);
}

// a = b + s·c (STREAM triad): 3·sizeof(T) bytes and 2 FLOPs per element.
template <class Exec, class T, class A, class B, class C>
void stream_triad(const Exec& exec, Paths& paths, T s, const A& a, const B& b, const C& c) {
  each("portalab::stream_triad", exec, paths, op::Triad<T>{s}, a, b, c);
}

// The sum of x's elements, accumulated in double.
template <class X>
struct SumAsDouble {
  X x;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double& acc) const {
    acc += static_cast<double>(x(i));
  }
};
template <class Exec, class X>
double sum(const Exec& exec, const X& x) {
  double total = 0.0;
  Kokkos::parallel_reduce("portalab::sum", Range<Exec>(exec, 0, x.extent(0)), SumAsDouble<X>{x},
                          total);
  return total;
}

// x read `passes` times in one launch, the sum into `result`: item i reads
// elements i mod n, then `step` further on each pass (mod n), so that each
// pass reads every element once per n items and no load is the same as the
// last. A working set that one call reads in less time than a launch takes
// (a GPU's cache levels) is timed at the cache's speed, not the launch's.
template <class X>
struct RepeatedRead {
  X x;
  std::int64_t n, step;
  int passes;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double& acc) const {
    std::int64_t j = i % n;
    for (int p = 0; p < passes; ++p) {
      acc += static_cast<double>(x(j));
      j += step;
      if (j >= n) j -= n;
    }
  }
};
template <class Exec, class X, class R>
void repeated_read(const Exec& exec, const X& x, std::int64_t items, int passes, const R& result) {
  const auto n = static_cast<std::int64_t>(x.extent(0));
  Kokkos::parallel_reduce("portalab::repeated_read", Range<Exec>(exec, 0, items),
                          RepeatedRead<X>{x, n, n / 2 + 1 < n ? n / 2 + 1 : 0, passes}, result);
}

// A kernel of one iteration that does nothing: what a launch alone costs.
struct Empty {
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t) const {}
};
template <class Exec>
void empty_kernel(const Exec& exec) {
  Kokkos::parallel_for("portalab::empty_kernel", Range<Exec>(exec, 0, 1), Empty{});
}

}  // namespace portalab::kernels
