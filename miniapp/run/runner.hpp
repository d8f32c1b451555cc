// Runs a validated deck in three stages:
//   expand     the deck into entries, one per result row, in run order
//   run_entry  one entry into a Result: set up (or reuse) its case, time its
//              phases (cold call, warm-ups, fenced repetitions), check it
//   Sink       everything done with the results: progress, speedups, figures
//              relating a case's variants, tables and the result files
// A distributed run adds its ranks' results up in the sink's place.
#pragma once

#include "deck/deck.hpp"
#include "results/result.hpp"
#include "results/result_files.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace portalab {

struct Calibration;
class Comm;
struct ExperimentInfo;
class Registry;
class Case;

struct RunOptions {
  // results.csv and results.json go here (result_files.hpp); a folder that
  // cannot be written stops run_deck before it measures (OutputError).
  std::optional<std::string> out_dir;
  const Calibration* limits = nullptr;  // fills each row's limit and pct_of_limit
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
};

// One result row to be: an experiment's variant at one size, type, space and
// copy mode. Entries of one case (all but the variant the same) are adjacent
// and share the case's arrays.
struct Entry {
  const ExperimentInfo* experiment = nullptr;
  std::size_t variant = 0;  // index in the experiment's table of variants
  std::string space, dtype;
  std::size_t n = 0;
  CopyMode copies = CopyMode::pageable;
  int reps = 0, warmups = 0;
  Parameters parameters;
  std::size_t case_id = 0;  // equal for the entries of one case
  int ranks = 1;  // how many ranks run it together: the first `ranks` of the run

  // What the experiment is given: its parameters and "ranks".
  Parameters case_parameters() const;

  const std::string& variant_name() const;
  // "vector_poly fused Serial float64 n=1000 copies=pageable"
  std::string describe() const;
  // Why a run of `world_size` ranks cannot run it ("" when it can): the same
  // words in the run and its dry run.
  std::string too_few_ranks(int world_size) const;
};

// Every entry of the deck, in the order they run; a plan that gives no
// ranks runs on all `world_size` of them.
std::vector<Entry> expand(const Deck& deck, const Registry& registry, int world_size = 1);
// Their number: the rows a run of the deck produces.
std::size_t count_entries(const Deck& deck);

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
  // Counts and failures; `analysis` adds the crossover and type ratios, which
  // read every row (once, at the end, not after each entry).
  nlohmann::json to_json(bool analysis = true) const;
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

 private:
  std::optional<std::size_t> m_case_id;
  std::unique_ptr<Case> m_case;
  Status m_status = Status::pass;
  std::string m_note;
};

// Measures one entry: applicability, its case, the cold call, warm-ups and
// repetitions (each fenced), the check. Throws Interrupted at a safe point.
Result run_entry(const Entry& e, CaseSlot& slot, const RunOptions& options);

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

// All three stages. Stops early, with what it has, when a signal arrives
// (interrupt.hpp).
RunSummary run_deck(const Deck& deck, const RunOptions& options,
                    const nlohmann::json& provenance);

}  // namespace portalab
