// The settings of a run, passed down from the Session (engine/session.hpp)
// to the loop (engine/runner.hpp) and each case (engine/run_case.hpp).
#pragma once

#include "limits/calibrate.hpp"
#include "energy/energy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace portalab {

class Comm;
class Registry;

// The settings of the whole run (run_deck's and every stage's under it).
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
  // The console (output/console.hpp): its tables, one per experiment, and
  // the run's last lines; its "[i/N] ..." progress lines.
  std::ostream* tables = nullptr;
  std::ostream* progress = nullptr;
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
  // The seed of the order in which a case's variants take their turns at
  // repetitions (run_case), the same on every rank; empty: each variant's
  // repetitions in one block, the variants as listed.
  std::optional<std::uint64_t> order_seed;
};

}  // namespace portalab
