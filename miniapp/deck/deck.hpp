// Input decks: TOML files that say which experiments run, at which sizes,
// types, variants, spaces and copy modes, and how many repetitions.
//
//   reps = 10                 # global defaults: dtypes spaces reps warmups copies
//   noise = 0.01              # without reps: repeat until the kernel median is this steady
//   min_warmup_s = 0.005      # ... after warm-ups of this long at least (and `warmups` of them)
//   passes = 2                # ... measured in this many passes, each on fresh arrays
//   calibrate = "quick"       # limits measured first: quick | full | none
//   energy = "on"             # energy, clocks and power of every row: on | off
//   profile_reps = 3          # when profiling: this many repetitions everywhere
//   ranks = [1, 2]            # MPI: entries on the first 1, then 2 ranks (default: all)
//   watchdog_s = 1800         # MPI: seconds a rank may wait at a barrier (ranks/watchdog.hpp)
//   [vector_poly]             # one table per experiment
//   sizes = [5_000_000, 1e8]  # or { from = 1e3, to = 1e9, factor = 10 }
//   dtypes = ["float64", "float32"]
//   [copy_overlap]
//   chunks = 16               # an experiment's own parameter (ExperimentSpec)
//
// Everything is validated before anything runs; an error names the file,
// line and column and what was expected.
#pragma once

#include "deck/catalog.hpp"
#include "deck/copy_mode.hpp"

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// Bad input. The message starts with "file:line:column: " where known.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Repetitions until a row's kernel median is steady: until the 95%
// confidence interval of the median (from order statistics) lies within
// `noise` of it, never fewer than min_reps, and no more than max_reps or
// max_time_s seconds of repetitions. Their warm-ups, besides their count,
// last min_warmup_s at least: a core that was idle can run faster for its
// first milliseconds of work than it then sustains (docs/performance.md,
// "Verdicts, measured"), and repetitions timed in that window would say how
// long the process had been idle. A deck's `reps` fixes both counts instead.
//
// They come in `passes`: an experiment's cases are measured once each, then
// again on fresh arrays, and so on; each pass stops by the rule above on its
// own repetitions, with its share of min_reps, max_reps and max_time_s. A
// row is all its passes' repetitions, and each pass's median says how far a
// case moves between two settings of its arrays at two times, which its
// repetitions in one setting cannot (docs/performance.md, "Passes").
struct AdaptiveReps {
  double noise = 0.01;
  int min_reps = 10;
  int max_reps = 1000;
  double max_time_s = 0.1;
  double min_warmup_s = 0.005;
  int passes = 2;

  // Pass `pass`'s share of the budgets: min_reps and max_reps split as
  // evenly as they go (the first passes take what is left over), max_time_s
  // alike.
  AdaptiveReps share(int pass) const;
};

struct ExperimentPlan {
  std::string experiment;
  std::vector<std::size_t> sizes;
  std::vector<std::string> dtypes;
  std::vector<std::string> variants;
  std::vector<std::string> spaces;  // Kokkos' spelling, in the catalog's order
  std::vector<CopyMode> copies;
  int reps = 10;                         // the count where adaptive is empty; else min_reps
  std::optional<AdaptiveReps> adaptive;  // empty: exactly `reps`
  int warmups = 2;         // with adaptive, the least: warm-ups also last its min_warmup_s
  std::vector<int> ranks;  // ascending; empty: all the ranks of the run
  Parameters parameters;   // the experiment's own settings, defaults filled in
};

struct Deck {
  std::string path;
  std::string hash;                 // "fnv1a64:" and 16 hex digits of the file's bytes
  std::string calibrate = "quick";  // measure the machine's limits first: quick | full | none
  bool energy = true;               // read the energy meters around each repetition (energy.hpp)
  // The deck's watchdog_s: for entries whose steps outlast the watchdog's
  // default (ranks/watchdog.hpp); unset: the default.
  std::optional<int> watchdog_s;
  std::vector<ExperimentPlan> plans;  // in the order the deck lists them
};

struct DeckOverrides {
  std::vector<std::string> set;                    // "experiment.key=value" or "key=value"
  std::optional<std::vector<std::string>> spaces;  // --spaces: replaces every plan's
  // --noise: every plan repeats until this steady, a fixed reps included.
  std::optional<double> noise;
};

// The repetitions of a plan as a deck would say them: "reps=10", or
// "noise=0.01 min_reps=10 max_reps=1000 max_time_s=0.1".
std::string repetitions_text(int reps, const std::optional<AdaptiveReps>& adaptive);

// The keys an experiment table accepts, and those accepted at the top level.
const std::vector<std::string>& experiment_keys();
const std::vector<std::string>& global_keys();

// Reads a deck, applies the overrides and checks it against the catalog.
Deck load_deck(const std::string& path, const Catalog& catalog,
               const DeckOverrides& overrides = {});
Deck parse_deck(std::string_view text, const std::string& path, const Catalog& catalog,
                const DeckOverrides& overrides = {});

// --spaces A,B of `run` and `calibrate`, checked as a deck's spaces are:
// each compiled in (any case), none listed twice; Kokkos' spelling, in the
// catalog's order. InputError starting "--spaces" otherwise.
std::vector<std::string> spaces_option(const std::vector<std::string>& given,
                                       const Catalog& catalog);

std::string content_hash(std::string_view bytes);

// A file's bytes, at most max_bytes + 1 of them (the caller refuses a file
// past its limit). InputError naming the file and why when it is no regular
// file that can be read (a folder, a device, a pipe: inspect_input_path).
std::string read_bounded(const std::string& path, std::size_t max_bytes, std::string_view what);
// InputError "path:line:column: nested more than max_depth levels deep" for
// JSON text nested deeper: nlohmann::json recurses once per level.
void check_json_nesting(std::string_view text, const std::string& path, int max_depth);

}  // namespace portalab
