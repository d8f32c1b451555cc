// Small kernels around the LU and QR factorisations: the determinant from
// LU's factors, the identity to solve with, R out of QR's packed result.
#pragma once

#include "operators.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace portalab::kernels {

// From LU factors (P·A = L·U, 1-based pivots): summary(0) = sign of det(A)
// (−1, +1, or 0 when singular), summary(1) = log|det(A)| (−inf when
// singular), summary(2) = the number of zero pivots. det(A) = ±Π U(k,k), the
// sign flipped by each row swap; as a sum of logarithms it cannot overflow.
// One team; reads the diagonal and the pivots, n elements each.
// A named functor, not a KOKKOS_LAMBDA: det and inverse both instantiate it,
// and nvcc's extended lambdas instantiated in several translation units of
// one binary can call a null copy function (see FillInput in mirrored.hpp).
template <class Exec, class LUM, class IV, class SV>
struct LuSummary {
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  LUM LU;
  IV ipiv;
  SV summary;
  std::int64_t n;

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
    double log_abs = 0.0;
    std::int64_t flips = 0, zeros = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](std::int64_t k, double& s) {
          const double u = static_cast<double>(LU(k, k));
          if (u != 0.0) s += Kokkos::log(Kokkos::abs(u));
        },
        log_abs);
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](std::int64_t k, std::int64_t& c) { c += (LU(k, k) < 0) + (ipiv(k) != k + 1); }, flips);
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, n),
        [&](std::int64_t k, std::int64_t& c) { c += LU(k, k) == 0; }, zeros);
    Kokkos::single(Kokkos::PerTeam(team), [&] {
      summary(0) = zeros > 0 ? 0.0 : (flips % 2 ? -1.0 : 1.0);
      summary(1) = zeros > 0 ? -Kokkos::Experimental::infinity_v<double> : log_abs;
      summary(2) = static_cast<double>(zeros);
    });
  }
};

template <class Exec, class LUM, class IV, class SV>
void lu_summary(const Exec& exec, const LUM& LU, const IV& ipiv, const SV& summary) {
  Kokkos::parallel_for("portalab::lu_summary", Kokkos::TeamPolicy<Exec>(exec, 1, Kokkos::AUTO),
                       LuSummary<Exec, LUM, IV, SV>{LU, ipiv, summary,
                                                    static_cast<std::int64_t>(LU.extent(0))});
}

// M = I (square or not).
template <class Exec, class M>
void set_identity(const Exec& exec, const M& m) {
  Kokkos::parallel_for(
      "portalab::set_identity",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>(
          exec, {0, 0}, {m.extent(0), m.extent(1)}),
      SetIdentity<M>{m});
}

// R = the upper triangle of the first R.extent(0) rows of QR, zeros below.
template <class QRM, class RM>
struct UpperTriangle {
  using T = typename RM::non_const_value_type;
  QRM qr;
  RM r;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t j) const {
    r(i, j) = i <= j ? qr(i, j) : T(0);
  }
};
template <class Exec, class QRM, class RM>
void upper_triangle(const Exec& exec, const QRM& qr, const RM& r) {
  Kokkos::parallel_for(
      "portalab::upper_triangle",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2, Kokkos::Iterate::Left, Kokkos::Iterate::Left>>(
          exec, {0, 0}, {r.extent(0), r.extent(1)}),
      UpperTriangle<QRM, RM>{qr, r});
}

}  // namespace portalab::kernels
