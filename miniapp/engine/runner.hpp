// Runs a validated deck in three stages, a file each:
//   expand     the deck into entries, one per result row, in run order
//              (engine/expand.hpp)
//   run_entry  one entry into a Result: set up (or reuse) its case, time its
//              phases (cold call, warm-ups, fenced repetitions), check it
//              (engine/run_entry.hpp)
//   Sink       everything done with the results: progress, speedups, figures
//              relating a case's variants, tables and the result files
//              (engine/sink.hpp)
// A distributed run adds its ranks' results up in the sink's place.
#pragma once

#include "deck/deck.hpp"
#include "engine/run_entry.hpp"
#include "engine/expand.hpp"
#include "results/result.hpp"
#include "engine/sink.hpp"

#include <nlohmann/json.hpp>

namespace portalab {

// All three stages. Stops early, with what it has, when a signal arrives
// (interrupt.hpp).
RunSummary run_deck(const Deck& deck, const RunOptions& options,
                    const nlohmann::json& provenance);

}  // namespace portalab
