#include "engine/dry_run.hpp"

#include "limits/calibrate.hpp"
#include "experiment/registry.hpp"
#include "platform/memory.hpp"
#include "platform/space_names.hpp"
#include "support/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace portalab {
namespace {

// The host space whose limits fill and check: Serial (the checks are plain,
// single-threaded loops), else the first host space measured.
const SpaceLimits* host_limits(const Calibration& cal) {
  if (const auto* s = cal.find("Serial")) return s;
  for (const auto& s : cal.spaces)
    if (s.host) return &s;
  return nullptr;
}

std::string bytes_text(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024.0 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
}

std::string ms_text(double ms) { return fmt::format("{:.3g}", ms); }

}  // namespace

std::string format_duration(double ms) {
  if (ms < 1000) return fmt::format("{:.0f} ms", ms);
  const double s = ms / 1000;
  if (s < 60) return fmt::format("{:.1f} s", s);
  const auto whole = static_cast<long long>(s + 0.5);
  if (whole < 3600) return fmt::format("{} min {:02d} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02d} min", whole / 3600, (whole % 3600) / 60);
}

std::vector<PlannedEntry> plan_entries(std::span<const Entry> entries, const PlanOptions& options) {
  std::vector<PlannedEntry> planned;
  planned.reserve(entries.size());
  const SpaceLimits* host = options.limits ? host_limits(*options.limits) : nullptr;
  std::optional<std::size_t> case_id;
  std::string skip;         // why the current case cannot be made, as CaseSlot says it
  bool setup_paid = false;  // by the case's first variant that runs, as in CaseSlot
  for (const Entry& entry : entries) {
    const ExperimentInfo& info = *entry.experiment;
    PlannedEntry e;
    e.entry = entry;
    e.footprint = info.footprint(entry.dtype, entry.n, entry.parameters);
    e.work = info.work(entry.dtype, entry.n, entry.variant, entry.parameters);
    e.repetitions = entry.reps + entry.warmups + 1;
    if (case_id != entry.case_id) {
      case_id = entry.case_id;
      setup_paid = false;
      skip.clear();
      if (options.ask_spaces) {
        const std::size_t free_space = space_free_bytes(entry.space);
        const std::size_t free_host = host_available_bytes();
        if (e.footprint > free_space || (!is_host_space(entry.space) && e.footprint > free_host))
          skip = fmt::format("skipped: needs {}, free {} in {}, {} on the host",
                             bytes_text(e.footprint), bytes_text(free_space), entry.space,
                             bytes_text(free_host));
      }
    }
    e.not_run = entry.too_few_ranks(options.world_size);
    if (e.not_run.empty() && options.ask_spaces)
      if (auto why = info.not_applicable(entry.space, entry.dtype, entry.variant, entry.copies);
          !why.empty())
        e.not_run = "not applicable: " + why;
    if (e.not_run.empty()) e.not_run = skip;
    const SpaceLimits* lim = options.limits ? options.limits->find(entry.space) : nullptr;
    if (lim) {
      EntryWork w;
      w.work = e.work;
      w.copies = entry.copies;
      w.dtype = entry.dtype;
      w.bound = info.bound_of(entry.variant);
      w.repetitions = e.repetitions;
      w.warmups = entry.warmups;
      w.adaptive = entry.adaptive;
      w.footprint_bytes = static_cast<double>(e.footprint);
      w.host_space = is_host_space(entry.space);
      // Copies move every array once per repetition, inputs in and outputs
      // out: which is which is known only once the case is made, so half
      // each way. None in host spaces (the mirror is the data) nor where the
      // experiment moves its arrays itself.
      if (!w.host_space && entry.copies != CopyMode::none && info.bound != Bound::transfer)
        w.h2d_bytes = w.d2h_bytes = w.footprint_bytes / 2;
      w.pays_setup = !setup_paid && e.not_run.empty();
      setup_paid = setup_paid || w.pays_setup;
      e.estimate = estimate_entry(w, *lim, host ? *host : *lim);
    }
    planned.push_back(std::move(e));
  }
  return planned;
}

