// A row from every rank's part of an entry (engine/run_case.hpp): each rank
// sends rank 0 its samples, check and energy (rank_part); rank 0 makes the
// entry's one row of them (combine). One rank alone makes its row of its own
// samples (finish_row).
#pragma once

#include "energy/energy.hpp"
#include "results/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace portalab {

// The per-repetition phase times of one entry on one rank.
struct Samples {
  std::vector<double> h2d, kernel, d2h, total;
  std::vector<std::pair<std::string, std::vector<double>>> metrics;  // in first-seen order
  std::string timed_by;
  std::vector<std::size_t> pass_ends;  // the count of repetitions at the end of each pass
  std::optional<EntryEnergy> energy;   // of the repetitions, where meters were given
};

// The row's statistics and rates from its samples (the slowest rank's, with
// several). in_bytes/out_bytes: what one copy phase moves.
void finish_row(Result& r, Samples& s, double in_bytes, double out_bytes);

// What a rank sends rank 0 of its part of an entry.
nlohmann::json rank_part(const Result& r, const Samples& s, bool member, bool stopped_by_another,
                         double in_bytes, double out_bytes);

// Rank 0: the entry's row from every rank's part. The times are the slowest
// member's at each repetition (a barrier starts each), the check passes only
// where every member's does, and the first member that did not pass says why.
void combine(Result& r, const std::vector<std::string>& parts, const nlohmann::json& places);

}  // namespace portalab
