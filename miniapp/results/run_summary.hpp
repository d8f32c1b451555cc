// What a run comes to: its rows, in order, and their counts; the summary
// results.json keeps, and the exit status a run ends with.
#pragma once

#include "results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
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
  // The limits re-measured during the run (engine/relate.cpp), in order:
  // each names its space and the row that prompted it.
  nlohmann::json limits_rechecked = nlohmann::json::array();
  // Counts and failures; `analysis` adds the crossover and type ratios, which
  // read every row (once, at the end, not after each entry).
  nlohmann::json to_json(bool analysis = true) const;
};

// The exit status of a run that came to `summary` (support/exit_status.hpp):
// 128 + a signal that stopped it, a check failed or a file not written, or
// nothing measured (every entry skipped or not applicable).
int exit_status(const RunSummary& summary);
// Whether every entry was skipped or not applicable.
bool nothing_measured(const RunSummary& summary);

}  // namespace portalab
