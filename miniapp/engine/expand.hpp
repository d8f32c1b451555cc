// The first stage of a run (engine/runner.hpp): the deck into entries, one per
// result row, in the order they run.
#pragma once

#include "deck/deck.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

struct ExperimentInfo;
class Registry;

// One result row to be: an experiment's variant at one size, type, space and
// copy mode. Entries of one case (all but the variant the same) are adjacent
// and share the case's arrays.
struct Entry {
  const ExperimentInfo* experiment = nullptr;
  std::size_t variant = 0;  // index in the experiment's table of variants
  std::string space, dtype;
  std::size_t n = 0;
  CopyMode copies = CopyMode::pageable;
  int reps = 0, warmups = 0;  // reps: the count, or adaptive's min_reps
  Parameters parameters;
  std::size_t case_id = 0;  // equal for the entries of one case
  int ranks = 1;            // how many ranks run it together: the first `ranks` of the run
  std::optional<AdaptiveReps> adaptive;  // empty: exactly `reps` repetitions

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
// One line an entry, "entry 3: <describe()> reps=10 warmups=2 chunks=16":
// all that makes its row what it is, for ranks to compare before a run
// (ranks/startup.hpp).
std::vector<std::string> entry_lines(const std::vector<Entry>& entries);

}  // namespace portalab
