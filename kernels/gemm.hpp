// C = A·B in portable Kokkos: the path a user has where no vendor BLAS is.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

namespace portalab::kernels {

// How a team tiles C: TX×TY threads, each accumulating an RM×RN block in
// registers, so a team owns a (RM·TX)×(RN·TY) tile of C and walks K in steps
// of TK through scratch. GPUs: 256 threads, register blocks as large as the
// register file allows (8×8 floats, 4×4 doubles, which take two registers
// each). Host spaces: one thread per team, the tile sized for the L1 cache.
template <class Exec, class T>
struct GemmTiling {
  static constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  static constexpr int TX = host ? 1 : 16;
  static constexpr int TY = host ? 1 : 16;
  static constexpr int RM = host ? 8 : (sizeof(T) == 4 ? 8 : 4);
  static constexpr int RN = host ? 8 : (sizeof(T) == 4 ? 8 : 4);
  static constexpr int TK = host ? 64 : (sizeof(T) == 4 ? 8 : 16);
  static constexpr int TM = RM * TX;
  static constexpr int TN = RN * TY;
  static constexpr int threads = TX * TY;
};

// The team kernel of gemm_tiled. A named functor, not a KOKKOS_LAMBDA: an
// extended lambda in this function template, instantiated in several
// translation units by nvcc, launched through a null host stub in one of them
// (segfault in the Cuda gemm test on the H100).
template <class Exec, class AM, class BM, class CM, class Tiling>
struct GemmTileFunctor {
  using T = typename CM::non_const_value_type;
  static constexpr int TX = Tiling::TX, RM = Tiling::RM, RN = Tiling::RN, TK = Tiling::TK;
  static constexpr int TM = Tiling::TM, TN = Tiling::TN, threads = Tiling::threads;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  using Scratch = Kokkos::View<T**, Kokkos::LayoutRight, typename Exec::scratch_memory_space,
                               Kokkos::MemoryUnmanaged>;
  AM A;
  BM B;
  CM C;
  std::int64_t m, n, kdim, tiles_m;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    const std::int64_t i0 = (team.league_rank() % tiles_m) * TM;
    const std::int64_t j0 = (team.league_rank() / tiles_m) * TN;
    Scratch As(team.team_scratch(0), TK, TM);  // As(k, i) = A(i0 + i, k0 + k)
    Scratch Bs(team.team_scratch(0), TK, TN);  // Bs(k, j) = B(k0 + k, j0 + j)
    const int rank = team.team_rank();
    const int tx = rank % TX, ty = rank / TX;
    T acc[RM][RN] = {};
    for (std::int64_t k0 = 0; k0 < kdim; k0 += TK) {
      // Consecutive ranks load consecutive rows of A's column (coalesced
      // for LayoutLeft) and consecutive k of B's column.
      for (int e = rank; e < TM * TK; e += threads) {
        const int i = e % TM, k = e / TM;
        As(k, i) = (i0 + i < m && k0 + k < kdim) ? A(i0 + i, k0 + k) : T(0);
      }
      for (int e = rank; e < TK * TN; e += threads) {
        const int k = e % TK, j = e / TK;
        Bs(k, j) = (k0 + k < kdim && j0 + j < n) ? B(k0 + k, j0 + j) : T(0);
      }
      team.team_barrier();
      for (int k = 0; k < TK; ++k) {
        T a[RM], b[RN];
        for (int r = 0; r < RM; ++r) a[r] = As(k, tx + TX * r);
        for (int c = 0; c < RN; ++c) b[c] = Bs(k, ty + Tiling::TY * c);
        for (int r = 0; r < RM; ++r)
          for (int c = 0; c < RN; ++c) acc[r][c] += a[r] * b[c];
      }
      team.team_barrier();  // the tiles are overwritten next step
    }
    for (int c = 0; c < RN; ++c) {
      const std::int64_t j = j0 + ty + Tiling::TY * c;
      if (j >= n) continue;
      for (int r = 0; r < RM; ++r) {
        const std::int64_t i = i0 + tx + TX * r;
        if (i < m) C(i, j) = acc[r][c];
      }
    }
  }
};

// C(i,j) = Σ_k A(i,k)·B(k,j) for an m×k A and k×n B; any layout, any sizes
// (edge tiles are padded with zeros in scratch). 2mnk FLOPs. Launches
// without fencing. Thread (tx, ty) owns rows tx + TX·r and columns ty + TY·c
// of its team's tile: neighbouring threads read neighbouring scratch words
// and, for column-major C, write neighbouring addresses.
// `Tiling` is GemmTiling's unless a test asks for another shape.
template <class Exec, class AM, class BM, class CM,
          class Tiling = GemmTiling<Exec, typename CM::non_const_value_type>>
void gemm_tiled(const Exec& exec, const AM& A, const BM& B, const CM& C, Tiling = {}) {
  using T = typename CM::non_const_value_type;
  constexpr int TK = Tiling::TK, TM = Tiling::TM, TN = Tiling::TN, threads = Tiling::threads;
  using Policy = Kokkos::TeamPolicy<Exec, Kokkos::LaunchBounds<threads, 1>>;
  using Scratch = Kokkos::View<T**, Kokkos::LayoutRight, typename Exec::scratch_memory_space,
                               Kokkos::MemoryUnmanaged>;

  const std::int64_t m = C.extent(0), n = C.extent(1), kdim = A.extent(1);
  if (m == 0 || n == 0) return;
  const std::int64_t tiles_m = (m + TM - 1) / TM, tiles_n = (n + TN - 1) / TN;
  const std::size_t scratch = Scratch::shmem_size(TK, TM) + Scratch::shmem_size(TK, TN);
  const Policy policy = Policy(exec, static_cast<int>(tiles_m * tiles_n), threads)
                            .set_scratch_size(0, Kokkos::PerTeam(scratch));

  Kokkos::parallel_for("portalab::gemm_tiled", policy,
                       GemmTileFunctor<Exec, AM, BM, CM, Tiling>{A, B, C, m, n, kdim, tiles_m});
}

}  // namespace portalab::kernels
