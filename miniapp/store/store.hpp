// The results store: one SQLite file that remembers every run imported into
// it (its provenance, calibrated limits per space and per GPU, result rows
// and their energy), and answers two questions over them: how each row's
// runs went over time (history) and how the nodes and GPUs of a job compare
// with each other and with reference figures (fleet). docs/results-store.md
// says how a site uses it.
#pragma once

#include "store/sqlite.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace portalab::store {

// The schema this portalab writes and reads (PRAGMA user_version).
constexpr int store_schema_version = 1;

// The store's path: --db, else $PORTALAB_DB, else results/portalab.sqlite.
std::string store_path(const std::string& given);

// An open store. Writing: created where missing (with its folder), its
// schema checked or made; reading: it must exist. wait_s: how long a
// writer waits for another to finish before giving up.
std::unique_ptr<Connection> open_store(const std::string& path, bool write, double wait_s);

struct ImportSummary {
  int found = 0;     // results files found under the paths
  int imported = 0;  // runs new to the store
  int already = 0;   // runs the store held already (by run id)
  std::int64_t rows = 0;
};

// Imports the runs under `paths` (results.json files, or folders searched
// for them) in one transaction: all of them or, on an error or a signal,
// none. progress: a line per run where not null.
ImportSummary import_runs(Connection& db, const std::vector<std::string>& paths,
                          std::ostream* progress);

// The run id of a results document: a fingerprint of its provenance, which
// a run writes once and every copy of its folder shares.
std::string run_id_of(const nlohmann::json& provenance);

struct HistoryOptions {
  std::string machine, experiment, variant, dtype, space;
  int last = 20;             // runs of each row looked at, the latest included
  std::string phase = "total";
  double threshold_pct = 10;  // SLOWER by more than this is a regression
  double sigmas = 4;
  double min_noise = 0.01;
};

// {"rows": [...], "regressions": [...], "noise": ...}: docs/results-store.md.
nlohmann::json history(Connection& db, const HistoryOptions& options);

struct FleetOptions {
  std::string job;             // runs of this Slurm job id
  std::string since, until;    // or started in [since, until] (ISO dates)
  std::vector<std::string> rows;  // EXPERIMENT[/VARIANT[/DTYPE[/N]]]; empty: chosen
  double tolerance_pct = 10;   // below the group's median by more: an outlier
  std::string references;      // the reference figures' CSV
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
