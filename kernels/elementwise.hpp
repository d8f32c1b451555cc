// The element-wise kernels of the CuPy and Numba labs (seeds 002, 003, 004),
// and the traffic and arithmetic each one declares per element: experiments
// and benchmarks take their bytes and FLOPs from here, nowhere else.
#pragma once

#include "host_math.hpp"
#include "operators.hpp"
#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace portalab::kernels {

// Minimal work per element: arrays of the element type read or written, and
// floating-point operations (exp, sin, cos, sqrt count as one each).
struct PerElement {
  double arrays;
  double flops;
};
inline constexpr PerElement squared_diff_fused_work{3, 2};    // x, y in; z out
inline constexpr PerElement squared_diff_unfused_work{9, 3};  // three kernels, 3 arrays each
inline constexpr PerElement cube_product_work{3, 3};          // p = x·y; p·p·p
inline constexpr PerElement gaussian_pdf_work{2, 7};          // −, /, ², ·½, exp, σ·c, /
inline constexpr PerElement polar_distance_work{5, 14};  // 2 cos, 2 sin, 4 ·, 2 −, 2 ², +, √

// z = (x − y)² in one pass, as cupy.fuse makes it.
struct SquaredDiff {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const Kokkos::Array<T, 2>& v) const {
    const T d = v[0] - v[1];
    return d * d;
  }
};
template <class Exec, class X, class Y, class Z>
void squared_diff_fused(const Exec& exec, Paths& paths, const X& x, const Y& y, const Z& z) {
  map("portalab::squared_diff_fused", exec, paths, SquaredDiff{}, z, x, y);
}

// z = (x − y)·(x − y) as CuPy evaluates the unfused expression: a kernel per
// operator, so x − y is computed twice into two temporaries, then multiplied.
template <class Exec, class X, class Y, class Tmp, class Z>
void squared_diff_unfused(const Exec& exec, Paths& paths, const X& x, const Y& y, const Tmp& t1,
                          const Tmp& t2, const Z& z) {
  each("portalab::squared_diff_left", exec, paths, op::Subtract{}, t1, x, y);
  each("portalab::squared_diff_right", exec, paths, op::Subtract{}, t2, x, y);
  each("portalab::squared_diff_product", exec, paths, op::Multiply{}, z, t1, t2);
}

// z = (x·y)³, lab 003's ElementwiseKernel.
struct CubeProduct {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const Kokkos::Array<T, 2>& v) const {
    const T p = v[0] * v[1];
    return p * p * p;
  }
};
template <class Exec, class X, class Y, class Z>
void cube_product(const Exec& exec, Paths& paths, const X& x, const Y& y, const Z& z) {
  map("portalab::cube_product", exec, paths, CubeProduct{}, z, x, y);
}

// z = exp(−½((x − μ)/σ)²) / (σ·√(2π)), lab 004's ufunc.
template <class T>
struct GaussianPdf {
  T mean, sigma;
  // Rounded to T once, as the lab precomputes it as a float32 constant.
  T sqrt_2pi = static_cast<T>(2.50662827463100050242);
  KOKKOS_INLINE_FUNCTION T operator()(const Kokkos::Array<T, 1>& v) const {
    const T u = (v[0] - mean) / sigma;
    return T(Kokkos::exp(T(-0.5) * u * u) / (sigma * sqrt_2pi));
  }
  // A host block's loop, o[i] for i < m from p = {x}: whole vectors through
  // libmvec where the build has it, the rest as above, the same operations
  // in the same order: one scalar exp an element, as Numba's loop makes too,
  // is several times slower (docs/performance.md, "Vector math on the host").
  void host_loop(T* o, const T* const* p, std::int64_t m) const {
    std::int64_t i = 0;
    if constexpr (host_vector_math<T>) {
      using M = HostVectorMath<T>;
      const auto mu = M::set(mean), s = M::set(sigma), half = M::set(T(-0.5)),
                 norm = M::set(sigma * sqrt_2pi);
      for (; i + M::width <= m; i += M::width) {
        const auto u = M::div(M::sub(M::load(p[0] + i), mu), s);
        M::store(o + i, M::div(M::exp(M::mul(M::mul(half, u), u)), norm));
      }
    }
    for (; i < m; ++i) o[i] = (*this)(Kokkos::Array<T, 1>{p[0][i]});
  }
};
template <class Exec, class T, class X, class Z>
void gaussian_pdf(const Exec& exec, Paths& paths, T mean, T sigma, const X& x, const Z& z) {
  map("portalab::gaussian_pdf", exec, paths, GaussianPdf<T>{mean, sigma}, z, x);
}

