#include "output/console.hpp"

#include "deck/deck_search.hpp"
#include "experiment/registry.hpp"
#include "limits/calibrate.hpp"
#include "output/text_table.hpp"
#include "platform/space_names.hpp"
#include "results/analysis.hpp"
#include "store/health.hpp"
#include "store/store.hpp"
#include "support/console.hpp"
#include "support/exit_status.hpp"
#include "support/interrupt.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ostream>

namespace portalab {
namespace {

std::string number(const nlohmann::json& v, const char* spec = "{:.4g}") {
  return v.is_number() ? fmt::format(fmt::runtime(spec), v.get<double>()) : "-";
}

std::string number(const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : "-"; }

std::string percent(const std::optional<double>& v) {
  return v ? fmt::format("{:+.1f}%", 100 * *v) : "";
}

// Text of an imported results.json (names, hosts, CPU models, job ids,
// paths) as a table shows it: quoted and cut as the run's messages are
// (support/text.hpp); --json gives it exact.
std::string cell(const std::string& s) { return shown(s); }
std::string cell(const nlohmann::json& s) {
  return s.is_string() ? shown(s.get<std::string>()) : "-";
}

std::string key_text(const store::SeriesKey& k) {
  return fmt::format("{} {} {} n={} {} {} {} threads={} on {}{}", cell(k.experiment),
                     cell(k.variant), cell(k.dtype), k.n, cell(k.space), cell(k.copies),
                     cell(k.library), k.threads, cell(k.machine),
                     k.gpu.empty() ? std::string() : fmt::format(" {}", cell(k.gpu)));
}

std::string or_dash(const std::string& s) { return s.empty() ? "-" : shown(s); }

std::string changes_text(const std::vector<store::HistoryChange>& changes) {
  if (changes.empty())
    return "nothing recorded changed (the same code path, build, clocks and library)";
  std::string out;
  for (const auto& c : changes)
    out += fmt::format("{}{} {} -> {}", out.empty() ? "" : "; ", cell(c.what), or_dash(c.from),
                       or_dash(c.to));
  return out;
}

// The latest run's code path, or how it changed since the base run: a
// figure that moved because calibration chose another path says so.
std::string path_text(const store::HistoryRow& r) {
  for (const auto& c : r.changes)
    if (c.what == "path") return fmt::format("{} -> {}", or_dash(c.from), or_dash(c.to));
  return or_dash(r.runs.back().path.value_or(""));
}

// A line per figure; the last column says which are out of line (and
// why at the end, with the member's other reasons).
std::string members_table(const nlohmann::json& members, const char* what) {
  std::vector<std::vector<std::string>> lines{{what, "host", "model", "quantity", "value", "unit",
                                               "x median", "reference", "x reference", ""}};
  for (const auto& m : members) {
    const std::string id = cell(m["id"]);
    for (const char* part : {"limits", "rows"})
      for (const auto& f : m[part]) {
        std::string flag = f.value("flagged", nlohmann::json::array()).empty() ? "" : "OUTLIER";
        if (f.contains("unsteady"))
          flag += fmt::format("{}unsteady (x{:.1f})", flag.empty() ? "" : " ",
                              f["unsteady"].get<double>());
        lines.push_back(
            {id, cell(m["host"]), cell(m["model"]), cell(f["quantity"]), number(f["value"]),
             cell(f["unit"]), f.contains("vs_median") ? number(f["vs_median"], "{:.3f}") : "-",
             f.contains("reference") ? number(f["reference"]) : "-",
             f.contains("vs_reference") ? number(f["vs_reference"], "{:.3f}") : "-", flag});
      }
  }
  return text_table(lines);
}

std::string health_number(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

void ConsolePrinter::progress(std::string_view line) {
  if (m_progress) fmt::print(*m_progress, "{}\n", line);
}

void ConsolePrinter::row(const Result& r, const RunSummary&, const RowProgress& at) {
  if (m_progress) {
    const std::string what = fmt::format("{} {} {} {} n={} copies={}", r.experiment, r.variant,
                                         r.space, r.dtype, r.n, to_string(r.copies));
    if (r.status == Status::pass || r.status == Status::fail)
      fmt::print(*m_progress, "[{}/{}] {}: total {:.4g} ms, kernel {:.4g} ms, {}{}\n", at.done,
                 at.of, what, r.total.median, r.kernel.median, to_string(r.status), at.timing);
    else
      fmt::print(*m_progress, "[{}/{}] {}: {}: {}{}\n", at.done, at.of, what, to_string(r.status),
                 r.note, at.timing);
  }
  if (m_out && !r.shown.empty())
    fmt::print(*m_out, "\n{} {} {} {} n={} copies={}: {}\n{}", r.experiment, r.variant, r.space,
               r.dtype, r.n, to_string(r.copies), to_string(r.status), r.shown);
}

void ConsolePrinter::experiment_done(std::span<const Result> rows, const std::string& experiment) {
  if (m_out) *m_out << format_table(rows, experiment) << std::flush;
}

// The end of a run: its conclusions (results/analysis.hpp), the counts,
// each failure, the limits re-measured, where the files are.
void ConsolePrinter::run_done(const RunSummary& summary) {
  if (!m_out) return;
  std::ostream& out = *m_out;
  out << format_analysis(summary.results);
  fmt::print(out, "\n{} entries: {} passed, {} failed, {} errors, {} skipped, {} not applicable\n",
             summary.results.size(),
             summary.results.size() - summary.failed - summary.errors - summary.skipped -
                 summary.not_applicable,
             summary.failed, summary.errors, summary.skipped, summary.not_applicable);
  // A copy: a range-for over a member of a temporary reads freed memory (ASan).
  const nlohmann::json failures = summary.to_json(false)["failures"];
  for (const auto& f : failures)
    fmt::print(out, "  {}: {} {} {} {} n={} copies={}: {}\n", f["check"].get<std::string>(),
               f["experiment"].get<std::string>(), f["variant"].get<std::string>(),
               f["space"].get<std::string>(), f["dtype"].get<std::string>(),
               f["n"].get<std::size_t>(), f["copies"].get<std::string>(),
               f["detail"].get<std::string>());
  // Said again at the end: tables printed before a re-measurement show the
  // lower limit, the files every row against the higher.
  for (const auto& r : summary.limits_rechecked)
    fmt::print(out, "limits of {} re-measured after {} ran at {:.0f}% of them: {}\n",
               r["space"].get<std::string>(), r["after"].get<std::string>(),
               100 * r["row_pct_of_limit"].get<double>(),
               r.contains("error")
                   ? "failed: " + r["error"].get<std::string>()
                   : fmt::format("{} limit {:.1f} GB/s before; the result files hold every row "
                                 "of {} against the limits as re-measured",
                                 r["limit"].get<std::string>(),
                                 r["limit_before_gbps"].get<double>(),
                                 r["space"].get<std::string>()));
  if (!summary.incomplete.empty())
    fmt::print(out,
               "results INCOMPLETE: {}; the files in {} hold the entries written before "
               "(results.jsonl the most)\n",
               summary.incomplete, shown(m_out_dir.value_or("")));
  else if (m_out_dir)
    fmt::print(out, "results: {0}/results.csv, {0}/results.json\n", shown(*m_out_dir));
  if (summary.interrupted_by != 0)
    fmt::print(
        out, "interrupted by {}: {}; {} entries not run\n", signal_name(summary.interrupted_by),
        summary.abandoned.empty() ? "no entry in progress" : "abandoned " + summary.abandoned,
        summary.not_run);
  else if (summary.failed + summary.errors == 0 && summary.incomplete.empty() &&
           nothing_measured(summary))
    fmt::print(out, "nothing was measured: every entry was {} (exit status {})\n",
               summary.not_applicable > 0 && summary.skipped > 0 ? "not applicable or skipped"
               : summary.skipped > 0                             ? "skipped for memory"
                                                                 : "not applicable here",
               exit_nothing_measured);
  out << std::flush;
}
void ConsolePrinter::limits(const Calibration& c) {
  if (m_out) *m_out << format_calibration(c) << std::flush;
}

void ConsolePrinter::experiments(std::span<const ExperimentInfo> all) {
  if (!m_out) return;
  fmt::print(*m_out, "spaces compiled in: {}\n\n", fmt::join(enabled_space_names(), ", "));
  for (const auto& e : all) {
    fmt::print(*m_out,
               "{}\n  {}\n  variants: {}\n  dtypes:   {} (default {})\n  sizes:    {} by default\n",
               e.name, e.summary, fmt::join(e.variants, ", "), fmt::join(e.dtypes, ", "),
               fmt::join(e.default_dtypes, ", "), fmt::join(e.default_sizes, ", "));
    for (const auto& p : e.parameters)
      fmt::print(*m_out, "  {} = {} by default, {} to {}: {}\n", p.name, p.default_value, p.min,
                 p.max, p.meaning);
  }
}

void ConsolePrinter::decks(const DeckIndex& index) {
  if (!m_out) return;
  fmt::print(*m_out,
             "decks by name: `portalab run NAME` looks for NAME, then NAME.toml in the "
             "working folder, then in these folders, in this order:\n");
  for (const auto& f : index.folders) fmt::print(*m_out, "  {}\n", shown(f, 4096));
  if (index.folders.empty())
    fmt::print(*m_out, "  (none found beside this executable: give a deck's path)\n");
  std::size_t width = 0;
  for (const auto& d : index.decks) width = std::max(width, d.listing->name.size());
  if (!index.decks.empty()) fmt::print(*m_out, "\n");
  for (const auto& d : index.decks)
    fmt::print(*m_out, "{:<{}}  {}\n", shown(d.listing->name), width, shown(d.listing->summary));
}

void ConsolePrinter::history(const store::History& h) {
  if (!m_out) return;
  std::vector<std::vector<std::string>> lines{
      {"verdict", "change", "runs", "latest ms", "base ms", "experiment", "variant", "dtype", "n",
       "space", "copies", "library", "path", "threads", "machine", "gpu"}};
  for (const auto& r : h.rows) {
    const auto& k = r.key;
    lines.push_back(
        {cell(r.verdict) + (r.regression ? " REGRESSION" : "") + (r.noisy ? " NOISY" : ""),
         percent(r.change), std::to_string(r.runs.size()), number(r.runs.back().m.ms),
         r.base ? number(r.runs[*r.base].m.ms) : "-", cell(k.experiment), cell(k.variant),
         cell(k.dtype), std::to_string(k.n), cell(k.space), cell(k.copies), cell(k.library),
         path_text(r), std::to_string(k.threads), cell(k.machine),
         k.gpu.empty() ? "-" : cell(k.gpu)});
  }
  std::string out = fmt::format(
                        "history: {} rows, the last {} runs of each, {} ms; latest run against the "
                        "earlier ones\n",
                        h.rows.size(), h.last, h.phase) +
                    text_table(lines);
  out += fmt::format("\nregressions: {}{}\n", h.regressions.size(),
                     h.regressions.empty()
                         ? fmt::format(" (none slower by more than {:g}%)", h.threshold_pct)
                         : "");
  for (const std::size_t i : h.regressions) {
    const auto& r = h.rows[i];
    out += fmt::format("  {} {}: {} (base {} -> latest {})\n    changed: {}\n", cell(r.verdict),
                       percent(r.change), key_text(r.key),
                       cell(h.runs[r.runs[*r.base].run].started_at),
                       cell(h.runs[r.runs.back().run].started_at), changes_text(r.changes));
  }
  out += fmt::format(
      "test: {} rows whose runs both kept their repetitions, by the Mann-Whitney U test at "
      "{:g} after Holm's correction over them, a change of the median over {:g}% and over {:g} "
      "of the noise below\n",
      h.tested, h.alpha, 100 * h.tolerance, h.sigmas);
  out += fmt::format(
      "noise: pooled {:.1f}% over {} pairs of earlier runs{}, floor {:.1f}%, or a row's own where "
      "larger; for the other rows the change must also pass the repetitions' spread\n",
      100 * h.noise_pooled, h.noise_pairs,
      h.latest_noise_pairs ? fmt::format(", {:.1f}% over the {} rows of the latest run",
                                         100 * h.latest_noise_pooled, h.latest_noise_pairs)
                           : "",
      100 * h.noise_floor);
  if (std::any_of(h.rows.begin(), h.rows.end(), [](const auto& r) { return r.noisy; }))
    out += "NOISY: the latest run's repetitions ran out of budget before its median was steady\n";
  *m_out << out;
}

void ConsolePrinter::fleet(const nlohmann::json& f) {
  if (!m_out) return;
  const auto& s = f["selection"];
  *m_out << fmt::format("fleet: {} runs of {}; each against the median of its model's group{}\n",
                        s["runs"].get<std::int64_t>(),
                        s.contains("job")
                            ? fmt::format("job {}", cell(s["job"]))
                            : fmt::format("{} .. {}", cell(s["since"]), cell(s["until"])),
                        s["references"].get<std::string>().empty()
                            ? ""
                            : fmt::format(" and {}", cell(s["references"])));
  if (const auto& short_rows = s["rows_too_short"]; !short_rows.empty())
    *m_out << fmt::format(
        "rows: {} {} left out, each kernel under {:g} ms (its launch and clocks "
        "more than its GPU; --row EXPERIMENT shows them): {}{}\n",
        short_rows.size(), short_rows.size() == 1 ? "kind" : "kinds", s["min_row_ms"].get<double>(),
        cell(short_rows[0]), short_rows.size() > 1 ? ", ..." : "");
  *m_out << fmt::format("\nGPUs: {}\n", f["gpus"].size());
  if (!f["gpus"].empty()) *m_out << members_table(f["gpus"], "GPU");
  *m_out << fmt::format("\nnodes: {}\n", f["nodes"].size());
  if (!f["nodes"].empty()) *m_out << members_table(f["nodes"], "node");
  int outliers = 0;
  std::string reasons;
  for (const char* part : {"gpus", "nodes"})
    for (const auto& m : f[part])
      if (m["outlier"].get<bool>()) {
        ++outliers;
        reasons += fmt::format("  {} on {}:\n", cell(m["id"]), cell(m["host"]));
        // A reason is portalab's sentence about names of the file: cut longer.
        for (const auto& r : m["reasons"])
          reasons += fmt::format("    {}\n", shown(r.get<std::string>(), 4 * shown_max_bytes));
      }
  *m_out << fmt::format("\noutliers: {}\n{}", outliers, reasons);
}

void ConsolePrinter::health(const store::Health& h) {
  if (!m_out) return;
  std::vector<std::vector<std::string>> lines{{"what", "id", "model", "quantity", "value", "unit",
                                               "reference", "x ref", "own median", "runs",
                                               "verdict"}};
  for (const auto& f : h.figures)
    lines.push_back(
        {f.kind, shown(f.kind == "node" ? f.host : f.id + (f.peer.empty() ? "" : " -> " + f.peer)),
         f.model.empty() ? "-" : shown(f.model), shown(f.quantity), health_number(f.value), f.unit,
         f.reference ? health_number(f.reference->value) : "-",
         f.reference ? fmt::format("{:.2f}", f.value / f.reference->value) : "-",
         f.history ? health_number(*f.history) : "-", std::to_string(f.history_runs), f.verdict});
  std::string out = fmt::format(
      "\nhealth of {}: {} figures, judged against {}{}\n", shown(h.host), h.figures.size(),
      h.references.empty() ? "no reference file" : shown(h.references),
      h.tolerance_pct > 0 ? fmt::format(" (tolerance {:g}%)", h.tolerance_pct) : "");
  out += text_table(lines);
  // Names in these lines come from result files and the reference file:
  // quoted and cut as the run's messages are (issue 54's class).
  for (const auto& n : h.notes) out += fmt::format("note: {}\n", shown(n, 4 * shown_max_bytes));
  for (const auto& p : h.problems)
    out += fmt::format("degraded: {}\n", shown(p, 4 * shown_max_bytes));
  for (const auto& f : h.figures)
    for (const auto& r : f.reasons)
      out += fmt::format("degraded: {}\n", shown(r, 4 * shown_max_bytes));
  out += fmt::format("health: {}\n", h.degraded() ? "DEGRADED" : "healthy");
  *m_out << out << std::flush;
}

void NamesPrinter::experiments(std::span<const ExperimentInfo> all) {
  for (const auto& e : all) print_to(stdout, "{}\n", e.name);
}

}  // namespace portalab
