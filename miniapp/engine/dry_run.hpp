// A deck's entries in the order `portalab run` measures them (expand.hpp's
// expand), each with its bytes and an estimate of its time (estimate.hpp),
// without running any: `portalab run DECK --dry-run`, and the progress
// lines' time left (the Sink's).
#pragma once

#include "engine/estimate.hpp"
#include "engine/expand.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace portalab {

struct Calibration;

struct PlannedEntry {
  Entry entry;
  std::size_t footprint = 0;              // bytes the case allocates in its space
  Work work;                              // per repetition
  int repetitions = 0;                    // reps + warmups + 1 cold call
  std::string not_run;                    // why it will not be measured ("" when it will)
  std::optional<EntryEstimate> estimate;  // none without limits for its space
  double estimated_ms() const { return not_run.empty() && estimate ? estimate->total_ms : 0.0; }
};

struct PlanOptions {
  const Calibration* limits = nullptr;  // estimates need them
  // Kokkos is initialised: ask which variants each space can run and whether
  // each case fits in the free memory, as run_case will.
  bool ask_spaces = false;
  int world_size = 1;  // the ranks of the run: an entry on more is not run
};

// Each entry's work and footprint, through its experiment in the registry,
// and its estimate where the limits have its space.
std::vector<PlannedEntry> plan_entries(std::span<const Entry> entries, const PlanOptions& options);

// The plan as `--dry-run` prints it: one line per entry, then the total.
std::string format_plan(const std::string& deck_path, const std::vector<PlannedEntry>& entries);

// Time left, in ms, once `done` of the entries estimated at `estimated_ms`
// (PlannedEntry::estimated_ms: 0 for one not run or not estimated) took
// `elapsed_ms`: the remaining entries' estimates, scaled by how the finished
// ones compared with theirs (measured / estimated, each side plus a tenth of
// the whole estimate, so that the first few entries do not swing it); by
// entry count when nothing is estimated.
double time_left_ms(std::span<const double> estimated_ms, std::size_t done, double elapsed_ms);
// The same from sums: entries done (a pass of an entry in passes counts for
// its share) of `total`, and their estimates' sums; a run in passes finishes
// no entry until its last pass.
struct WorkDone {
  double done = 0, total = 0;
  double estimated_done_ms = 0, estimated_total_ms = 0;
};
double time_left_ms(const WorkDone& work, double elapsed_ms);

// "850 ms", "12.3 s", "4 min 05 s", "1 h 02 min".
std::string format_duration(double ms);

}  // namespace portalab