// A device function, callable from any kernel and inlined by the compiler:
// the cartesian coordinates of the point (rho, theta).
template <class T>
KOKKOS_INLINE_FUNCTION Kokkos::pair<T, T> polar_to_cartesian(T rho, T theta) {
  return {rho * Kokkos::cos(theta), rho * Kokkos::sin(theta)};
}

// z = distance between (rho1, theta1) and (rho2, theta2), lab 004.
struct PolarDistance {
  template <class T>
  KOKKOS_INLINE_FUNCTION T operator()(const Kokkos::Array<T, 4>& v) const {
    const auto p1 = polar_to_cartesian(v[0], v[1]);
    const auto p2 = polar_to_cartesian(v[2], v[3]);
    const T dx = p1.first - p2.first, dy = p1.second - p2.second;
    return T(Kokkos::sqrt(dx * dx + dy * dy));
  }
  // A host block's loop, o[i] for i < m from p = {rho1, theta1, rho2, theta2}:
  // whole vectors through libmvec where the build has it, the rest as above.
  template <class T>
  void host_loop(T* o, const T* const* p, std::int64_t m) const {
    std::int64_t i = 0;
    if constexpr (host_vector_math<T>) {
      using M = HostVectorMath<T>;
      for (; i + M::width <= m; i += M::width) {
        const auto r1 = M::load(p[0] + i), t1 = M::load(p[1] + i);
        const auto r2 = M::load(p[2] + i), t2 = M::load(p[3] + i);
        const auto dx = M::sub(M::mul(r1, M::cos(t1)), M::mul(r2, M::cos(t2)));
        const auto dy = M::sub(M::mul(r1, M::sin(t1)), M::mul(r2, M::sin(t2)));
        M::store(o + i, M::sqrt(M::add(M::mul(dx, dx), M::mul(dy, dy))));
      }
    }
    for (; i < m; ++i) o[i] = (*this)(Kokkos::Array<T, 4>{p[0][i], p[1][i], p[2][i], p[3][i]});
  }
};
template <class Exec, class V, class Z>
void polar_distance(const Exec& exec, Paths& paths, const V& rho1, const V& theta1, const V& rho2,
                    const V& theta2, const Z& z) {
  map("portalab::polar_distance", exec, paths, PolarDistance{}, z, rho1, theta1, rho2, theta2);
}

template <class Exec>
using Range2D = Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>, Kokkos::IndexType<std::int64_t>>;

// q = k / f, r = k mod f, in 32 bits where both fit: a GPU has no 64-bit
// divider, and the 32-bit sequence is several times shorter.
KOKKOS_INLINE_FUNCTION void divmod(std::int64_t k, std::int64_t f, std::int64_t& q,
                                   std::int64_t& r) {
  if (((k | f) >> 32) == 0) {
    q = static_cast<std::uint32_t>(k) / static_cast<std::uint32_t>(f);
  } else {
    q = k / f;
  }
  r = k - q * f;
}

// Work items of broadcast_add: runs of G chunks, U runs per item (item i takes
// runs i, i + stride, ...). GPU: one 16-byte chunk per run and four runs, as
// the streaming kernels (chunks_per_item). Host: one run of 1024 chunks
// (16 KB, as host_block's 2048 doubles), so that the division that places a
// run and, with streaming stores, the fence after it are paid once per 16
// KB: with 1 KB runs the fences made streaming slower than plain stores.
template <class Exec>
inline constexpr int broadcast_chunks_per_run = is_host_exec_v<Exec> ? 1024 : 1;

