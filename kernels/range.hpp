// The 1-D policy every element-wise kernel uses (64-bit indices, so sizes
// beyond 2^31 elements work), and `map`, the loop of the streaming kernels.
#pragma once

#include "paths.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

// Non-temporal stores (stream_store) on x86 host code; nvcc's and hipcc's
// device passes never see the intrinsics.
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && \
    (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__)
#include <immintrin.h>
#define PORTALAB_STREAMING_STORES 1
#else
#define PORTALAB_STREAMING_STORES 0
#endif

// A loop whose trip count is a small constant, unrolled so that arrays it
// indexes stay in registers. Only for device compilers: on a host the
// compiler's own unrolling of constant loops does as well.
// PORTALAB_SIMD: the innermost loop of a register block, whose iterations are
// independent: unrolled on a device, vectorised on a host (OpenMP's simd,
// which GCC honours with -fopenmp or -fopenmp-simd; without it GCC 12 chose
// permutes over broadcasts in the gemm's micro-tile, a slower loop).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define PORTALAB_UNROLL _Pragma("unroll")
#define PORTALAB_SIMD _Pragma("unroll")
#define PORTALAB_SIMD_SUM(acc)
#define PORTALAB_SIMD_LEN(lanes) _Pragma("unroll")
#else
#define PORTALAB_UNROLL
#define PORTALAB_SIMD _Pragma("omp simd")
// A host loop that adds into acc, vectorised in partial sums.
#define PORTALAB_DO_PRAGMA(x) _Pragma(#x)
#define PORTALAB_SIMD_SUM(acc) PORTALAB_DO_PRAGMA(omp simd reduction(+ : acc))
#endif
// PORTALAB_SIMD_LEN(lanes): PORTALAB_SIMD in vectors of `lanes` iterations
// rather than the widest the target allows (see HostDotBlock).
#if !(defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__))
#define PORTALAB_SIMD_LEN(lanes) PORTALAB_DO_PRAGMA(omp simd simdlen(lanes))
#endif
// A host loop whose iterations are independent, left to the compiler's own
// vectoriser (for bodies `omp simd` defeats: see HostMapBlock).
#if defined(__clang__)
#define PORTALAB_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define PORTALAB_IVDEP _Pragma("GCC ivdep")
#else
#define PORTALAB_IVDEP
#endif

