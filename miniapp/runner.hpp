// Runs a validated deck: every experiment × size × type × space × copy mode ×
// variant, timed phase by phase, verified, written after each entry.
#pragma once

#include "deck.hpp"
#include "result.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

struct Calibration;

struct RunOptions {
  // results.csv and results.json go here (result_files.hpp); a folder that
  // cannot be written stops run_deck before it measures (OutputError).
  std::optional<std::string> out_dir;
  const Calibration* limits = nullptr;  // fills each row's limit and pct_of_limit
  std::ostream* tables = nullptr;      // console tables, one per experiment
  std::ostream* progress = nullptr;    // "[i/N] ..." lines
};

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
  nlohmann::json to_json() const;
};

// Number of entries (result rows) the deck will produce.
std::size_t count_entries(const Deck& deck);

// Stops early, with what it has, when a signal arrives (interrupt.hpp).
RunSummary run_deck(const Deck& deck, const RunOptions& options,
                    const nlohmann::json& provenance);

}  // namespace portalab
