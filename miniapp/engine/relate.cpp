#include "engine/relate.hpp"

#include "limits/calibrate.hpp"
#include "limits/compare.hpp"
#include "platform/space_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace portalab {
namespace {

// What a row on k ranks is compared with: the same entry on one rank.
std::string one_rank_key(const Result& r) {
  return fmt::format("{}|{}|{}|{}|{}|{}|{}", r.experiment, r.variant, r.space, r.dtype, r.n,
                     to_string(r.copies), to_string(r.parameters));
}

double work(const Result& r) { return r.bytes > 0 ? r.bytes : r.flops; }

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

// Where a row of the case beyond the cache ran above its space's memory or
// read limit: frees the case, re-measures that space's bandwidths into the
// limits (recheck_bandwidth) and holds the case's rows of the space to the
// limits as they now are. Rows written before keep the limit they were held
// to, which each row records (Limit::value). A failed re-measurement is said
// and recorded; the limits stay.
void recheck_limits(std::span<Result> rows, const LimitsRecheck& recheck) {
  Calibration& cal = *recheck.limits;
  // The row furthest above its limit, by space.
  std::map<std::string, const Result*> worst;
  for (const Result& r : rows) {
    const SpaceLimits* lim = cal.find(r.space);
    if ((r.status != Status::pass && r.status != Status::fail) || r.ranks != 1 || !lim ||
        (r.limit.bound != Bound::memory && r.limit.bound != Bound::read) || r.pct_of_limit <= 1.0 ||
        !r.limit.beyond_cache)
      continue;
    const auto [it, added] = worst.try_emplace(r.space, &r);
    if (!added && r.pct_of_limit > it->second->pct_of_limit) it->second = &r;
  }
  if (worst.empty()) return;
  recheck.free_case();  // its arrays' memory, for the calibration's
  for (const auto& [space, row] : worst) {
    const Result& r = *row;
    const std::string after = fmt::format("{} {} {} n={}", r.experiment, r.variant, r.dtype, r.n);
    nlohmann::json record = {{"space", space},
                             {"after", after},
                             {"row_pct_of_limit", r.pct_of_limit}};
    std::string said;
    try {
      const std::string kind(r.limit.kind());
      const Recheck& done = recheck_bandwidth(cal, space, after, r.pct_of_limit, kind);
      record.update(to_json(done));
      said = format_recheck(*cal.find(space), done);
    } catch (const std::exception& e) {
      record["error"] = e.what();
      said = fmt::format("{} limits not re-measured after {} ran at {:.0f}% of them: {}", space,
                         after, 100 * r.pct_of_limit, e.what());
    }
    recheck.rechecked(std::move(record), said);
  }
  for (Result& r : rows)
    if (worst.count(r.space)) hold_to_limits(r, cal);
}

}  // namespace

void Relations::relate_to_one_rank(Result& r) const {
  if (r.status != Status::pass || r.ranks == 1) return;
  const auto it = m_one_rank.find(one_rank_key(r));
  if (it == m_one_rank.end()) return;
  const OneRank& one = it->second;
  const double work_k = work(r);
  if (work_k <= 0 || one.work <= 0 || r.kernel.median <= 0 || one.kernel_ms <= 0) return;
  const double speedup = (work_k / r.kernel.median) / (one.work / one.kernel_ms);
  r.set_metric("speedup_over_1_rank", speedup);
  r.set_metric("parallel_efficiency", speedup / r.ranks);
}

// The baseline of a row among its group so far, itself included: the first
// compiled space that passed with the same copy mode, or a host space in any
// mode (a host space's copies are no-ops, and pinned runs on devices only),
// whichever comes first.
void Relations::speedup_over_baseline(Result& r) {
  static const std::vector<std::string> order = enabled_space_names();
  auto& group = m_groups[{r.experiment, r.variant, r.dtype, r.n, r.ranks}];
  group.push_back({.space = r.space,
                   .copies = r.copies,
                   .passed = r.status == Status::pass,
                   .total_ms = r.total.median});
  auto rank = [&](const std::string& space) {
    return std::find(order.begin(), order.end(), space) - order.begin();
  };
  // The same copy mode wins over another of the same space.
  auto key = [&](const Member& x) { return std::make_pair(rank(x.space), x.copies != r.copies); };
  const Member* b = nullptr;
  if (r.status == Status::pass && r.total.median > 0)
    for (const Member& c : group) {
      if (!c.passed) continue;
      if (c.copies != r.copies && !is_host_space(c.space)) continue;
      if (!b || key(c) < key(*b)) b = &c;
    }
  if (b) {
    r.speedup_over_baseline = b->total_ms / r.total.median;
    r.baseline = b->space;
  } else {
    r.speedup_over_baseline = 0.0;
    r.baseline.clear();
  }
}

void Relations::close_case(std::span<Result> rows, const Relate& relate,
                           const LimitsRecheck* recheck) {
  for (Result& r : rows) relate_to_one_rank(r);
  if (relate && !rows.empty()) {
    std::vector<CaseRow> views = case_rows(rows);
    relate(views);
  }
  if (recheck && recheck->limits) recheck_limits(rows, *recheck);
  for (Result& r : rows) {
    if (r.status == Status::pass && r.ranks == 1)
      m_one_rank[one_rank_key(r)] = {.work = work(r), .kernel_ms = r.kernel.median};
    speedup_over_baseline(r);
  }
}

}  // namespace portalab
