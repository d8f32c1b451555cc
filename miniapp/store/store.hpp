// The results store: one SQLite file that remembers every run imported into
// it (its provenance, calibrated limits per space and per GPU, result rows
// and their energy), and answers two questions over them: how each row's
// runs went over time (history) and how the nodes and GPUs of a job compare
// with each other and with reference figures (fleet). docs/results-store.md
// says how a site uses it.
#pragma once

#include "store/sqlite.hpp"
#include "store/verdict.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace portalab::store {

// The schema this portalab writes and reads (PRAGMA user_version); a store
// of an older one is upgraded when opened where it may be written.
constexpr int store_schema_version = 6;

// A row's repetitions (results schema 5) as the store keeps them: the first
// this many of each phase, enough for a test of a change between two runs;
// a run of more keeps its median and noise figures in `rows` all the same.
constexpr std::size_t max_stored_repetitions = 1000;
// The repetitions table's form of them: little-endian float64, each in the
// order run (a time missing in the file is NaN), and back.
std::string repetitions_blob(const std::vector<double>& ms);
std::vector<double> repetitions_of_blob(std::string_view blob);

// The store's path: --db, else $PORTALAB_DB, else results/portalab.sqlite;
// StoreError for PORTALAB_DB set but empty.
std::string store_path(const std::string& given);

// An open store. Writing: created where missing (with its folder), its
// schema checked or made; reading: it must exist. Either upgrades a store
// of an older schema (a line to notes). wait_s: how long a writer waits for
// another to finish before giving up.
std::unique_ptr<Connection> open_store(const std::string& path, bool write, double wait_s,
                                       std::ostream* notes = nullptr);

// A store this import created, closed, and removed where it holds no run:
// an import refused leaves no empty store behind.
void forget_new_store(std::unique_ptr<Connection> db, const std::string& path);

struct ImportSummary {
  int found = 0;       // runs found under the paths (results.json, results.jsonl or both)
  int imported = 0;    // runs new to the store
  int replaced = 0;    // runs the store held incomplete, now complete (or more of them)
  int already = 0;     // runs the store held already (by run id)
  int incomplete = 0;  // of those imported or replaced: read from a journal
  int running = 0;     // runs still writing (their journal locked): skipped
  std::int64_t rows = 0;
  int signal_during_commit = 0;  // a signal that came while the import was committed
};

// Imports the runs under `paths` (results.json or results.jsonl files, or
// folders searched for them) in one transaction: all of them or, on an
// error or a signal before the commit, none. A run that did not finish
// (killed, out of disk) is read from its journal, every row it holds, and
// stored as incomplete; a run still writing is skipped (a line to notes).
// Every file is checked as the scripts check it (results/results_check.hpp).
// progress: a line per run where not null.
ImportSummary import_runs(Connection& db, const std::vector<std::string>& paths,
                          std::ostream* progress, std::ostream& notes);

// The run id of a results document: a fingerprint of its provenance, which
// a run writes once and every copy of its folder shares.
std::string run_id_of(const nlohmann::json& provenance);

// A calibration's limits (provenance.calibration.spaces) as the store keeps
// them, one per space and quantity: "triad_gbps", "launch_us",
// "gemm_float64_gflops", "h2d_pinned_gbps" (the best of its sweep), ...
struct LimitFigure {
  std::string space;
  bool host = false;  // a host space's: the node's, not a GPU's
  std::string quantity, unit;
  double value = 0;
  std::optional<double> unsteady;  // slowest / fastest, where calibration found it unsteady
};
std::vector<LimitFigure> limit_figures(const nlohmann::json& calibration_spaces);

struct HistoryOptions {
  std::string machine, experiment, variant, dtype, space;
  std::string gpu;  // keys whose GPUs include this UUID
  int last = 20;    // runs of each row looked at, the latest included
  std::string phase = "total";
  double threshold_pct = 10;  // SLOWER by more than this is a regression
  double sigmas = 4;          // of the run-to-run noise: the rule for rows without repetitions
  double min_noise = 0.01;
  double alpha = default_alpha;  // the U test's, after Holm: rows with repetitions
  double tolerance = default_tolerance;
};

