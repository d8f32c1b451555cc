#include "limits/compare.hpp"

#include <string>

namespace portalab {

void compare_with_limits(Result& r, const SpaceLimits& lim, const Calibration& cal, Bound bound) {
  r.limit = {bound, 0.0, r.copies};
  const std::string mode(to_string(r.copies));
  // Each rank has its own memory, device and copy engines.
  const double per_rank = r.ranks;
  switch (bound) {
    case Bound::transfer:
      // Host<->device both ways at once: at best both directions' calibrated rates.
      r.limit.value = per_rank *
                      (lim.transfer_gbps("h2d_" + mode) + lim.transfer_gbps("d2h_" + mode));
      break;
    case Bound::compute:
      r.limit.value = per_rank *
                      (lim.gemm_gflops.count(r.dtype) ? lim.gemm_gflops.at(r.dtype) : 0.0);
      break;
    case Bound::memory:
      r.limit.value = per_rank * lim.memory_gbps();
      r.limit.beyond_cache = lim.beyond_cache(r.bytes / per_rank);
      break;
    case Bound::read:
      r.limit.value = per_rank * lim.read_limit_gbps();
      r.limit.beyond_cache = lim.beyond_cache(r.bytes / per_rank);
      break;
    case Bound::peer: r.limit.value = cal.links.peer_gbps(r.ranks, false); break;
    case Bound::peer_duplex: r.limit.value = cal.links.peer_gbps(r.ranks, true); break;
    case Bound::collective: r.limit.value = cal.links.allreduce_busbw(r.space, r.ranks); break;
  }
  if (r.limit.known())
    r.pct_of_limit = (bound == Bound::compute ? r.gflops : r.gbps) / r.limit.value;
  if (const double best = lim.transfer_gbps("h2d_" + mode); best > 0 && r.h2d_gbps > 0)
    r.h2d_pct_of_limit = r.h2d_gbps / (per_rank * best);
  if (const double best = lim.transfer_gbps("d2h_" + mode); best > 0 && r.d2h_gbps > 0)
    r.d2h_pct_of_limit = r.d2h_gbps / (per_rank * best);
}

void hold_to_limits(Result& r, const Calibration& cal) {
  if (r.status != Status::pass && r.status != Status::fail) return;
  if (const auto* lim = cal.find(r.space)) compare_with_limits(r, *lim, cal, r.limit.bound);
}

}  // namespace portalab