namespace portalab::kernels {

template <class Exec>
using Range = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>;

// Elements per thread of `map`. On a GPU one element per thread leaves too
// few bytes in flight for 4-byte types to cover the memory's latency
// (docs/performance.md, "32-bit and 64-bit"). Four per thread, all
// loaded before any is stored, give each thread independent loads. One on a
// host, for views that are not contiguous (contiguous ones take host_map).
template <class Exec>
inline constexpr int elements_per_thread =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible ? 1 : 4;

template <class Exec>
inline constexpr bool is_host_exec_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;

// Host spaces run the streaming kernels a block of contiguous elements per
// work item, the block's loop over raw pointers held in locals and marked
// `omp simd`. Called one index at a time through Kokkos' parallel loop, a
// functor reloads its Views' pointers after every store (the store might
// alias the functor) and its per-element bounds check is control flow: GCC
// vectorised none of those loops (-fopt-info-vec-missed) and the kernels ran
// at half a Numba prange loop's speed. 2048 elements: a block starts on a
// cache line, and per-block overhead is lost in 8-16 KB of traffic; OpenMP's
// static schedule hands each thread a contiguous run of blocks, the same
// pages the fill (first touch) gave it.
inline constexpr std::int64_t host_block = 2048;

// body(lo, hi) over [lo, hi) for the blocks of [0, n).
template <class Body>
struct HostBlocks {
  Body body;
  std::int64_t n;
  void operator()(std::int64_t b) const {
    const std::int64_t lo = b * host_block;
    body(lo, std::min(n, lo + host_block));
  }
};
template <class Body, class Acc>
struct HostBlocksReduce {
  Body body;
  std::int64_t n;
  void operator()(std::int64_t b, Acc& acc) const {
    const std::int64_t lo = b * host_block;
    acc += body(lo, std::min(n, lo + host_block));
  }
};
template <class Exec, class Body>
void for_blocks(const char* label, const Exec& exec, std::int64_t n, const Body& body) {
  Kokkos::parallel_for(label, Range<Exec>(exec, 0, (n + host_block - 1) / host_block),
                       HostBlocks<Body>{body, n});
}
// result += Σ over blocks of body(lo, hi); result a View or a scalar.
template <class Exec, class Body, class Result>
void reduce_blocks(const char* label, const Exec& exec, std::int64_t n, const Body& body,
                   const Result& result) {
  using Acc = decltype(body(std::int64_t(), std::int64_t()));
  Kokkos::parallel_reduce(label, Range<Exec>(exec, 0, (n + host_block - 1) / host_block),
                          HostBlocksReduce<Body, Acc>{body, n}, result);
}

// Whether host loops may read the views through their data pointers.
template <class... V>
bool contiguous(const V&... v) {
  return (v.span_is_contiguous() && ...);
}

// Streaming stores. A store to a line not in the cache first reads the line
// (write-allocate): a kernel that reads one array and writes another moves
// three bytes for every two it means to. A non-temporal store writes the
// line to memory without reading it and without evicting the caches' other
// data, as glibc's memcpy does for large copies and as STREAM's best results
// are compiled. Worth it only where the arrays leave the cache anyway (data
// that fits stays there for the next kernel), and only on CPUs where such
// stores are fast: they win on some CPUs and lose badly on others
// (docs/performance.md, "Streaming stores on the host"). So the framework
// measures both on the
// machine (limits/calibrate.cpp) and passes, per host execution space (the
// thread count changes the answer), the bytes (a loop's arrays together)
// from which its loops stream their stores (HostPolicy::streaming_from).
// Copies are measured apart (copy_streaming_from): a plain copy is memcpy, and
// the C library's own large copies may already skip reading the lines they
// write (`rep movsb` on Intel CPUs with fast strings): streaming may speed
// a triad up and slow a copy on the same machine.
// Whether a host call over `bytes` streams its stores, the threshold `from`
// one of a HostPolicy's.
inline bool host_streams(std::int64_t from, std::int64_t bytes) {
  return PORTALAB_STREAMING_STORES && HostPolicy::reaches(from, bytes);
}
inline constexpr bool streaming_stores_compiled = PORTALAB_STREAMING_STORES;

#if PORTALAB_STREAMING_STORES
#if defined(__AVX512F__)
using StreamVector = __m512i;
inline StreamVector stream_load(const char* s) { return _mm512_loadu_si512(s); }
inline void stream_put(char* d, StreamVector v) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(d), v);
}
#elif defined(__AVX__)
using StreamVector = __m256i;
inline StreamVector stream_load(const char* s) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
}
inline void stream_put(char* d, StreamVector v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(d), v);
}
#else
using StreamVector = __m128i;
inline StreamVector stream_load(const char* s) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
}
inline void stream_put(char* d, StreamVector v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(d), v);
}
#endif
#endif

