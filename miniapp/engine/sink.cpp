#include "engine/sink.hpp"

#include "engine/dry_run.hpp"
#include "support/interrupt.hpp"
#include "results/analysis.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <span>

namespace portalab {

nlohmann::json RunSummary::to_json(bool analysis) const {
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& r : results)
    if (r.status == Status::fail || r.status == Status::error)
      failures.push_back({{"experiment", r.experiment},
                          {"variant", r.variant},
                          {"space", r.space},
                          {"dtype", r.dtype},
                          {"n", r.n},
                          {"copies", std::string(portalab::to_string(r.copies))},
                          {"check", std::string(portalab::to_string(r.status))},
                          {"detail", r.note.empty() ? r.check.detail : r.note}});
  nlohmann::json j = {{"entries", results.size()},
                      {"failed", failed},
                      {"errors", errors},
                      {"skipped", skipped},
                      {"not_applicable", not_applicable},
                      {"failures", failures}};
  if (analysis) j.update(analysis_json(results));
  if (!limits_rechecked.empty()) j["limits_rechecked"] = limits_rechecked;
  if (!incomplete.empty()) j["incomplete"] = incomplete;
  if (interrupted_by != 0)
    j["interrupted"] = {{"signal", signal_name(interrupted_by)},
                        {"abandoned", abandoned},
                        {"not_run", not_run}};
  return j;
}

Sink::Sink(const RunOptions& options, nlohmann::json provenance, std::size_t entries,
           std::vector<double> estimated_ms)
    : m_options(options),
      m_provenance(std::move(provenance)),
      m_entries(entries),
      m_estimated_ms(std::move(estimated_ms)) {
  // Made before anything is measured: a folder that cannot be written (or
  // that another run writes into) stops the run here, with OutputError.
  if (m_options.out_dir) m_files.emplace(*m_options.out_dir, m_provenance);
  if (m_files && !m_files->moved_aside().empty() && m_options.progress)
    fmt::print(*m_options.progress, "{}\n", m_files->moved_aside());
  m_started = std::chrono::steady_clock::now();
}

// " [1.2 s elapsed, ~3 min 05 s left]" once `done` entries are measured.
std::string Sink::timing(std::size_t done) const {
  const double elapsed = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - m_started)
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
    fmt::print(*m_options.tables, "\n{} {} {} {} n={} copies={}: {}\n{}", r.experiment, r.variant,
               r.space, r.dtype, r.n, to_string(r.copies), to_string(r.status), r.shown);
  m_summary.results.push_back(std::move(r));
  // Written after every entry: a job killed later keeps what it measured.
  write_files(false);
}

void Sink::limits_rechecked(nlohmann::json record, const std::string& said) {
  m_summary.limits_rechecked.push_back(std::move(record));
  if (m_options.progress) fmt::print(*m_options.progress, "limits: {}\n", said);
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
  write_files(true);
  return std::move(m_summary);
}

// The last row recorded is new (or, `last`, none: the run ends). An output
// error is said once; then nothing more is written, and measuring goes on.
void Sink::write_files(bool last) {
  if (!m_files || !m_summary.incomplete.empty()) return;
  try {
    if (last)
      m_files->finish(m_summary.to_json(true));
    else
      m_files->append(std::span<const Result>(m_summary.results).last(1), m_summary.to_json(false));
  } catch (const OutputError& e) {
    m_summary.incomplete = e.what();
    if (m_options.progress)
      fmt::print(*m_options.progress,
                 "portalab: {}: results are no longer written; the run goes on\n", e.what());
  }
}

}  // namespace portalab
