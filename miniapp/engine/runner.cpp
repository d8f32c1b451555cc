#include "engine/runner.hpp"

#include "engine/dry_run.hpp"
#include "experiment/experiment.hpp"
#include "limits/calibrate.hpp"
#include "limits/compare.hpp"
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

// A row on k > 1 ranks against the same entry on one rank (expand puts it
// first, in an earlier case): how much faster the group's work went, and
// that over k. `index`: where r will be among the run's rows.
void relate_to_one_rank(Result& r, std::size_t index, const std::vector<Result>& rows,
                        std::map<std::string, std::size_t>& one_rank) {
  if (r.status != Status::pass) return;
  const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", r.experiment, r.variant, r.space,
                                      r.dtype, r.n, to_string(r.copies), to_string(r.parameters));
  if (r.ranks == 1) {
    one_rank[key] = index;
    return;
  }
  const auto it = one_rank.find(key);
  if (it == one_rank.end() || it->second >= rows.size()) return;
  const Result& one = rows[it->second];
  const double work_k = r.bytes > 0 ? r.bytes : r.flops;
  const double work_1 = one.bytes > 0 ? one.bytes : one.flops;
  if (work_k <= 0 || work_1 <= 0 || r.kernel.median <= 0 || one.kernel.median <= 0) return;
  const double speedup = (work_k / r.kernel.median) / (work_1 / one.kernel.median);
  r.set_metric("speedup_over_1_rank", speedup);
  r.set_metric("parallel_efficiency", speedup / r.ranks);
}

// A case's rows as its experiment's relate sees them (experiment/relate.hpp):
// what it compares of each, and the row's own metrics, which it adds to.
std::vector<CaseRow> case_rows(std::span<Result> rows) {
  std::vector<CaseRow> out;
  out.reserve(rows.size());
  for (auto& r : rows)
    out.push_back({.variant = r.variant,
                   .dtype = r.dtype,
                   .n = r.n,
                   .passed = r.status == Status::pass,
                   .kernel_ms = r.kernel.median,
                   .metrics = r.metrics});
  return out;
}

// A case's rows, measured and not yet recorded (one rank): where one beyond
// the cache ran above its space's memory or read limit, frees the case
// (`free_case`), re-measures that space's bandwidths into options.limits
// (recheck_bandwidth) and holds the case's rows of the space to the limits
// as they now are. Rows recorded before keep the limit they were held to,
// which each row records (Limit::value): a row is final when written. A
// failed re-measurement is said and recorded; the limits stay.
void recheck_limits(std::span<Result> rows, Sink& sink, const RunOptions& options,
                    const std::function<void()>& free_case) {
  Calibration* cal = options.limits;
  if (cal == nullptr || !options.recheck_limits) return;
  // The row furthest above its limit, by space.
  std::map<std::string, const Result*> worst;
  for (const Result& r : rows) {
    const SpaceLimits* lim = cal->find(r.space);
    if ((r.status != Status::pass && r.status != Status::fail) || r.ranks != 1 || !lim ||
        (r.limit.bound != Bound::memory && r.limit.bound != Bound::read) || r.pct_of_limit <= 1.0 ||
        !lim->beyond_cache(r.bytes))
      continue;
    const auto [it, added] = worst.try_emplace(r.space, &r);
    if (!added && r.pct_of_limit > it->second->pct_of_limit) it->second = &r;
  }
  if (worst.empty()) return;
  free_case();  // its arrays' memory, for the calibration's
  for (const auto& [space, row] : worst) {
    const Result& r = *row;
    const std::string after = fmt::format("{} {} {} n={}", r.experiment, r.variant, r.dtype, r.n);
    nlohmann::json record = {{"space", space},
                             {"after", after},
                             {"row_pct_of_limit", r.pct_of_limit}};
    std::string said;
    try {
      const Recheck& done = recheck_bandwidth(*cal, space, after, r.pct_of_limit,
                                              std::string(r.limit.kind()));
      record.update(to_json(done));
      said = format_recheck(*cal->find(space), done);
    } catch (const std::exception& e) {
      record["error"] = e.what();
      said = fmt::format("{} limits not re-measured after {} ran at {:.0f}% of them: {}", space,
                         after, 100 * r.pct_of_limit, e.what());
    }
    sink.limits_rechecked(std::move(record), said);
  }
  for (Result& r : rows)
    if (worst.count(r.space)) hold_to_limits(r, *cal);
}

}  // namespace

RunSummary run_deck(const Deck& deck, const RunOptions& options, const nlohmann::json& provenance) {
  const Registry& registry = options.registry ? *options.registry : global_registry();
  const Comm& all = options.world ? *options.world : world();
  return run_deck(deck, expand(deck, registry, all.size()), options, provenance);
}

RunSummary run_deck(const Deck& deck, const std::vector<Entry>& entries, const RunOptions& options,
                    const nlohmann::json& provenance) {
  const Comm& all = options.world ? *options.world : world();
  Sink sink(options, provenance, entries.size(), estimated_ms(entries, options));
  std::map<std::string, std::size_t> one_rank;  // one-rank rows by what they ran
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
  try {
    for (std::size_t first = 0; first < entries.size();) {
      // A signal that came before this case (during calibration, or while
      // the last one's files were written) abandons none; every rank learns
      // of it at the same gate.
      current.clear();
      if (const int sig = all.gate(true, interrupt_signal()).signal) throw Interrupted(sig);
      std::size_t end = first + 1;
      while (end < entries.size() && entries[end].case_id == entries[first].case_id) ++end;
      const std::span<const Entry> entries_of_case(entries.begin() + first, entries.begin() + end);
      const Entry& e = entries[first];
      current = entries_of_case.size() == 1
                    ? e.describe()
                    : fmt::format("{} ({} variants)", e.describe(), entries_of_case.size());
      if (watchdog) watchdog->at(current);
      std::vector<Result> rows = run_case(entries_of_case, slot, options,
                                          order ? &*order : nullptr);
      // The case's figures relating rows, before any of its rows is written:
      // to one rank, and the variants' (ExperimentInfo::relate).
      for (std::size_t k = 0; k < rows.size(); ++k)
        relate_to_one_rank(rows[k], sink.rows() + k, sink.results(), one_rank);
      if (e.experiment->relate && !rows.empty()) {
        std::vector<CaseRow> views = case_rows(rows);
        e.experiment->relate(views);
      }
      // Several ranks would have to re-measure together: one rank only.
      if (all.size() == 1) recheck_limits(rows, sink, options, [&] { slot.release(); });
      for (Result& r : rows) sink.record(std::move(r));
      if (end == entries.size() || entries[end].experiment != e.experiment)
        sink.experiment_done(e.experiment->name);
      first = end;
    }
  } catch (const Interrupted& signal) {
    sink.interrupted(signal.signal, current);
  }
  return sink.finish();
}

}  // namespace portalab
