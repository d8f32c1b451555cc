#include "engine/sink.hpp"

#include "experiment/experiment.hpp"
#include "limits/calibrate.hpp"
#include "engine/dry_run.hpp"
#include "platform/interrupt.hpp"
#include "results/analysis.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <chrono>
#include <ostream>
#include <span>

namespace portalab {

nlohmann::json RunSummary::to_json(bool analysis) const {
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& r : results)
    if (r.status == Status::fail || r.status == Status::error)
      failures.push_back({{"experiment", r.experiment}, {"variant", r.variant},
                          {"space", r.space}, {"dtype", r.dtype}, {"n", r.n},
                          {"copies", std::string(portalab::to_string(r.copies))},
                          {"check", std::string(portalab::to_string(r.status))},
                          {"detail", r.note.empty() ? r.check.detail : r.note}});
  nlohmann::json j = {{"entries", results.size()}, {"failed", failed}, {"errors", errors},
                      {"skipped", skipped}, {"not_applicable", not_applicable},
                      {"failures", failures}};
  if (analysis) {
    j["gpu_crossover"] = gpu_crossover_json(find_crossovers(results));
    j["multi_rank_crossover"] = rank_crossover_json(find_rank_crossovers(results));
    j["float64_over_float32"] = dtype_ratios_json(find_dtype_ratios(results));
  }
  if (!limits_rechecked.empty()) j["limits_rechecked"] = limits_rechecked;
  if (!incomplete.empty()) j["incomplete"] = incomplete;
  if (interrupted_by != 0)
    j["interrupted"] = {{"signal", signal_name(interrupted_by)},
                        {"abandoned", abandoned},
                        {"not_run", not_run}};
  return j;
}

Sink::Sink(const RunOptions& options, nlohmann::json provenance, std::span<const Entry> entries)
    : m_options(options), m_provenance(std::move(provenance)), m_entries(entries.size()) {
  // Made before anything is measured: a folder that cannot be written (or
  // that another run writes into) stops the run here, with OutputError.
  if (m_options.out_dir) m_files.emplace(*m_options.out_dir, m_provenance);
  if (m_files && !m_files->moved_aside().empty() && m_options.progress)
    fmt::print(*m_options.progress, "{}\n", m_files->moved_aside());
  // The progress lines' time left comes from the entries' estimates; without
  // limits, from the entries' count.
  if (m_options.progress && m_options.limits)
    for (const auto& e : plan_entries(entries, {m_options.limits, /*ask_spaces=*/true}))
      m_estimated_ms.push_back(e.estimated_ms());
  else if (m_options.progress)
    m_estimated_ms.assign(entries.size(), 0.0);
  m_started = std::chrono::steady_clock::now();
}

// " [1.2 s elapsed, ~3 min 05 s left]" once `done` entries are measured.
std::string Sink::timing(std::size_t done) const {
  const double elapsed =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_started)
          .count();
  return fmt::format(" [{} elapsed, ~{} left]", format_duration(elapsed),
                     format_duration(time_left_ms(m_estimated_ms, done, elapsed)));
}

void Sink::record(Result r) {
  m_summary.failed += r.status == Status::fail;
  m_summary.errors += r.status == Status::error;
  m_summary.skipped += r.status == Status::skipped;
  m_summary.not_applicable += r.status == Status::not_applicable;
  const std::size_t i = m_summary.results.size();
  if (m_options.progress) {
    const std::string what = fmt::format("{} {} {} {} n={} copies={}", r.experiment, r.variant,
                                         r.space, r.dtype, r.n, to_string(r.copies));
    if (r.status == Status::pass || r.status == Status::fail)
      fmt::print(*m_options.progress, "[{}/{}] {}: total {:.4g} ms, kernel {:.4g} ms, {}{}\n",
                 i + 1, m_entries, what, r.total.median, r.kernel.median, to_string(r.status),
                 timing(i + 1));
    else
      fmt::print(*m_options.progress, "[{}/{}] {}: {}: {}{}\n", i + 1, m_entries, what,
                 to_string(r.status), r.note, timing(i + 1));
  }
  if (m_options.tables && !r.shown.empty())
    fmt::print(*m_options.tables, "\n{} {} {} {} n={} copies={}: {}\n{}", r.experiment,
               r.variant, r.space, r.dtype, r.n, to_string(r.copies), to_string(r.status),
               r.shown);
  relate_to_one_rank(r);
  m_summary.results.push_back(std::move(r));
  // Written after every entry: a job killed later keeps what it measured.
  write_files(m_speedups.add(m_summary.results, i), false);
}

