// The last stage of a run (engine/runner.hpp): the rows as they are measured,
// written: progress lines, speedups, console tables and the result files.
#pragma once

#include "engine/run_case.hpp"
#include "results/result.hpp"
#include "results/result_files.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace portalab {

struct RunSummary {
  std::vector<Result> results;
  int failed = 0;          // checks that did not pass
  int errors = 0;          // entries that raised an error
  int skipped = 0;         // entries that could not fit in memory
  int not_applicable = 0;  // entries the space cannot run (Status::not_applicable)
  // Set when SIGTERM or SIGINT stopped the run: the signal, the entry it
  // abandoned (not in results) and how many entries never ran.
  int interrupted_by = 0;
  std::string abandoned;
  std::size_t not_run = 0;
  // Set when the result files could not be written: the reason. The run
  // went on; the files hold what was written before.
  std::string incomplete;
  // The limits re-measured during the run (engine/runner.cpp), in order:
  // each names its space and the row that prompted it.
  nlohmann::json limits_rechecked = nlohmann::json::array();
  // Counts and failures; `analysis` adds the crossover and type ratios, which
  // read every row (once, at the end, not after each entry).
  nlohmann::json to_json(bool analysis = true) const;
};

// Writes the rows as they are measured: progress lines, console tables and
// the result files. A row comes here final (engine/relate.hpp relates a
// case's rows before they come), and a row recorded is never changed.
class Sink {
 public:
  // `entries`: how many the run will measure, for the progress lines' count;
  // `estimated_ms`: each one's estimate (dry_run.hpp), for their time left.
  Sink(const RunOptions& options, nlohmann::json provenance, std::size_t entries,
       std::vector<double> estimated_ms);
  // A measured (or skipped, failed, not applicable) row.
  void record(Result r);
  // The rows so far.
  const std::vector<Result>& results() const { return m_summary.results; }
  // A space's limits re-measured mid-run (`record`, as results.json keeps
  // it), and what progress says of it.
  void limits_rechecked(nlohmann::json record, const std::string& said);
  // The experiment's rows are all in: its console table.
  void experiment_done(const std::string& experiment);
  // A signal stopped the run while `abandoned` was running.
  void interrupted(int signal, const std::string& abandoned);
  RunSummary finish();
  std::size_t rows() const { return m_summary.results.size(); }

 private:
  void write_files(bool last);
  std::string timing(std::size_t done) const;  // elapsed and time left, for progress

  const RunOptions& m_options;
  nlohmann::json m_provenance;
  std::size_t m_entries;
  RunSummary m_summary;
  std::optional<ResultFiles> m_files;
  std::string m_last_experiment;
  std::vector<double> m_estimated_ms;  // per entry, for the time left (with progress only)
  std::chrono::steady_clock::time_point m_started;
};

}  // namespace portalab
