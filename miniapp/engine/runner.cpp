#include "engine/runner.hpp"

#include "experiment/experiment.hpp"
#include "platform/console.hpp"
#include "platform/interrupt.hpp"
#include "ranks/comm.hpp"
#include "ranks/watchdog.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

RunSummary run_deck(const Deck& deck, const RunOptions& options,
                    const nlohmann::json& provenance) {
  const Registry& registry = options.registry ? *options.registry : global_registry();
  const Comm& all = options.world ? *options.world : world();
  const std::vector<Entry> entries = expand(deck, registry, all.size());
  Sink sink(options, provenance, entries);
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
  std::size_t case_first_row = 0;
  std::string current;  // the entry in progress, named if a signal abandons it
  try {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      // A signal that came before this entry (during calibration, or while
      // the last one's files were written) abandons none; every rank learns
      // of it at the same gate.
      current.clear();
      if (const int sig = all.gate(true, interrupt_signal()).signal) throw Interrupted(sig);
      const Entry& e = entries[i];
      current = e.describe();
      if (watchdog) watchdog->at(current);
      sink.record(run_entry(e, slot, options));
      const bool last = i + 1 == entries.size();
      if (last || entries[i + 1].case_id != e.case_id) {
        // Several ranks would have to re-measure together: one rank only.
        if (all.size() == 1) sink.recheck_limits(case_first_row, [&] { slot.release(); });
        sink.case_done(*e.experiment, case_first_row);
        case_first_row = sink.rows();
      }
      if (last || entries[i + 1].experiment != e.experiment) sink.experiment_done(e.experiment->name);
    }
  } catch (const Interrupted& signal) {
    sink.interrupted(signal.signal, current);
  }
  return sink.finish();
}

}  // namespace portalab