// z = m + vec broadcast, over the storage of contiguous m and z of one
// layout, flattened: storage offset k is (slow, fast) = (k / F, k mod F), F
// the extent of the index that varies fastest (rows in LayoutLeft). vec is
// indexed by the fast index (AlongFast) or the slow one. One division per
// run; within it the indices are counted up.
template <class M, class V, class Z, int U, int G, bool AlongFast, bool Chunked>
struct BroadcastFlat {
  using T = typename Z::non_const_value_type;
  static constexpr int W = Chunk<T>::size;
  static constexpr std::int64_t run = std::int64_t(G) * W;
  M m;
  V vec;
  Z z;
  std::int64_t fast_extent, runs, stride, n;
  bool streaming;  // host runs: through a buffer, then stream_store (range.hpp)

  KOKKOS_INLINE_FUNCTION Chunk<T> load(std::int64_t c) const {
    if constexpr (Chunked) {
      return load_chunk(m.data(), c);
    } else {
      Chunk<T> v;
      for (int e = 0; e < W; ++e) v.v[e] = m.data()[c * W + e];
      return v;
    }
  }
  KOKKOS_INLINE_FUNCTION void store(std::int64_t c, const Chunk<T>& v) const {
    if constexpr (Chunked) {
      store_chunk(z.data(), c, v);
    } else {
      for (int e = 0; e < W; ++e) z.data()[c * W + e] = v.v[e];
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    if constexpr (G > 1) {
      // Host runs: in stretches that stay on one slow index, a loop the
      // compiler vectorises (vec contiguous, or one value).
      for (int u = 0; u < U; ++u) {
        const std::int64_t r = i + u * stride;
        if (r >= runs) continue;
        std::int64_t k = r * run, slow, fast;
        divmod(k, fast_extent, slow, fast);
        alignas(64) T buffer[run];
        for (std::int64_t left = run; left > 0;) {
          const std::int64_t stretch = Kokkos::min(left, fast_extent - fast);
          const T* in = m.data() + k;
          T* out = streaming ? buffer + (run - left) : z.data() + k;
          if constexpr (AlongFast) {
            PORTALAB_SIMD
            for (std::int64_t e = 0; e < stretch; ++e) out[e] = in[e] + vec(fast + e);
          } else {
            const T b = vec(slow);
            PORTALAB_SIMD
            for (std::int64_t e = 0; e < stretch; ++e) out[e] = in[e] + b;
          }
          k += stretch;
          left -= stretch;
          fast = 0;
          ++slow;
        }
        KOKKOS_IF_ON_HOST((if (streaming) stream_store(z.data() + r * run, buffer, run);))
      }
    } else {
      chunks_of(i);
    }
    // The last n mod run elements, one per item.
    const std::int64_t k = runs * run + i;
    if (k < n) {
      std::int64_t slow, fast;
      divmod(k, fast_extent, slow, fast);
      z.data()[k] = m.data()[k] + vec(AlongFast ? fast : slow);
    }
  }

  // GPU runs: one chunk each, all loaded before any is stored, the indices
  // counted up element by element (unrolled: the chunks stay in registers).
  KOKKOS_INLINE_FUNCTION void chunks_of(std::int64_t i) const {
    Chunk<T> v[U][G] = {};
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u) {
      const std::int64_t r = i + u * stride;
      if (r >= runs) continue;
      PORTALAB_UNROLL
      for (int g = 0; g < G; ++g) v[u][g] = load(r * G + g);
    }
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u) {
      const std::int64_t r = i + u * stride;
      if (r >= runs) continue;
      std::int64_t slow, fast;
      divmod(r * run, fast_extent, slow, fast);
      for (int g = 0; g < G; ++g) {
        PORTALAB_UNROLL
        for (int e = 0; e < W; ++e) {
          v[u][g].v[e] += vec(AlongFast ? fast : slow);
          if (++fast == fast_extent) {
            fast = 0;
            ++slow;
          }
        }
      }
    }
    PORTALAB_UNROLL
    for (int u = 0; u < U; ++u) {
      const std::int64_t r = i + u * stride;
      if (r >= runs) continue;
      PORTALAB_UNROLL
      for (int g = 0; g < G; ++g) store(r * G + g, v[u][g]);
    }
  }
};

