// C = A·B in portable Kokkos: the path a user has where no vendor BLAS is.
// One source for every space: a team stages K-slices of A and B in team
// scratch, each thread accumulates a block of C in registers.
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace portalab::kernels {

// The shape of gemm_tiled's work. A team of TX×TY threads owns a TM×TN tile of
// C and walks K in slices of TK, staged in scratch. Each thread owns SM×SN
// sub-tiles of RM×RN elements; within a sub-tile its rows come in runs of VM
// contiguous rows, run g of thread tx at rows (g·TX + tx)·VM (columns
// likewise with TY, VN), so neighbouring threads read neighbouring scratch.
// Scratch holds A's slice in blocks of AW rows (As[block][k][AW]) and B's in
// blocks of BW columns, each row of a block padded by PAD elements.
// Prefetch: the next slice is loaded into registers while this one is
// multiplied, two scratch buffers (one barrier per slice).
// WarpLayout: a warp of 32 threads is 8 (x) × 4 (y), so its reads of A's and
// B's scratch touch 128 and 64 distinct bytes, each one shared-memory
// wavefront.
template <int TX_, int TY_, int RM_, int RN_, int TK_, int VM_ = 1, int VN_ = 1, int SM_ = 1,
          int SN_ = 1, int AW_ = 0, int BW_ = 0, int PAD_ = 0, bool Prefetch_ = false,
          bool WarpLayout_ = false, int MinBlocks_ = 1>
struct GemmShape {
  static constexpr int TX = TX_, TY = TY_, RM = RM_, RN = RN_, TK = TK_, VM = VM_, VN = VN_;
  static constexpr int SM = SM_, SN = SN_, PAD = PAD_, MinBlocks = MinBlocks_;
  static constexpr bool Prefetch = Prefetch_, WarpLayout = WarpLayout_;
  static constexpr int TM = SM * RM * TX, TN = SN * RN * TY, threads = TX * TY;
  static constexpr int AW = AW_ ? AW_ : TM, BW = BW_ ? BW_ : TN;
  static_assert(RM % VM == 0 && RN % VN == 0, "GemmShape: runs divide the register block");
  static_assert(TM % AW == 0 && TN % BW == 0, "GemmShape: scratch blocks divide the tile");
  static_assert(AW % (RM * TX) == 0 && BW % (RN * TY) == 0,
                "GemmShape: a sub-tile's rows (columns) lie in one scratch block");
  static_assert(!Prefetch || ((TM * TK) % threads == 0 && (TK * TN) % threads == 0),
                "GemmShape: a prefetched slice splits evenly over the team");
  static_assert(!WarpLayout || (TX % 8 == 0 && TY % 4 == 0),
                "GemmShape: a warp layout needs TX a multiple of 8 and TY of 4");
};

// The shapes gemm_tiled uses.
// GPUs: 8×8 per thread in runs of 16 bytes (one LDS.128 per run), K in
// slices of 8, B's scratch rows padded by 16 bytes so the team's stores of a
// B slice hit 32 distinct banks, 2 teams per SM. float32: 256 threads, a
// 128×128 tile (≤ 128 registers a thread). float64: the 8×8 block alone takes
// 128 registers; 128 threads and a 128×64 tile, the fastest of the shapes
// the gemm_native_shape/... benchmarks try (docs/performance.md, "Dense
// linear algebra").
// Host spaces: one thread per team and a 128×128 tile of micro-tiles, each
// one vector register of rows (host_vector_bytes) by 8 columns: 8 accumulator
// registers, A's rows loaded once per k, B's elements broadcast. K in slices
// of 128, each micro-tile's slices of A and B stored contiguously (AW, BW) so
// that the thread streams through them. The tile's size amortises the
// packing: at 64×64 the strided reads of A's columns took much of the time.
template <class Exec, class T, bool Host = is_host_exec_v<Exec>>
struct GemmTiling;
template <class Exec, class T>
struct GemmTiling<Exec, T, false>
    : GemmShape<16, sizeof(T) == 4 ? 16 : 8, 8, 8, 8, 16 / sizeof(T), 16 / sizeof(T), 1, 1, 0, 0,
                16 / sizeof(T), true, true, 2> {};
template <class Exec, class T>
struct GemmTiling<Exec, T, true>
    : GemmShape<1, 1, host_vector_bytes / sizeof(T), 8, 128, 1, 1,
                128 / (host_vector_bytes / sizeof(T)), 16, host_vector_bytes / sizeof(T), 8> {};

// The team kernel of gemm_tiled. A named functor, not a KOKKOS_LAMBDA: an
// extended lambda in this function template, instantiated in several
// translation units by nvcc, launched through a null host stub in one of them
// (segfault in the Cuda gemm test on the H100).
template <class Exec, class AM, class BM, class CM, class S>
struct GemmTileFunctor {
  using T = typename CM::non_const_value_type;
  static constexpr int TX = S::TX, TY = S::TY, RM = S::RM, RN = S::RN, TK = S::TK;
  static constexpr int VM = S::VM, VN = S::VN, SM = S::SM, SN = S::SN;
  static constexpr int TM = S::TM, TN = S::TN, AW = S::AW, BW = S::BW, threads = S::threads;
  static constexpr int BWP = BW + S::PAD;               // a padded row of a B block
  static constexpr int a_slice = TM * TK;               // elements of one A slice
  static constexpr int b_slice = (TN / BW) * TK * BWP;  // of one B slice
  static constexpr int buffers = S::Prefetch ? 2 : 1;
  static constexpr int LA = S::Prefetch ? a_slice / threads : 1;  // prefetched per thread
  static constexpr int LB = S::Prefetch ? TK * TN / threads : 1;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;

  AM A;
  BM B;
  CM C;
  std::int64_t m, n, kdim, tiles_m;

  // A variable, not a function: nvcc allows no call of a host constexpr
  // function from the device without --expt-relaxed-constexpr.
  static constexpr std::size_t scratch_bytes =
      sizeof(T) * buffers * std::size_t(a_slice + b_slice) + 64;  // + alignment slack

  // Scratch offsets of A(i, k) and B(k, j) within a slice.
  KOKKOS_FORCEINLINE_FUNCTION static constexpr int a_at(int i, int k) {
    if constexpr (AW == TM) return k * AW + i;  // one block: no division for the compiler to keep
    return (i / AW) * (TK * AW) + k * AW + i % AW;
  }
  KOKKOS_FORCEINLINE_FUNCTION static constexpr int b_at(int k, int j) {
    if constexpr (BW == TN) return k * BWP + j;
    return (j / BW) * (TK * BWP) + k * BWP + j % BW;
  }

  // Element e of the team's A slice at k0: consecutive e, consecutive rows
  // (coalesced for LayoutLeft). Zero outside A.
  KOKKOS_FORCEINLINE_FUNCTION T a_element(std::int64_t i0, std::int64_t k0, int e) const {
    const int i = e % TM, k = e / TM;
    return (i0 + i < m && k0 + k < kdim) ? A(i0 + i, k0 + k) : T(0);
  }
  // Element e of the B slice: consecutive e, consecutive k of one column.
  KOKKOS_FORCEINLINE_FUNCTION T b_element(std::int64_t j0, std::int64_t k0, int e) const {
    const int k = e % TK, j = e / TK;
    return (k0 + k < kdim && j0 + j < n) ? B(k0 + k, j0 + j) : T(0);
  }

  // V contiguous scratch elements at p, in one access where they are 16 bytes.
  template <int V>
  KOKKOS_FORCEINLINE_FUNCTION static void read_run(const T* p, T* out) {
    if constexpr (V * sizeof(T) == chunk_bytes) {
      const Chunk<T> c = *reinterpret_cast<const Chunk<T>*>(p);
      PORTALAB_UNROLL
      for (int v = 0; v < V; ++v) out[v] = c.v[v];
    } else {
      PORTALAB_UNROLL
      for (int v = 0; v < V; ++v) out[v] = p[v];
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const std::int64_t i0 = (team.league_rank() % tiles_m) * TM;
    const std::int64_t j0 = (team.league_rank() / tiles_m) * TN;
    T* const scratch = static_cast<T*>(
        team.team_scratch(0).get_shmem_aligned(scratch_bytes - 64, 64));
    T* const As = scratch;                      // buffers × a_slice
    T* const Bs = scratch + buffers * a_slice;  // buffers × b_slice
    const int rank = team.team_rank();
    int tx, ty;
    if constexpr (S::WarpLayout) {
      const int lane = rank % 32, warp = rank / 32;
      tx = (warp % (TX / 8)) * 8 + lane % 8;
      ty = (warp / (TX / 8)) * 4 + lane / 8;
    } else {
      tx = rank % TX;
      ty = rank / TX;
    }

    // Column by column (acc[.][.][q][r]): a host compiler vectorises the
    // update along the rows, a[] contiguous, b[q] broadcast.
    T acc[SM][SN][RN][RM];
    for (int s = 0; s < SM; ++s)
      for (int t = 0; t < SN; ++t) PORTALAB_UNROLL
    for (int q = 0; q < RN; ++q) PORTALAB_UNROLL
    for (int r = 0; r < RM; ++r) acc[s][t][q][r] = T(0);

    // The thread's C rows and columns: sub-tile s, run g, element v.
    auto row = [&](int s, int g, int v) { return s * (RM * TX) + (g * TX + tx) * VM + v; };
    auto col = [&](int t, int h, int w) { return t * (RN * TY) + (h * TY + ty) * VN + w; };

    // acc += the slice at As, Bs.
    auto multiply = [&](const T* as, const T* bs) {
      for (int t = 0; t < SN; ++t)
        for (int s = 0; s < SM; ++s) {
          T c[RN][RM];
          PORTALAB_UNROLL
          for (int q = 0; q < RN; ++q) PORTALAB_UNROLL
          for (int r = 0; r < RM; ++r) c[q][r] = acc[s][t][q][r];
          PORTALAB_UNROLL
          for (int k = 0; k < TK; ++k) {
            // Run g is g·TX·VM elements on from run 0, in the same block.
            const T* ap = as + a_at(row(s, 0, 0), k);
            const T* bp = bs + b_at(k, col(t, 0, 0));
            T a[RM], b[RN];
            PORTALAB_UNROLL
            for (int g = 0; g < RM / VM; ++g) read_run<VM>(ap + g * TX * VM, a + g * VM);
            PORTALAB_UNROLL
            for (int h = 0; h < RN / VN; ++h) read_run<VN>(bp + h * TY * VN, b + h * VN);
            PORTALAB_UNROLL
            for (int q = 0; q < RN; ++q) {
              const T bq = b[q];  // a broadcast on a host, the rows one vector
              PORTALAB_SIMD
              for (int r = 0; r < RM; ++r) c[q][r] += a[r] * bq;
            }
          }
          PORTALAB_UNROLL
          for (int q = 0; q < RN; ++q) PORTALAB_UNROLL
          for (int r = 0; r < RM; ++r) acc[s][t][q][r] = c[q][r];
        }
    };

    const std::int64_t slices = (kdim + TK - 1) / TK;
    if constexpr (S::Prefetch) {
      T ra[LA], rb[LB];
      // Bounds are checked only in edge tiles and the last slice: checked
      // loads are a branch each, which put about 250 integer instructions
      // before each slice's loads (SASS, float64 on sm_90).
      const bool whole_tile = i0 + TM <= m && j0 + TN <= n;
      auto fetch = [&](std::int64_t k0) {
        if (whole_tile && k0 + TK <= kdim) {
          PORTALAB_UNROLL
          for (int l = 0; l < LA; ++l) {
            const int e = rank + l * threads;
            ra[l] = A(i0 + e % TM, k0 + e / TM);
          }
          PORTALAB_UNROLL
          for (int l = 0; l < LB; ++l) {
            const int e = rank + l * threads;
            rb[l] = B(k0 + e % TK, j0 + e / TK);
          }
        } else {
          PORTALAB_UNROLL
          for (int l = 0; l < LA; ++l) ra[l] = a_element(i0, k0, rank + l * threads);
          PORTALAB_UNROLL
          for (int l = 0; l < LB; ++l) rb[l] = b_element(j0, k0, rank + l * threads);
        }
      };
      auto put = [&](int buffer) {
        PORTALAB_UNROLL
        for (int l = 0; l < LA; ++l) {
          const int e = rank + l * threads;
          As[buffer * a_slice + a_at(e % TM, e / TM)] = ra[l];
        }
        PORTALAB_UNROLL
        for (int l = 0; l < LB; ++l) {
          const int e = rank + l * threads;
          Bs[buffer * b_slice + b_at(e % TK, e / TK)] = rb[l];
        }
      };
      fetch(0);
      put(0);
      team.team_barrier();
      for (std::int64_t p = 0; p < slices; ++p) {
        const int buffer = static_cast<int>(p & 1);
        if (p + 1 < slices) fetch((p + 1) * TK);  // in flight while this slice is multiplied
        multiply(As + buffer * a_slice, Bs + buffer * b_slice);
        if (p + 1 < slices) put(buffer ^ 1);  // the other buffer: read before the last barrier
        team.team_barrier();
      }
    } else {
      for (std::int64_t p = 0; p < slices; ++p) {
        const std::int64_t k0 = p * TK;
        // Consecutive threads, consecutive elements of A's columns and B's;
        // bounds checked only in edge tiles.
        const bool interior = i0 + TM <= m && j0 + TN <= n && k0 + TK <= kdim;
        for (int ib = 0; ib < TM / AW; ++ib)
          for (int k = 0; k < TK; ++k) {
            T* const to = As + ib * (TK * AW) + k * AW;
            const std::int64_t i1 = i0 + ib * AW, kk = k0 + k;
            if (interior)
              for (int i = rank; i < AW; i += threads) to[i] = A(i1 + i, kk);
            else
              for (int i = rank; i < AW; i += threads)
                to[i] = kk < kdim && i1 + i < m ? A(i1 + i, kk) : T(0);
          }
        for (int jb = 0; jb < TN / BW; ++jb)
          for (int j = 0; j < BW; ++j) {
            T* const to = Bs + jb * (TK * BWP) + j;
            const std::int64_t jj = j0 + jb * BW + j;
            if (interior)
              for (int k = rank; k < TK; k += threads) to[k * BWP] = B(k0 + k, jj);
            else
              for (int k = rank; k < TK; k += threads)
                to[k * BWP] = jj < n && k0 + k < kdim ? B(k0 + k, jj) : T(0);
          }
        team.team_barrier();
        multiply(As, Bs);
        team.team_barrier();  // the slice is overwritten next
      }
    }

    for (int t = 0; t < SN; ++t)
      for (int h = 0; h < RN / VN; ++h)
        for (int w = 0; w < VN; ++w) {
          const std::int64_t j = j0 + col(t, h, w);
          if (j >= n) continue;
          for (int s = 0; s < SM; ++s)
            for (int g = 0; g < RM / VM; ++g)
              for (int v = 0; v < VM; ++v) {
                const std::int64_t i = i0 + row(s, g, v);
                if (i < m) C(i, j) = acc[s][t][h * VN + w][g * VM + v];
              }
        }
  }
};

// C(i,j) = Σ_k A(i,k)·B(k,j) for an m×k A and k×n B; any layout, any sizes
// (edge tiles are padded with zeros in scratch). 2mnk FLOPs. Launches
// without fencing. `Shape` is GemmTiling's unless a test asks for another.
// What limits it on a GPU: no tensor cores (cuBLAS' float64 gemm on Hopper
// uses them, twice the FP64 FMA units' peak), and staging through scratch
// with synchronous loads, where cuBLAS copies asynchronously (cp.async/TMA)
// in several stages; 254 registers a thread leave two warps a scheduler. On
// a host: the vector width the build targets (PORTALAB_HOST_ARCH; SSE2 alone
// falls far behind OpenBLAS), and each team packing its own slices where
// OpenBLAS packs a panel of B once for many blocks of A. Figures:
// docs/performance.md, "Dense linear algebra".
template <class Exec, class AM, class BM, class CM,
          class Shape = GemmTiling<Exec, typename CM::non_const_value_type>>
void gemm_tiled(const Exec& exec, const AM& A, const BM& B, const CM& C, Shape = {}) {
  using Functor = GemmTileFunctor<Exec, AM, BM, CM, Shape>;
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<Shape::threads, Shape::MinBlocks>>;
  const std::int64_t m = C.extent(0), n = C.extent(1), kdim = A.extent(1);
  if (m == 0 || n == 0) return;
  const std::int64_t tiles_m = (m + Shape::TM - 1) / Shape::TM;
  const std::int64_t tiles_n = (n + Shape::TN - 1) / Shape::TN;
  const Policy policy = Policy(exec, static_cast<int>(tiles_m * tiles_n), Shape::threads)
                            .set_scratch_size(0, Kokkos::PerTeam(Functor::scratch_bytes));
  Kokkos::parallel_for("portalab::gemm_tiled", policy, Functor{A, B, C, m, n, kdim, tiles_m});
}

}  // namespace portalab::kernels