// A row on k > 1 ranks against the same entry on one rank (expand puts it
// first): how much faster the group's work went, and that over k.
void Sink::relate_to_one_rank(Result& r) {
  if (r.status != Status::pass) return;
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|{}", r.experiment, r.variant, r.space, r.dtype, r.n,
                  to_string(r.copies), to_string(r.parameters));
  if (r.ranks == 1) {
    m_one_rank[key] = m_summary.results.size();
    return;
  }
  const auto it = m_one_rank.find(key);
  if (it == m_one_rank.end()) return;
  const Result& one = m_summary.results[it->second];
  const double work_k = r.bytes > 0 ? r.bytes : r.flops;
  const double work_1 = one.bytes > 0 ? one.bytes : one.flops;
  if (work_k <= 0 || work_1 <= 0 || r.kernel.median <= 0 || one.kernel.median <= 0) return;
  const double speedup = (work_k / r.kernel.median) / (work_1 / one.kernel.median);
  r.set_metric("speedup_over_1_rank", speedup);
  r.set_metric("parallel_efficiency", speedup / r.ranks);
}

void Sink::case_done(const ExperimentInfo& experiment, std::size_t first) {
  if (!experiment.relate || first >= m_summary.results.size()) return;
  experiment.relate(std::span<Result>(m_summary.results).subspan(first));
  write_files(first, false);
}

void Sink::recheck_limits(std::size_t first, const std::function<void()>& free_case) {
  Calibration* cal = m_options.limits;
  if (cal == nullptr || !m_options.recheck_limits) return;
  // The row furthest above its limit, by space.
  std::map<std::string, std::size_t> worst;
  for (std::size_t i = first; i < m_summary.results.size(); ++i) {
    const Result& r = m_summary.results[i];
    const SpaceLimits* lim = cal->find(r.space);
    if ((r.status != Status::pass && r.status != Status::fail) || r.ranks != 1 || !lim ||
        (r.limit.bound != Bound::memory && r.limit.bound != Bound::read) ||
        r.pct_of_limit <= 1.0 || !lim->beyond_cache(r.bytes))
      continue;
    const auto [it, added] = worst.try_emplace(r.space, i);
    if (!added && r.pct_of_limit > m_summary.results[it->second].pct_of_limit) it->second = i;
  }
  if (worst.empty()) return;
  free_case();  // its arrays' memory, for the calibration's
  for (const auto& [space, i] : worst) {
    const Result& r = m_summary.results[i];
    const std::string after = fmt::format("{} {} {} n={}", r.experiment, r.variant, r.dtype, r.n);
    nlohmann::json record = {{"space", space}, {"after", after}, {"row_pct_of_limit", r.pct_of_limit}};
    std::string said;
    try {
      const Recheck& done =
          recheck_bandwidth(*cal, space, after, r.pct_of_limit, std::string(r.limit.kind()));
      record.update(to_json(done));
      said = format_recheck(*cal->find(space), done);
    } catch (const std::exception& e) {
      record["error"] = e.what();
      said = fmt::format("{} limits not re-measured after {} ran at {:.0f}% of them: {}", space,
                         after, 100 * r.pct_of_limit, e.what());
    }
    m_summary.limits_rechecked.push_back(std::move(record));
    if (m_options.progress) fmt::print(*m_options.progress, "limits: {}\n", said);
  }
  for (auto& r : m_summary.results)
    if (worst.count(r.space)) hold_to_limits(r, *cal);
  write_files(0, false);
}

void Sink::experiment_done(const std::string& experiment) {
  if (m_options.tables)
    *m_options.tables << format_table(m_summary.results, experiment) << std::flush;
}

void Sink::interrupted(int signal, const std::string& abandoned) {
  m_summary.interrupted_by = signal;
  m_summary.abandoned = abandoned;
  m_summary.not_run = m_entries - m_summary.results.size();
  if (!m_summary.results.empty()) experiment_done(m_summary.results.back().experiment);
}

RunSummary Sink::finish() {
  write_files(m_summary.results.size(), true);
  return std::move(m_summary);
}

// rows[first_changed, end) are new or changed. An output error is said once;
// then nothing more is written, and measuring goes on.
void Sink::write_files(std::size_t first_changed, bool last) {
  if (!m_files || !m_summary.incomplete.empty()) return;
  try {
    if (last)
      m_files->finish(m_summary.results, m_summary.to_json(true));
    else
      m_files->update(m_summary.results, first_changed, m_summary.to_json(false));
  } catch (const OutputError& e) {
    m_summary.incomplete = e.what();
    if (m_options.progress)
      fmt::print(*m_options.progress,
                 "portalab: {}: results are no longer written; the run goes on\n", e.what());
  }
}

}  // namespace portalab