// Any views: z(i, j) = m(i, j) + vec(ByRow ? j : i), one index pair a thread.
template <class M, class V, class Z, bool ByRow>
struct BroadcastMD {
  M m;
  V vec;
  Z z;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    z(i, j) = m(i, j) + vec(ByRow ? j : i);
  }
};

// z(i, j) = m(i, j) + vec(by_row ? j : i). m and z contiguous, of one layout
// (LayoutLeft or LayoutRight): a 1-D launch over their storage
// (BroadcastFlat): a 2-D MDRangePolicy reached a fraction of the memory's
// bandwidth on a GPU. Other views: the MDRangePolicy.
template <bool ByRow, class Exec, class M, class V, class Z>
void broadcast_add(const char* label, const Exec& exec, Paths& paths, const M& m, const V& vec,
                   const Z& z) {
  using Layout = typename Z::array_layout;
  constexpr bool left = std::is_same_v<Layout, Kokkos::LayoutLeft>;
  constexpr bool flat = (left || std::is_same_v<Layout, Kokkos::LayoutRight>)&&std::is_same_v<
      Layout, typename M::array_layout>;
  const std::int64_t rows = z.extent(0), cols = z.extent(1);
  if constexpr (flat) {
    if (m.span_is_contiguous() && z.span_is_contiguous()) {
      if (rows == 0 || cols == 0) return;
      // LayoutLeft: rows vary fastest, a row vector is indexed by the slow index.
      constexpr bool along_fast = left != ByRow;
      constexpr int U = chunks_per_item<Exec>, G = broadcast_chunks_per_run<Exec>;
      using T = typename Z::non_const_value_type;
      const std::int64_t n = rows * cols;
      const std::int64_t run = std::int64_t(G) * Chunk<T>::size;
      const std::int64_t runs = n / run;
      const std::int64_t stride = (runs + U - 1) / U;
      const std::int64_t items = std::max(stride, n - runs * run);
      const std::int64_t fast_extent = left ? rows : cols;
      const Range<Exec> policy(exec, 0, items);
      const bool streaming = is_host_exec_v<Exec> &&
                             host_streams(paths.policy().streaming_from,
                                          2 * n * std::int64_t(sizeof(T))) &&
                             apart(z.data(), n, m.data());
      paths.took(streaming ? Path::streaming_stores : Path::loops);
      if (chunkable(m, z))
        Kokkos::parallel_for(label, policy,
                             BroadcastFlat<M, V, Z, U, G, along_fast, true>{
                                 m, vec, z, fast_extent, runs, stride, n, streaming});
      else
        Kokkos::parallel_for(label, policy,
                             BroadcastFlat<M, V, Z, U, G, along_fast, false>{
                                 m, vec, z, fast_extent, runs, stride, n, streaming});
      return;
    }
  }
  paths.took(Path::loops);
  Kokkos::parallel_for(label, Range2D<Exec>(exec, {0, 0}, {rows, cols}),
                       BroadcastMD<M, V, Z, ByRow>{m, vec, z});
}

// z(i, j) = m(i, j) + row(j): a row vector broadcast over every row.
template <class Exec, class M, class V, class Z>
void broadcast_add_row(const Exec& exec, Paths& paths, const M& m, const V& row, const Z& z) {
  broadcast_add<true>("portalab::broadcast_add_row", exec, paths, m, row, z);
}

// z(i, j) = m(i, j) + column(i): a column vector broadcast over every column.
template <class Exec, class M, class V, class Z>
void broadcast_add_column(const Exec& exec, Paths& paths, const M& m, const V& column, const Z& z) {
  broadcast_add<false>("portalab::broadcast_add_column", exec, paths, m, column, z);
}

}  // namespace portalab::kernels
