#include "engine/sink.hpp"

#include "engine/dry_run.hpp"
#include "output/console.hpp"
#include "output/files.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <span>

namespace portalab {

Sink::Sink(const RunOptions& options, const nlohmann::json& provenance, std::size_t entries,
           std::vector<double> estimated_ms)
    : m_entries(entries),
      // Output that fails (a full disk) is said once; then those files are
      // no longer written, and measuring goes on.
      m_printers([this](const OutputError& e) {
        m_summary.incomplete = e.what();
        m_printers.progress(
            fmt::format("portalab: {}: results are no longer written; the run goes on", e.what()));
      }),
      m_progress(options.progress != nullptr),
      m_estimated_ms(std::move(estimated_ms)) {
  m_work.total = static_cast<double>(entries);
  for (const double ms : m_estimated_ms) m_work.estimated_total_ms += ms;
  // The files first: their failure is in the summary before the console's
  // last lines say it. Made before anything is measured: a folder that
  // cannot be written (or that another run writes into) stops the run here,
  // with OutputError.
  std::string moved_aside;
  if (options.out_dir) {
    auto files = std::make_unique<FilesPrinter>(*options.out_dir, provenance);
    moved_aside = files->moved_aside();
    m_printers.add(std::move(files));
  }
  if (options.progress || options.tables)
    m_printers.add(
        std::make_unique<ConsolePrinter>(options.progress, options.tables, options.out_dir));
  if (!moved_aside.empty()) m_printers.progress(moved_aside);
  m_started = std::chrono::steady_clock::now();
}

// " [1.2 s elapsed, ~3 min 05 s left]".
std::string Sink::timing() const {
  const double elapsed = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - m_started)
                             .count();
  return fmt::format(" [{} elapsed, ~{} left]", format_duration(elapsed),
                     format_duration(time_left_ms(m_work, elapsed)));
}

void Sink::measured(std::size_t first, std::size_t end, int passes) {
  const double share = 1.0 / std::max(passes, 1);
  for (std::size_t i = first; i < end; ++i) {
    m_work.done += share;
    if (i < m_estimated_ms.size()) m_work.estimated_done_ms += share * m_estimated_ms[i];
  }
}

void Sink::record(Result r) {
  m_summary.failed += r.status == Status::fail;
  m_summary.errors += r.status == Status::error;
  m_summary.skipped += r.status == Status::skipped;
  m_summary.not_applicable += r.status == Status::not_applicable;
  m_summary.results.push_back(std::move(r));
  const std::size_t done = m_summary.results.size();
  // Said after every entry: a job killed later keeps what it measured.
  m_printers.row(m_summary.results.back(), m_summary,
                 {done, m_entries, m_progress ? timing() : std::string()});
}

void Sink::limits_rechecked(nlohmann::json record, const std::string& said) {
  m_summary.limits_rechecked.push_back(std::move(record));
  m_printers.progress("limits: " + said);
}

void Sink::pass_done(const std::string& experiment, int pass, int passes) {
  m_printers.progress(fmt::format("{}: pass {} of {} done; its rows come with the last{}",
                                  experiment, pass + 1, passes,
                                  m_progress ? timing() : std::string()));
}

void Sink::experiment_done(const std::string& experiment) {
  if (experiment == m_tabled) return;  // said once
  m_printers.experiment_done(m_summary.results, experiment);
  m_tabled = experiment;
}

void Sink::interrupted(int signal, const std::string& abandoned) {
  m_summary.interrupted_by = signal;
  m_summary.abandoned = abandoned;
  m_summary.not_run = m_entries - m_summary.results.size();
  if (!m_summary.results.empty()) experiment_done(m_summary.results.back().experiment);
}

RunSummary Sink::finish() {
  m_printers.run_done(m_summary);
  return std::move(m_summary);
}

}  // namespace portalab
