#include "limits/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace portalab {

namespace {

// A row above this share of its limit makes the limit suspect (below it,
// the noise of a median against a fastest repetition).
constexpr double suspect_above = 1.05;

std::string mb(double bytes) {
  return bytes >= 1e6 ? fmt::format("{:.3g} MB", bytes / 1e6)
                      : fmt::format("{:.3g} kB", bytes / 1e3);
}

// The bytes of a row that may sit in a cache, per rank: what it moves, but
// no more than its case allocates (an unfused loop, a gemm, touch their
// arrays more than once a repetition), nor than its passes keep in use at
// once where it declares that (an unfused loop's passes over fewer arrays).
double working_set(const Result& r) {
  const double moved = r.bytes, held = r.footprint > 0 ? r.footprint : r.bytes;
  const double resident = r.resident_bytes > 0 ? r.resident_bytes : held;
  return std::min({moved, held, resident}) / r.ranks;
}

// A memory or read limit at the level of the space's ladder the row's
// working set lives in; the gemm rate of its
// type instead where that roof is the lower at the row's FLOPs per byte and
// the gemm ran at the CPU's vector width (a host BLAS on narrower fallback
// kernels measures no roof: a vectorised loop outruns it).
void hold_to_level(Result& r, const SpaceLimits& lim, Bound bound, double per_rank) {
  r.limit.beyond_cache = lim.beyond_cache(working_set(r));
  const Level* level = lim.ladder.level_for(working_set(r));
  if (level == nullptr) {  // a calibration without a ladder: memory
    r.limit.value = per_rank * (bound == Bound::read ? lim.read_limit_gbps() : lim.memory_gbps());
    return;
  }
  r.limit.level = level->name;
  r.limit.value = per_rank *
                  (bound == Bound::read ? level->read_limit_gbps() : level->memory_gbps());
  const auto gemm = lim.gemm_gflops.find(r.dtype);
  if (r.flops > 0 && r.bytes > 0 && lim.gemm_kernels_warning.empty() &&
      gemm != lim.gemm_gflops.end() && gemm->second > 0 &&
      per_rank * gemm->second < r.limit.value * r.flops / r.bytes) {
    r.limit.bound = Bound::compute;
    r.limit.value = per_rank * gemm->second;
  }
}

// Why a row above its limit makes the limit suspect.
std::string suspect_reason(const Result& r, const SpaceLimits& lim) {
  if (r.limit.bound == Bound::compute)
    return fmt::format(
        "faster than the {} gemm calibration measured, the fastest FLOP rate it knows{}", r.dtype,
        lim.gemm_kernels_warning.empty()
            ? ""
            : " (the host BLAS ran kernels narrower than the CPU's vectors)");
  if (r.limit.level.empty())
    return r.limit.beyond_cache
               ? "beyond the cache, above the memory bandwidth calibrated: the limit reads low "
                 "(a slower moment of the machine)"
               : "the calibration has no ladder: the row's data sits in a cache, faster than "
                 "the memory the limit was measured on";
  if (r.limit.beyond_cache)
    return fmt::format(
        "beyond the caches ({} from {}), above the memory bandwidth calibrated: the limit "
        "reads low (a slower moment of the machine; a one-rank run re-measures it)",
        mb(working_set(r)), mb(lim.ladder.levels.back().first_bytes));
  if (lim.ladder.is_last(lim.ladder.level_for(working_set(r))))
    return fmt::format(
        "its working set of {} is within the {} last-level cache the system reports, where the "
        "sweep found no level of its own (memory from {}): that cache ran this row faster than "
        "the sweep's kernels read memory",
        mb(working_set(r)), mb(static_cast<double>(lim.cache_bytes)),
        mb(lim.ladder.levels.back().first_bytes));
  return fmt::format(
      "its working set of {} is in {}, yet it ran faster than the sweep's read, copy and "
      "triad there: it moves fewer bytes than it declares, or reuses them within a repetition",
      mb(working_set(r)), r.limit.level);
}

}  // namespace

void compare_with_limits(Result& r, const SpaceLimits& lim, const Calibration& cal, Bound bound) {
  r.limit = Limit{};
  r.limit.bound = r.limit.declared = bound;
  r.limit.copies = r.copies;
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
      // A host BLAS on fallback kernels narrower than the CPU's vectors
      // measured no roof (a vectorised loop outruns it): no limit, as
      // calibration's warning says, rather than a share of a wrong one.
      if (lim.gemm_kernels_warning.empty())
        r.limit.value = per_rank *
                        (lim.gemm_gflops.count(r.dtype) ? lim.gemm_gflops.at(r.dtype) : 0.0);
      if (const Level* level = lim.ladder.level_for(working_set(r))) r.limit.level = level->name;
      break;
    case Bound::memory:
    case Bound::read: hold_to_level(r, lim, bound, per_rank); break;
    case Bound::peer: r.limit.value = cal.links.peer_gbps(r.ranks, false); break;
    case Bound::peer_duplex: r.limit.value = cal.links.peer_gbps(r.ranks, true); break;
    case Bound::collective: r.limit.value = cal.links.allreduce_busbw(r.space, r.ranks); break;
  }
  if (r.limit.known())
    r.pct_of_limit = (r.limit.bound == Bound::compute ? r.gflops : r.gbps) / r.limit.value;
  if (r.limit.known() && r.pct_of_limit > suspect_above &&
      (r.limit.bound == Bound::memory || r.limit.bound == Bound::read ||
       r.limit.bound == Bound::compute))
    r.limit.suspect = suspect_reason(r, lim);
  if (const double best = lim.transfer_gbps("h2d_" + mode); best > 0 && r.h2d_gbps > 0)
    r.h2d_pct_of_limit = r.h2d_gbps / (per_rank * best);
  if (const double best = lim.transfer_gbps("d2h_" + mode); best > 0 && r.d2h_gbps > 0)
    r.d2h_pct_of_limit = r.d2h_gbps / (per_rank * best);
}

void hold_to_limits(Result& r, const Calibration& cal) {
  if (r.status != Status::pass && r.status != Status::fail) return;
  // The kind the experiment declared: a row moved to the compute roof by
  // its level goes back to its bandwidth first.
  if (const auto* lim = cal.find(r.space)) compare_with_limits(r, *lim, cal, r.limit.declared);
}

}  // namespace portalab
