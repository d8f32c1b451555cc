#include "engine/estimate.hpp"

#include "limits/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace portalab {
namespace {

// bytes at GB/s, in ms; nothing when the rate was not measured.
double ms_at(double bytes, double gbps) { return gbps > 0 ? bytes / (gbps * 1e6) : 0.0; }

// The gemm rate of `dtype`, or of float64 for a type without one (int64).
double gemm_gflops(const SpaceLimits& lim, const std::string& dtype) {
  for (const std::string& t : {dtype, std::string("float64")})
    if (const auto it = lim.gemm_gflops.find(t); it != lim.gemm_gflops.end() && it->second > 0)
      return it->second;
  return 0.0;
}

// The launch latency: where the calibration found it unsteady (a busy
// machine: one stalled repetition of a few microseconds' work can take
// milliseconds), its fastest repetition, which is what a launch costs.
double launch_us(const SpaceLimits& lim) {
  for (const auto& u : lim.unsteady)
    if (u.limit == "launch_us" && u.fastest > 0) return std::min(u.fastest, lim.launch_us);
  return lim.launch_us;
}

}  // namespace

EntryEstimate estimate_entry(const EntryWork& entry, const SpaceLimits& space,
                             const SpaceLimits& host) {
  EntryEstimate e;
  const double launch_ms = launch_us(space) * 1e-3;
  const double memory = entry.bound == Bound::read ? space.read_limit_gbps() : space.memory_gbps();

  // Kernel phase: the slower of moving its bytes and doing its FLOPs, plus
  // its launches, each at least a launch and fence.
  double moving_ms = ms_at(entry.work.bytes, memory);
  e.limited_by = fmt::format("memory {:.0f} GB/s", memory);
  const std::string copies(to_string(entry.copies));
  if (entry.bound == Bound::transfer && !space.host) {
    // Its kernel phase moves its bytes between host and device (copy_overlap).
    const double link = space.transfer_gbps("h2d_" + copies) + space.transfer_gbps("d2h_" + copies);
    if (link > 0) {
      moving_ms = ms_at(entry.work.bytes, link / 2);
      e.limited_by = fmt::format("{} copies {:.0f} GB/s", copies, link / 2);
    }
  }
  const double gflops = gemm_gflops(space, entry.dtype);
  const double computing_ms = gflops > 0 ? entry.work.flops / (gflops * 1e6) : 0.0;
  if (computing_ms > moving_ms) e.limited_by = fmt::format("gemm {:.0f} GFLOP/s", gflops);
  e.kernel_ms = std::max(moving_ms, computing_ms) + std::max(entry.work.launches, 1.0) * launch_ms;

  // Copy phases, each ended by a fence.
  if (entry.h2d_bytes > 0)
    e.copies_ms += ms_at(entry.h2d_bytes, space.transfer_gbps("h2d_" + copies)) + launch_ms;
  if (entry.d2h_bytes > 0)
    e.copies_ms += ms_at(entry.d2h_bytes, space.transfer_gbps("d2h_" + copies)) + launch_ms;

  const double repetition_ms = e.kernel_ms + e.copies_ms;
  double repetitions = entry.repetitions - entry.warmups;
  double warmup_ms = repetition_ms * entry.warmups;
  // Passes split the repetitions' budgets; each has its own set-up, cold
  // call (one is in `repetitions`), warm-ups and check.
  const int passes = entry.adaptive ? entry.adaptive->passes : 1;
  if (const auto& a = entry.adaptive; a && repetition_ms > 0) {
    const double in_budget = a->max_time_s * 1e3 / repetition_ms;
    repetitions += std::clamp(in_budget, double(a->min_reps), double(a->max_reps)) - a->min_reps;
    warmup_ms = std::max(warmup_ms, a->min_warmup_s * 1e3);
  }
  e.timed_ms = repetition_ms * (repetitions + passes - 1) + warmup_ms * passes;

  // Setup: the arrays allocated and first touched, the inputs filled, where
  // they are created (the space itself, or host mirrors filled on the host).
  // First touch and filling each cost about a pass over the bytes.
  const double host_memory = host.memory_gbps();
  if (entry.pays_setup) {
    e.setup_ms = 2 * ms_at(entry.footprint_bytes, entry.host_space ? memory : host_memory);
    if (!entry.host_space) e.setup_ms += ms_at(entry.footprint_bytes, memory);
  }
  // Per variant: the outputs poisoned in the space (and their mirrors), then
  // the host reference reading inputs and outputs by plain loops.
  e.check_ms = ms_at(entry.footprint_bytes, memory) + ms_at(entry.footprint_bytes, host_memory);
  if (!entry.host_space && entry.h2d_bytes + entry.d2h_bytes == 0)
    // No copies timed: the outputs come back untimed for the check.
    e.check_ms += ms_at(entry.footprint_bytes / 2, space.transfer_gbps("d2h_pageable"));

  e.setup_ms *= passes;
  e.check_ms *= passes;
  e.total_ms = e.timed_ms + e.setup_ms + e.check_ms;
  return e;
}

}  // namespace portalab