// dst[0, m) = src[0, m), dst's aligned vectors with non-temporal stores (the
// head before dst's first aligned vector and the tail with plain ones), then
// a fence: streaming stores are weakly ordered, and another thread reads
// dst once the parallel loop ends. Four 4 KB stretches at a time, a block of
// four vectors of each in turn, the next block of each prefetched, as
// glibc's large memcpy does (large_memcpy_4x): four streams of lines keep
// more of the memory's pages busy than one, and a block of each beats one
// vector of each (docs/performance.md, "Streaming stores on the host").
template <class T>
void stream_store(T* dst, const T* src, std::int64_t m) {
  char* d = reinterpret_cast<char*>(dst);
  const char* s = reinterpret_cast<const char*>(src);
  const std::int64_t bytes = m * static_cast<std::int64_t>(sizeof(T));
  std::int64_t k = 0;
#if PORTALAB_STREAMING_STORES
  constexpr std::int64_t V = sizeof(StreamVector), page = 4096, block = 4 * V;
  k = std::min<std::int64_t>(bytes, (V - reinterpret_cast<std::uintptr_t>(d) % V) % V);
  std::memcpy(d, s, k);
  for (; k + 4 * page <= bytes; k += 4 * page)
    for (std::int64_t o = k; o < k + page; o += block) {
      StreamVector v[4][4];
      // __builtin_prefetch (read, all cache levels) rather than
      // _mm_prefetch(..., _MM_HINT_T0), the same instruction: GCC 12 at -O0
      // with ASan and a precompiled header takes xmmintrin.h's inline
      // function, whose hint is then no constant, and refuses it.
      for (int p = 0; p < 4; ++p) {
        __builtin_prefetch(s + o + p * page + block, 0, 3);
        __builtin_prefetch(s + o + p * page + block + 64, 0, 3);
      }
      for (int p = 0; p < 4; ++p)
        for (int q = 0; q < 4; ++q) v[p][q] = stream_load(s + o + p * page + q * V);
      for (int p = 0; p < 4; ++p)
        for (int q = 0; q < 4; ++q) stream_put(d + o + p * page + q * V, v[p][q]);
    }
  for (; k + V <= bytes; k += V) stream_put(d + k, stream_load(s + k));
  _mm_sfence();
#endif
  std::memcpy(d + k, s + k, bytes - k);
}

// Whether out's storage overlaps none of the inputs'.
template <class T, class... P>
bool apart(const T* out, std::int64_t n, const P*... in) {
  const auto lo = reinterpret_cast<std::uintptr_t>(out), hi = lo + n * sizeof(T);
  return ((reinterpret_cast<std::uintptr_t>(in) >= hi ||
           reinterpret_cast<std::uintptr_t>(in) + n * sizeof(T) <= lo) &&
          ...);
}

// The element loop of map (Packed: op takes a Kokkos::Array of the inputs'
// values) and each (op takes them as arguments) on a host. Out may be one of
// the inputs (an operator in place): iteration i reads and writes element i
// alone, so the simd loop carries no dependence. Streaming (out apart from
// the inputs, the arrays beyond the cache): a block's values into a buffer
// in L1, then stream_store; an operator in place has read each line it
// writes, so it gains nothing from streaming.
template <class Op, class T, int N, bool Packed>
struct HostMapBlock {
  Op op;
  T* out;
  Kokkos::Array<const T*, N> in;
  bool streaming;

  void operator()(std::int64_t lo, std::int64_t hi) const {
    if (streaming) {
      alignas(64) T buffer[host_block];
      loop(buffer, lo, hi - lo, std::make_index_sequence<N>{});
      stream_store(out + lo, buffer, hi - lo);
    } else {
      loop(out + lo, lo, hi - lo, std::make_index_sequence<N>{});
    }
  }
  // o[i] = f(the inputs' element lo + i) for i in [0, m).
  template <std::size_t... A>
  void loop(T* const o, std::int64_t lo, std::int64_t m, std::index_sequence<A...>) const {
    const T* const p[N] = {(in[A] + lo)...};
    const Op f = op;
    if constexpr (requires { f.host_loop(o, p, m); }) {
      f.host_loop(o, p, m);  // the operator's own loop (vector math: host_math.hpp)
    } else if constexpr (Packed) {
      // Not `omp simd`: GCC 12 makes the Kokkos::Array built per element an
      // "omp simd array" and then vectorises nothing (-fopt-info-vec-missed:
      // "no vectype for stmt"); the loop ran scalar, float32 as slowly as
      // float64. Iteration i touches element i alone.
      PORTALAB_IVDEP
      for (std::int64_t i = 0; i < m; ++i) o[i] = f(Kokkos::Array<T, N>{p[A][i]...});
    } else {
      PORTALAB_SIMD
      for (std::int64_t i = 0; i < m; ++i) o[i] = f(p[A][i]...);
    }
  }
};

