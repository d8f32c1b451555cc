// The third stage of a run (engine/runner.hpp): the rows as they are measured,
// into progress lines, speedups, figures relating a case's variants, console
// tables and the result files.
#pragma once

#include "engine/run_entry.hpp"
#include "engine/expand.hpp"
#include "results/result.hpp"
#include "results/result_files.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace portalab {

struct ExperimentInfo;

struct RunSummary {
  std::vector<Result> results;
  int failed = 0;   // checks that did not pass
  int errors = 0;   // entries that raised an error
  int skipped = 0;  // entries that could not fit in memory
  int not_applicable = 0;  // entries the space cannot run (Status::not_applicable)
  // Set when SIGTERM or SIGINT stopped the run: the signal, the entry it
  // abandoned (not in results) and how many entries never ran.
  int interrupted_by = 0;
  std::string abandoned;
  std::size_t not_run = 0;
  // Set when the result files could not be written: the reason. The run
  // went on; the files hold what was written before.
  std::string incomplete;
  // The limits re-measured during the run (Sink::recheck_limits), in order:
  // each names its space and the row that prompted it.
  nlohmann::json limits_rechecked = nlohmann::json::array();
  // Counts and failures; `analysis` adds the crossover and type ratios, which
  // read every row (once, at the end, not after each entry).
  nlohmann::json to_json(bool analysis = true) const;
};

// Takes the rows as they are measured.
class Sink {
 public:
  // `entries`: what the run will measure, for the progress lines' count and
  // time left (dry_run.hpp's estimates from options.limits).
  Sink(const RunOptions& options, nlohmann::json provenance, std::span<const Entry> entries);
  // A measured (or skipped, failed, not applicable) row.
  void record(Result r);
  // The rows from `first` on are one case, all measured: relate its variants.
  void case_done(const ExperimentInfo& experiment, std::size_t first);
  // The rows from `first` on are one case, all measured (one rank): where a
  // row beyond the cache ran above its space's memory or read limit, frees
  // the case (`free_case`), re-measures that space's bandwidths into
  // options.limits (recheck_bandwidth) and holds every row of the space to
  // the limits as they now are. A failed re-measurement is said and recorded;
  // the limits stay.
  void recheck_limits(std::size_t first, const std::function<void()>& free_case);
  // The experiment's rows are all in: its console table.
  void experiment_done(const std::string& experiment);
  // A signal stopped the run while `abandoned` was running.
  void interrupted(int signal, const std::string& abandoned);
  RunSummary finish();
  std::size_t rows() const { return m_summary.results.size(); }

 private:
  void write_files(std::size_t first_changed, bool last);
  std::string timing(std::size_t done) const;  // elapsed and time left, for progress
  void relate_to_one_rank(Result& r);

  const RunOptions& m_options;
  nlohmann::json m_provenance;
  std::size_t m_entries;
  RunSummary m_summary;
  Speedups m_speedups;
  std::optional<ResultFiles> m_files;
  std::string m_last_experiment;
  std::vector<double> m_estimated_ms;  // per entry, for the time left (with progress only)
  std::chrono::steady_clock::time_point m_started;
  std::map<std::string, std::size_t> m_one_rank;  // one-rank rows by what they ran
};

}  // namespace portalab