// A row key: what a row measured, where, and (device spaces) on which GPUs.
struct SeriesKey {
  std::string experiment, variant, dtype, space, copies, library, machine;
  std::string gpu;  // the GPUs' UUIDs, comma-separated; "" for host spaces
  std::int64_t n = 0, threads = 0;
};

// What may change between two runs, in history_facts' order (a regression
// says which changed), and when the run started.
constexpr int history_fact_count = 7;
struct RunFacts {
  std::string started_at;
  std::array<std::string, history_fact_count> values;
};

// One run of a row key.
struct HistoryPoint {
  std::size_t run = 0;   // index into History::runs
  std::int64_t row = 0;  // its row in the store
  Measure m;
  bool throttled = false;
  std::optional<double> sm_mhz;
  std::optional<std::string> path;  // the row's code path; none: results before it was recorded
};

struct HistoryChange {
  std::string what, from, to;
};

struct HistoryRow {
  SeriesKey key;
  std::vector<HistoryPoint> runs;       // oldest first
  std::string verdict;                  // NEW, FASTER, SAME, SLOWER, BROKEN or the latest check
  std::optional<double> change;         // the latest median against the base's, relative
  std::optional<double> noise;          // the run-to-run noise it was judged with (no test)
  std::optional<double> min_change;     // by the test: the change had to exceed this
  std::optional<double> p, p_adjusted;  // the U test's, where both runs kept repetitions
  bool noisy = false;                   // the latest run's repetitions ran out of budget
  std::optional<std::size_t> base;      // index into runs: the earlier run of the median time
  std::vector<HistoryChange> changes;   // between the base and the latest run
  bool regression = false;
};

struct History {
  std::string phase;
  int last = 0;
  double threshold_pct = 0, sigmas = 0, alpha = 0, tolerance = 0;
  int tested = 0;  // rows judged by the U test, Holm's family
  double noise_pooled = 0, noise_floor = 0;
  int noise_pairs = 0;
  std::map<int, double> noise_by_decade;  // decade of the base time (log10 ms) -> noise
  // The same, measured on the pairs judged (each row's base and latest run).
  double latest_noise_pooled = 0;
  int latest_noise_pairs = 0;
  std::map<int, double> latest_noise_by_decade;
  std::vector<RunFacts> runs;            // the runs the rows' points are of
  std::vector<HistoryRow> rows;          // regressions first
  std::vector<std::size_t> regressions;  // indices into rows, the largest change first
};

History history(Connection& db, const HistoryOptions& options);
// The history as one JSON document (docs/results-store.md), a row a line.
void write_history_json(const History& h, std::ostream& to);

struct FleetOptions {
  std::string job;                // runs of this Slurm job id
  std::string since, until;       // or started in [since, until] (ISO dates)
  std::vector<std::string> rows;  // EXPERIMENT[/VARIANT[/DTYPE[/N]]]; empty: chosen
  double tolerance_pct = 10;      // below the group's median by more: an outlier
  std::string references;         // the reference figures' CSV
};

// {"selection": ..., "gpus": [...], "nodes": [...]}: docs/results-store.md.
nlohmann::json fleet(Connection& db, const FleetOptions& options);

// Seconds since 1970 (UTC) of YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[Z] (a date
// alone: its start, or its end with end_of_day); nullopt for anything else.
std::optional<double> unix_time(const std::string& iso, bool end_of_day = false);
// YYYY-MM-DDTHH:MM:SSZ of seconds since 1970.
std::string iso8601(double unix_s);

// The reference figures file shipped with portalab (data/reference-figures.csv),
// found beside the source tree or the installed binary; "" when none is.
std::string default_reference_figures();

}  // namespace portalab::store
