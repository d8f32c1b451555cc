// The loop of a run (the Session's, engine/session.hpp): a validated deck in
// four stages, a file each:
//   expand     the deck into entries, one per result row, in run order
//              (engine/expand.hpp)
//   run_case   one case's entries into Results: set up its case once, time
//              each variant's phases (cold call, warm-ups, fenced repetitions,
//              the variants taking turns), check each; with several ranks,
//              their parts combined (engine/run_case.hpp)
//   Relations  every figure relating rows, when the case closes: to one rank,
//              the variants', limits re-measured, the speedup over the
//              baseline space (engine/relate.hpp)
//   Sink       the rows written, final: progress, tables and the result
//              files (engine/sink.hpp)
#pragma once

#include "deck/deck.hpp"
#include "engine/run_case.hpp"
#include "engine/expand.hpp"
#include "results/result.hpp"
#include "engine/sink.hpp"

#include <nlohmann/json.hpp>

namespace portalab {

// All four stages, on the plan the Session made (entries: expand(deck, ...)
// on the ranks of options.world). Stops early, with what it has, when a
// signal arrives (interrupt.hpp).
RunSummary run_deck(const std::vector<Entry>& entries, const RunOptions& options,
                    const nlohmann::json& provenance);
// The same, the deck expanded here (for tests and callers without a plan).
RunSummary run_deck(const Deck& deck, const RunOptions& options, const nlohmann::json& provenance);

}  // namespace portalab
