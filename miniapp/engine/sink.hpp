// The last stage of a run (engine/runner.hpp): the rows as they are measured,
// said once each to the run's printers (output/printer.hpp): the console's
// progress lines and tables, and the result files.
#pragma once

#include "engine/dry_run.hpp"
#include "engine/run_case.hpp"
#include "output/printer.hpp"
#include "results/result.hpp"
#include "results/run_summary.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace portalab {

// Says the rows as they are measured: the run's counts, and every event to
// its printers (the console where options name its streams, the result
// files where they name a folder). A row comes here final
// (engine/relate.hpp relates a case's rows before they come), and a row
// recorded is never changed.
class Sink {
 public:
  // `entries`: how many the run will measure, for the progress lines' count;
  // `estimated_ms`: each one's estimate (dry_run.hpp), for their time left.
  Sink(const RunOptions& options, const nlohmann::json& provenance, std::size_t entries,
       std::vector<double> estimated_ms);
  // A measured (or skipped, failed, not applicable) row.
  void record(Result r);
  // The rows so far.
  const std::vector<Result>& results() const { return m_summary.results; }
  // A space's limits re-measured mid-run (`record`, as results.json keeps
  // it), and what progress says of it.
  void limits_rechecked(nlohmann::json record, const std::string& said);
  // Entries [first, end) of the run ran one of their `passes`
  // (AdaptiveReps::passes), for the time left.
  void measured(std::size_t first, std::size_t end, int passes);
  // A pass of an experiment's cases is done, not its last: progress says
  // so, as its rows come with the last.
  void pass_done(const std::string& experiment, int pass, int passes);
  // The experiment's rows are all in: its console table (once).
  void experiment_done(const std::string& experiment);
  // A signal stopped the run while `abandoned` was running.
  void interrupted(int signal, const std::string& abandoned);
  // The end: the files whole, the console's last lines.
  RunSummary finish();
  std::size_t rows() const { return m_summary.results.size(); }

 private:
  std::string timing() const;  // elapsed and time left, for progress

  std::size_t m_entries;
  RunSummary m_summary;
  Printers m_printers;
  bool m_progress;                     // a console says progress: time left wanted
  std::vector<double> m_estimated_ms;  // per entry, for the time left (with progress only)
  WorkDone m_work;                     // what has run of them
  std::string m_tabled;                // the last experiment whose table was said
  std::chrono::steady_clock::time_point m_started;
};

}  // namespace portalab
