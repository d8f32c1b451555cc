// How long one entry will take, before it runs: from the work it declares and
// the limits calibrated for its space. Used by `portalab run --dry-run` and by
// the progress lines' time left. An estimate of magnitude, not a prediction:
// it assumes every kernel runs at its space's best memory bandwidth or at the
// vendor gemm rate of its type, whichever bounds it.
#pragma once

#include "deck/catalog.hpp"
#include "deck/copy_mode.hpp"
#include "deck/deck.hpp"
#include "experiment/registry.hpp"

#include <string>

namespace portalab {

struct SpaceLimits;

// One entry as the estimate sees it.
struct EntryWork {
  Work work;                         // one repetition's kernel phase, as the experiment declares it
  double h2d_bytes = 0.0;            // copied in per repetition; 0 when there are no copies
  double d2h_bytes = 0.0;            // copied out per repetition
  CopyMode copies = CopyMode::none;  // which transfer rate applies
  std::string dtype;                 // the gemm rate of this type bounds the FLOPs
  Bound bound = Bound::memory;       // the experiment's
  int repetitions = 1;               // reps + warmups + 1 cold call
  int warmups = 0;                   // of those: with adaptive, they last its min_warmup_s too
  // Repetitions until the median is steady: at most as many more as
  // max_time_s or max_reps allows (the estimate takes the most).
  std::optional<AdaptiveReps> adaptive;
  double footprint_bytes = 0.0;  // the case's arrays (its host mirrors too, off a host space)
  bool host_space = true;        // inputs filled and checked where they live
  bool pays_setup = true;        // the case's first variant: allocation and filling are its
};

// The estimate and its parts, in ms.
struct EntryEstimate {
  double kernel_ms = 0.0;  // one repetition's kernel phase
  double copies_ms = 0.0;  // one repetition's h2d + d2h
  double timed_ms = 0.0;   // (kernel + copies) × repetitions, warm-ups their least time
  double setup_ms = 0.0;   // allocation and filling the inputs (first variant only)
  double check_ms = 0.0;   // poisoning the outputs, the host reference re-reading them
  double total_ms = 0.0;
  std::string limited_by;  // what bounds the kernel phase: "memory 42 GB/s", "gemm 90 GFLOP/s"
};

// `space` holds the limits of the entry's space, `host` those of the host
// space that fills and checks (the checks are plain loops: Serial's are the
// right ones); `host` may be `space`. A limit that is 0 (not measured) adds
// nothing: the estimate is then a lower bound.
EntryEstimate estimate_entry(const EntryWork& entry, const SpaceLimits& space,
                             const SpaceLimits& host);

}  // namespace portalab
