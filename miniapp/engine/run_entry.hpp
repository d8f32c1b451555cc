// The second stage of a run (engine/runner.hpp): one entry measured into a
// Result, its case set up (or reused), its phases timed (cold call, warm-ups,
// fenced repetitions) and checked; with several ranks, every rank passes the
// entry's gates together and rank 0 combines their parts into one row.
#pragma once

#include "engine/expand.hpp"
#include "limits/calibrate.hpp"
#include "platform/energy.hpp"
#include "results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace portalab {

struct Calibration;
class Comm;
class Registry;
class Case;
class Watchdog;

// The options of the whole run (run_deck's), declared with its first stage
// that reads them.
struct RunOptions {
  // results.csv and results.json go here (result_files.hpp); a folder that
  // cannot be written stops run_deck before it measures (OutputError).
  std::optional<std::string> out_dir;
  // Fills each row's limit and pct_of_limit. With one rank, a case whose row
  // beyond the cache outran its memory or read limit has that space's
  // bandwidths re-measured into it (recheck_bandwidth), unless recheck_limits is off.
  Calibration* limits = nullptr;
  bool recheck_limits = true;
  // Each host space's policy for the kernels that have a choice (from the
  // calibration: host_policies), passed to every call through the run
  // state. Empty: the plain paths.
  HostPolicies host_policies;
  std::ostream* tables = nullptr;      // console tables, one per experiment
  std::ostream* progress = nullptr;    // "[i/N] ..." lines
  const Registry* registry = nullptr;  // nullptr: the program's
  // The ranks that run the deck together (nullptr: world()), and where each
  // runs (rank_place() and its device, gathered at start-up) for the rows'
  // per-rank figures. Only rank 0's options name files and streams.
  const Comm* world = nullptr;
  nlohmann::json rank_places = nlohmann::json::array();
  // With several ranks: abort them all when no gate passes for this long
  // (watchdog.hpp); 0: never.
  double watchdog_s = 0;
  // The energy meters read around each timed repetition (energy.hpp);
  // nullptr: no energy figures (--energy off).
  EnergyMeters* energy = nullptr;
};

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

// Measures one entry: applicability, its case, the cold call, warm-ups and
// repetitions (each fenced), the check. Throws Interrupted at a safe point.
Result run_entry(const Entry& e, CaseSlot& slot, const RunOptions& options);

// r's limit and pct_of_limit again, from the limit of its kind (r.limit.bound)
// in cal, as it now is (after a recheck_bandwidth). Rows that did not run are left.
void hold_to_limits(Result& r, const Calibration& cal);

// run_deck's, with several ranks: each gate passed is progress.
extern Watchdog* watchdog;

}  // namespace portalab
