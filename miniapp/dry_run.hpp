// A deck's entries in the order `portalab run` measures them, each with its
// bytes and an estimate of its time (estimate.hpp), without running any:
// `portalab run DECK --dry-run`, and the progress lines' time left.
#pragma once

#include "copy_mode.hpp"
#include "deck.hpp"
#include "estimate.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

struct Calibration;

struct PlannedEntry {
  std::string experiment, variant, space, dtype;
  std::size_t n = 0;
  CopyMode copies = CopyMode::none;
  std::size_t footprint = 0;  // bytes the case allocates in its space
  Work work;                  // per repetition
  int repetitions = 0;        // reps + warmups + 1 cold call
  std::string not_run;        // why it will not be measured ("" when it will)
  std::optional<EntryEstimate> estimate;  // none without limits for its space
  double estimated_ms() const { return not_run.empty() && estimate ? estimate->total_ms : 0.0; }
};

struct PlanOptions {
  const Calibration* limits = nullptr;  // estimates need them
  // Kokkos is initialised: ask which variants each space can run and whether
  // each case fits in the free memory, as the run will.
  bool ask_spaces = false;
};

// Iterates the deck as run_deck does (runner.cpp), one element per result row.
std::vector<PlannedEntry> plan_entries(const Deck& deck, const PlanOptions& options);

// The plan as `--dry-run` prints it: one line per entry, then the total.
std::string format_plan(const Deck& deck, const std::vector<PlannedEntry>& entries);

// Time left, in ms, once `done` entries of `entries` took `elapsed_ms`: the
// remaining entries' estimates, scaled by how the finished ones compared with
// theirs (measured / estimated, each side plus a tenth of the whole
// estimate, so that the first few entries do not swing it); by entry count
// when nothing is estimated.
double time_left_ms(const std::vector<PlannedEntry>& entries, std::size_t done,
                    double elapsed_ms);

// "850 ms", "12.3 s", "4 min 05 s", "1 h 02 min".
std::string format_duration(double ms);

}  // namespace portalab