std::string format_plan(const std::string& deck_path, const std::vector<PlannedEntry>& entries) {
  const std::vector<std::string> head{"#",          "experiment", "variant", "space",
                                      "dtype",      "n",          "copies",  "memory",
                                      "bytes/rep",  "flops/rep",  "calls",   "kernel/rep",
                                      "copies/rep", "setup",      "check",   "estimate",
                                      "limited by"};
  std::vector<std::vector<std::string>> rows;
  double total = 0.0;
  std::size_t unknown = 0, not_run = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    const Entry& en = e.entry;
    std::vector<std::string> row{fmt::format("{}", i + 1),
                                 en.experiment->name,
                                 en.variant_name(),
                                 en.space,
                                 en.dtype,
                                 fmt::format("{}", en.n),
                                 std::string(to_string(en.copies)),
                                 bytes_text(static_cast<double>(e.footprint)),
                                 bytes_text(e.work.bytes),
                                 fmt::format("{:.3g}", e.work.flops),
                                 fmt::format("{}", e.repetitions)};
    if (!e.not_run.empty()) {
      ++not_run;
      row.insert(row.end(), {"-", "-", "-", "-", "0", e.not_run});
    } else if (!e.estimate) {
      ++unknown;
      row.insert(row.end(), {"?", "?", "?", "?", "?", "no limits for " + en.space});
    } else {
      const auto& est = *e.estimate;
      total += est.total_ms;
      row.insert(row.end(), {ms_text(est.kernel_ms), ms_text(est.copies_ms), ms_text(est.setup_ms),
                             ms_text(est.check_ms), ms_text(est.total_ms), est.limited_by});
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  std::string out = fmt::format(
      "dry run of {}: {} entries, in the order they run (times in ms; "
      "calls = reps + warm-ups + 1 cold call)\n",
      shown(deck_path), entries.size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool left = c >= 1 && c <= 6;  // names left, figures right
      s += c + 1 == cells.size() ? cells[c]
           : left                ? fmt::format("{:<{}}  ", cells[c], width[c])
                                 : fmt::format("{:>{}}  ", cells[c], width[c]);
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  out += line(head);
  for (const auto& r : rows) out += line(r);
  out += fmt::format("estimated total: {} for {} entries", format_duration(total),
                     entries.size() - unknown - not_run);
  if (not_run) out += fmt::format("; {} will not run", not_run);
  if (unknown) out += fmt::format("; {} not estimated (no limits for their space)", unknown);
  out += fmt::format(" (total_ms={:.1f})\n", total);
  return out;
}

double time_left_ms(const WorkDone& work, double elapsed_ms) {
  const double estimated_left = std::max(0.0, work.estimated_total_ms - work.estimated_done_ms);
  if (work.estimated_total_ms > 0) {
    // As if the run had begun with a tenth of its estimated time going
    // exactly as estimated: a few tiny first entries, all fixed costs, cannot
    // swing the forecast by orders of magnitude.
    const double prior = 0.1 * work.estimated_total_ms;
    return estimated_left * (elapsed_ms + prior) / (work.estimated_done_ms + prior);
  }
  return work.done > 0 ? elapsed_ms / work.done * std::max(0.0, work.total - work.done) : 0.0;
}

double time_left_ms(std::span<const double> estimated_ms, std::size_t done, double elapsed_ms) {
  done = std::min(done, estimated_ms.size());
  WorkDone work{.done = static_cast<double>(done),
                .total = static_cast<double>(estimated_ms.size())};
  for (std::size_t i = 0; i < estimated_ms.size(); ++i) {
    work.estimated_total_ms += estimated_ms[i];
    if (i < done) work.estimated_done_ms += estimated_ms[i];
  }
  return time_left_ms(work, elapsed_ms);
}

}  // namespace portalab