// The host's map and each: one block loop when the views are contiguous and
// of one value type; false when they are not (the caller's general loop).
template <bool Packed, class Exec, class Op, class Out, class... Ins>
bool host_map(const char* label, const Exec& exec, Paths& paths, const Op& op, const Out& out,
              const Ins&... ins) {
  using T = typename Out::non_const_value_type;
  if constexpr (!is_host_exec_v<Exec> || Out::rank != 1 ||
                !(std::is_same_v<T, typename Ins::non_const_value_type> && ...)) {
    return false;
  } else {
    if (!contiguous(out, ins...)) return false;
    constexpr int N = sizeof...(Ins);
    const std::int64_t n = out.extent(0);
    const bool streaming = host_streams(paths.policy().streaming_from,
                                        (1 + N) * n * std::int64_t(sizeof(T))) &&
                           apart(out.data(), n, ins.data()...);
    paths.took(streaming ? Path::streaming_stores : Path::loops);
    for_blocks(label, exec, n,
               HostMapBlock<Op, T, N, Packed>{op, out.data(), {ins.data()...}, streaming});
    return true;
  }
}

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
// On a host, paths' policy says from which size the stores stream.
template <class Exec, class Op, class Out, class In, class... Ins>
void map(const char* label, const Exec& exec, Paths& paths, const Op& op, const Out& out,
         const In& in, const Ins&... ins) {
  static_assert((std::is_same_v<In, Ins> && ...), "map: inputs of one View type");
  if (host_map<true>(label, exec, paths, op, out, in, ins...)) return;
  paths.took(Path::loops);
  constexpr int N = 1 + sizeof...(Ins);
  constexpr int U = elements_per_thread<Exec>;
  const std::int64_t n = out.extent(0);
  const std::int64_t stride = (n + U - 1) / U;
  Kokkos::parallel_for(label, Range<Exec>(exec, 0, stride),
                       MapFunctor<Op, Out, In, N, U>{op, out, {in, ins...}, n, stride});
}

// Bytes of the widest vector register the host compiler targets: what the
// build's -march allows (PORTALAB_HOST_ARCH in CMakeLists.txt), not what the
// CPU has. nvcc preprocesses both passes with the host compiler's macros.
inline constexpr int host_vector_bytes =
#if defined(__AVX512F__)
    64;
#elif defined(__AVX__)
    32;
#else
    16;  // SSE2, NEON
#endif

// 16 bytes of T, loaded and stored as one: the widest access a GPU thread
// makes in one instruction (LDG.128/STG.128), a quarter of the instructions
// of 4-byte accesses. On a host, a vector register's worth.
inline constexpr int chunk_bytes = 16;
template <class T>
struct alignas(chunk_bytes) Chunk {
  static_assert(chunk_bytes % sizeof(T) == 0, "Chunk: an element type that divides 16 bytes");
  static constexpr int size = chunk_bytes / sizeof(T);
  T v[size];
};

// Chunks per work item of the streaming kernels. GPU: four, each of a warp's
// loads coalesced (item i takes chunks i, i + stride, ...) and 64 bytes in
// flight per thread and array, what a thread needs to cover HBM's latency on
// an H100/H200. Host: one; OpenMP hands each thread a contiguous run of items.
// A copy, not a reduction, takes one a thread (CopyChunks says why).
template <class Exec>
inline constexpr int chunks_per_item = is_host_exec_v<Exec> ? 1 : 4;

// Whether every view can be read as Chunks: contiguous, its data aligned to
// 16 bytes. Views Kokkos allocates are (KOKKOS_MEMORY_ALIGNMENT, 64); a
// subview that starts at another element may not be.
template <class... V>
bool chunkable(const V&... v) {
  return (
      (v.span_is_contiguous() && reinterpret_cast<std::uintptr_t>(v.data()) % chunk_bytes == 0) &&
      ...);
}

// Chunk j of a contiguous array at p (chunkable).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION Chunk<std::remove_const_t<T>> load_chunk(T* p, std::int64_t j) {
  return reinterpret_cast<const Chunk<std::remove_const_t<T>>*>(p)[j];
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void store_chunk(T* p, std::int64_t j, const Chunk<T>& c) {
  reinterpret_cast<Chunk<T>*>(p)[j] = c;
}

}  // namespace portalab::kernels
