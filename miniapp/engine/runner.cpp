#include "engine/runner.hpp"

#include "engine/dry_run.hpp"
#include "engine/relate.hpp"
#include "experiment/registry.hpp"
#include "limits/calibrate.hpp"
#include "support/console.hpp"
#include "support/interrupt.hpp"
#include "ranks/comm.hpp"
#include "ranks/watchdog.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

namespace {

// Each entry's estimate, for the progress lines' time left (dry_run.hpp);
// without limits, nothing (they count entries); without progress, none.
std::vector<double> estimated_ms(std::span<const Entry> entries, const RunOptions& options) {
  std::vector<double> estimated_ms;
  if (options.progress && options.limits)
    for (const auto& e : plan_entries(entries, {options.limits, /*ask_spaces=*/true}))
      estimated_ms.push_back(e.estimated_ms());
  else if (options.progress)
    estimated_ms.assign(entries.size(), 0.0);
  return estimated_ms;
}

}  // namespace

RunSummary run_deck(const Deck& deck, const RunOptions& options, const nlohmann::json& provenance) {
  const Registry& registry = options.registry ? *options.registry : global_registry();
  const Comm& all = options.world ? *options.world : world();
  return run_deck(expand(deck, registry, all.size()), options, provenance);
}

RunSummary run_deck(const std::vector<Entry>& entries, const RunOptions& options,
                    const nlohmann::json& provenance) {
  const Comm& all = options.world ? *options.world : world();
  Sink sink(options, provenance, entries.size(), estimated_ms(entries, options));
  Relations relations;
  std::optional<Watchdog> dog;
  if (all.size() > 1 && options.watchdog_s > 0)
    dog.emplace(options.watchdog_s, [rank = all.rank()](const std::string& where, double s) {
      print_to(stderr,
               "portalab: rank {}: no gate passed for {} s, in {}: a rank stopped before a "
               "collective the others wait in (or one step takes longer); aborting every "
               "rank. The deck's watchdog_s or PORTALAB_WATCHDOG_S sets the limit, 0 turns it "
               "off\n",
               rank, s, where);
      abort_world(3);  // the driver's exit code for the unexpected
    });
  watchdog = dog ? &*dog : nullptr;
  struct Unset {
    ~Unset() { watchdog = nullptr; }
  } unset;
  CaseSlot slot;
  // The order of each case's repetitions, alike on every rank (one seed).
  std::optional<std::mt19937_64> order;
  if (options.order_seed) order.emplace(*options.order_seed);
  std::string current;  // the entry in progress, named if a signal abandons it
  // The entries in passes (AdaptiveReps::passes), in blocks of adjacent
  // experiments with one count of them: a block's cases once each, then all
  // again on fresh arrays, its rows recorded as the last pass makes them
  // final. A block spans experiments so that a case's passes lie apart in
  // time: a slow stretch of the machine then reaches one of them, and the
  // pass medians show it (docs/performance.md, Passes a deck apart). What an
  // interrupted pass leaves is recorded as the passes before it made it.
  std::vector<Carried> carried;
  std::size_t recorded = 0;  // of the block's entries
  const auto close = [&](std::span<Result> rows, const Entry& e, bool recheck_limits) {
    // Every figure relating rows, before any of the case's rows is written.
    // Limits are re-measured on one rank only (several would have to,
    // together).
    const LimitsRecheck recheck{.limits = options.recheck_limits ? options.limits : nullptr,
                                .free_case = [&] { slot.release(); },
                                .rechecked =
                                    [&](nlohmann::json record, const std::string& said) {
                                      sink.limits_rechecked(std::move(record), said);
                                    }};
    relations.close_case(rows, e.experiment->relate,
                         all.size() == 1 && recheck_limits ? &recheck : nullptr);
    for (Result& r : rows) sink.record(std::move(r));
  };
  // The end of the case that begins at `first`, before `limit`: its
  // entries are adjacent.
  const auto case_end = [&](std::size_t first, std::size_t limit) {
    std::size_t end = first + 1;
    while (end < limit && entries[end].case_id == entries[first].case_id) ++end;
    return end;
  };
  const auto passes_of = [](const Entry& e) { return e.adaptive ? e.adaptive->passes : 1; };
  std::size_t block = 0;  // the first entry of the block in progress
  int passes = 1;         // its passes
  try {
    for (std::size_t block_end = 0; block < entries.size(); block = block_end) {
      passes = passes_of(entries[block]);
      block_end = block + 1;
      while (block_end < entries.size() && passes_of(entries[block_end]) == passes) ++block_end;
      carried.assign(block_end - block, Carried{});
      recorded = 0;
      for (int pass = 0; pass < passes; ++pass) {
        const bool last = pass + 1 == passes;
        slot.release();  // each pass on fresh arrays
        for (std::size_t first = block; first < block_end;) {
          // A signal that came before this case (during calibration, or while
          // the last one's files were written) abandons none; every rank learns
          // of it at the same gate.
          current.clear();
          if (const int sig = all.gate(true, interrupt_signal()).signal) throw Interrupted(sig);
          const std::size_t end = case_end(first, block_end);
          const std::span<const Entry> entries_of_case(entries.begin() + first,
                                                       entries.begin() + end);
          const Entry& e = entries[first];
          current = entries_of_case.size() == 1
                        ? e.describe()
                        : fmt::format("{} ({} variants)", e.describe(), entries_of_case.size());
          if (passes > 1) current += fmt::format(", pass {} of {}", pass + 1, passes);
          if (watchdog) watchdog->at(current);
          std::vector<Result> rows =
              run_case(entries_of_case, slot, options, order ? &*order : nullptr, pass,
                       std::span(carried).subspan(first - block, end - first));
          sink.measured(first, end, passes);
          if (last) {
            close(rows, e, /*recheck_limits=*/true);
            recorded = end - block;
          }
          first = end;
          if (first < block_end && entries[first].experiment == e.experiment) continue;
          if (last)
            sink.experiment_done(e.experiment->name);
          else
            sink.pass_done(e.experiment->name, pass, passes);
        }
      }
    }
  } catch (const Interrupted& signal) {
    // The block's rows that an earlier pass measured, as it left them, each
    // experiment's table once its rows are in.
    for (std::size_t k = recorded; block < entries.size() && k < carried.size();) {
      const std::size_t end = case_end(block + k, block + carried.size()) - block;
      if (sink.rows() && sink.results().back().experiment != entries[block + k].experiment->name)
        sink.experiment_done(sink.results().back().experiment);
      std::vector<Result> rows;
      for (std::size_t j = k; j < end && carried[j].passes > 0; ++j) {
        rows.push_back(carried[j].row);
        Result& r = rows.back();
        r.note += fmt::format("{}interrupted after {} of {} passes", r.note.empty() ? "" : "; ",
                              carried[j].passes, passes);
      }
      if (!rows.empty()) close(rows, entries[block + k], /*recheck_limits=*/false);
      k = end;
    }
    sink.interrupted(signal.signal, current);
  }
  return sink.finish();
}

}  // namespace portalab
