// The second stage of a run (engine/runner.hpp): the entries of one case
// measured into Results, the case set up once, each variant's phases timed
// (cold call, warm-ups, fenced repetitions, the variants' repetitions
// interleaved) and checked; with several ranks, every rank passes each
// entry's gates together and rank 0 combines their parts into one row.
#pragma once

#include "engine/combine.hpp"
#include "engine/expand.hpp"
#include "engine/run_options.hpp"
#include "limits/calibrate.hpp"
#include "energy/energy.hpp"
#include "results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace portalab {

struct Calibration;
class Comm;
class Registry;
class Case;
class Watchdog;

// The case an entry needs: made for the first entry of a case, kept for the
// others. When it could not be made, why (skipped or an error) for each.
class CaseSlot {
 public:
  CaseSlot();
  ~CaseSlot();
  // The case for e, made if it is a new one; nullptr with status and note
  // set when it cannot be (memory, allocation, setup error).
  Case* get(const Entry& e, const Comm& group, Status& status, std::string& note);
  // Frees the case now (its memory, before a limit is re-measured); the next
  // entry makes its own.
  void release();

 private:
  std::optional<std::size_t> m_case_id;
  std::unique_ptr<Case> m_case;
  Status m_status = Status::pass;
  std::string m_note;
};

// What an entry's earlier passes (AdaptiveReps::passes) measured: all
// their timed repetitions, and its row as they make it (final, where the
// last pass does not come: an interrupted run records it).
struct Carried {
  Samples samples;
  Result row;
  int passes = 0;  // those that ran (0: none yet, `row` is empty)
};

// Measures the entries of one case (its variants, adjacent in the plan) into
// their rows, in the listed order: for each, its applicability, the case
// (made once), the cold call, warm-ups and check; then their timed
// repetitions interleaved, round after round in an order shuffled by
// `order` (each variant's as one block where it is null). Throws
// Interrupted at a safe point.
//
// `pass` of the entries' passes: its repetitions are added to `carried`
// (one per entry, empty before the first pass), whose rows become the
// passes' so far: all their repetitions, the first pass's cold call, the
// warm-ups of all, and a failure of any. The rows returned are those.
std::vector<Result> run_case(std::span<const Entry> entries, CaseSlot& slot,
                             const RunOptions& options, std::mt19937_64* order, int pass = 0,
                             std::span<Carried> carried = {});

// Puts `order` in a random order drawn from rng: the same on every build
// for the same seed.
void shuffle(std::vector<std::size_t>& order, std::mt19937_64& rng);

// Whether a rank wants another warm-up of e, having run `done` of them over
// elapsed_s: until the deck's count, and with adaptive repetitions until they
// have lasted min_warmup_s too.
bool wants_warmup(const Entry& e, int done, double elapsed_s);

// Whether a rank wants another timed repetition of e in pass `pass`, having
// timed kernel_ms over elapsed_s in it: a fixed count until it is reached;
// adaptive ones until the kernel median is steady (its 95% interval within
// the noise target), at least min_reps, no more than max_reps or max_time_s
// (the pass's share of each). When it wants none, stopped_by says why:
// "reps", "noise", "max_reps" or "max_time".
bool wants_another(const Entry& e, std::span<const double> kernel_ms, double elapsed_s,
                   std::string& stopped_by, int pass = 0);

// run_deck's, with several ranks: each gate passed is progress.
extern Watchdog* watchdog;

}  // namespace portalab
