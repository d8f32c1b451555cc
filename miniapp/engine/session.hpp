// A session owns one run, from the command line's request to the exit
// status, in the order it goes (docs/architecture.md):
//   check     before Kokkos: the deck, a calibration file, --out; the plan
//             (expand, engine/expand.hpp), made once here, every rank's at
//             the start-up agreement (engine/agreement.hpp)
//   set up    Kokkos, provenance, the energy meters, banners and warnings
//   limits    calibrated (or read), the host stores they choose; --dry-run
//             stops at the plan's estimates
//   loop      run_deck (engine/runner.hpp): run_case measures each case,
//             its ranks' parts combined, the Sink writes the rows
//   end       the report on stdout, one exit status on every rank
// `portalab calibrate` and `portalab info` are sessions of their own.
#pragma once

#include "deck/deck.hpp"
#include "engine/expand.hpp"
#include "engine/run_options.hpp"
#include "limits/calibrate.hpp"
#include "energy/energy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

struct RunSummary;

// --seed and --in-order: how the repetitions of a case's variants take turns.
struct RepetitionOrder {
  std::optional<std::uint64_t> seed;  // empty: drawn by rank 0
  bool in_order = false;              // each variant's repetitions in one block
};

// `portalab run` as the command line asks it.
struct RunRequest {
  std::string deck;  // a path, or a name looked for (deck_search.hpp)
  std::optional<std::string> out;
  DeckOverrides overrides;                 // --set, --spaces
  std::optional<std::string> calibration;  // --calibration FILE: limits not measured
  bool dry = false;                        // --dry-run
  std::optional<std::string> energy;       // --energy on|off, over the deck's key
  RepetitionOrder order;                   // --seed, --in-order
  std::vector<std::string> command;        // the whole command line, for provenance
};

// One run of a deck on every rank: each rank makes its own Session.
class Session {
 public:
  // kokkos_argc/kokkos_argv: the --kokkos-* options, argv[0] first, for
  // Kokkos::initialize (checked by check_kokkos_arguments).
  Session(RunRequest request, int& kokkos_argc, char** kokkos_argv);
  // Every stage; the exit status, the same on every rank.
  int run();

 private:
  int agree();    // the checks before Kokkos, then the start-up agreement
  int dry_run();  // --dry-run: the entries and their estimates, nothing run
  // Provenance, the energy meters, the ranks' places, the banner and warnings.
  void set_up(double kokkos_initialize_ms, const std::vector<std::string>& kokkos_given);
  void set_limits();                   // calibrated or read; the host stores they choose
  int end(const RunSummary& summary);  // the report; the exit status

  RunRequest m_request;
  int& m_kokkos_argc;
  char** m_kokkos_argv;
  Deck m_deck;
  std::vector<std::string> m_spaces;  // the spaces the deck's plans name, in run order
  std::vector<Entry> m_entries;       // the plan: expanded once, at the agreement
  std::optional<Calibration> m_limits;
  std::optional<EnergyMeters> m_meters;
  nlohmann::json m_provenance;
  RunOptions m_options;
};

// Kokkos aborts, or crashes, on options it cannot use, and ignores those
// that cannot apply: checked on every rank before it starts (a failure is
// that rank's at the start-up agreement), the warnings said by rank 0.
// kokkos_args: argv[0], the --kokkos-* options, then nullptr.
void check_kokkos_arguments(const std::vector<char*>& kokkos_args);

// `portalab calibrate`: each space's limits, on every rank, written to `out`.
struct CalibrateRequest {
  std::optional<std::string> out;
  std::vector<std::string> spaces;  // as given; empty: every space compiled
  bool quick = false;
  bool energy = true;  // the GPUs' power limits and clocks recorded (NVML)
  std::vector<std::string> command;
};
int calibrate_session(const CalibrateRequest& request, int& kokkos_argc, char** kokkos_argv);

// `portalab info`: one JSON document on stdout, Kokkos' own description of
// itself in it, so that a job can parse what it saved.
int info_session(int& kokkos_argc, char** kokkos_argv, const std::vector<std::string>& command);

}  // namespace portalab
