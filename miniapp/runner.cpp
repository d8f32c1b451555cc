#include "runner.hpp"

#include "analysis.hpp"
#include "calibrate.hpp"
#include "dry_run.hpp"
#include "experiment.hpp"
#include "interrupt.hpp"
#include "library_probe.hpp"
#include "memory.hpp"
#include "profiling.hpp"
#include "spaces.hpp"
#include "timing.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <set>
#include <span>

namespace portalab {
namespace {

bool applies(const std::string& space, CopyMode mode) {
  // Pinned memory speeds copies to a device; a host space has nothing to copy.
  return !(mode == CopyMode::pinned && is_host_space(space));
}

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", bytes / 1073741824.0); }

// ---- Stage 2: one entry into a Result -----------------------------------

// Phase times of one repetition: h2d, kernel, d2h (copies only when real).
struct Rep {
  double h2d = 0, kernel = 0, d2h = 0;
  CallRecord call;
  double total() const { return h2d + kernel + d2h; }
};

// `range` names the entry for profilers: phases become range/h2d, ... and
// each range opens before its timer starts and closes after it stops.
Rep repetition(Case& c, std::size_t variant, bool copies, const std::string& range) {
  CaseArrays& a = c.arrays();
  Rep t;
  if (copies) {
    ScopedRange r(range + "/h2d");
    t.h2d = fenced_ms(a, [&] { a.h2d(); });
  }
  {
    ScopedRange r(range + "/kernel");
    t.kernel = fenced_ms(a, [&] { c.run(variant, t.call); });
    // The variant timed the part that matters itself (dispatch, instances).
    if (t.call.kernel_ms) t.kernel = *t.call.kernel_ms;
  }
  if (copies) {
    ScopedRange r(range + "/d2h");
    t.d2h = fenced_ms(a, [&] { a.d2h(); });
  }
  return t;
}

// The row's rates as fractions of the limits calibrated for its space.
void compare_with_limits(Result& r, const SpaceLimits& lim, Bound bound) {
  r.limit = {bound, 0.0, r.copies};
  const std::string mode(to_string(r.copies));
  if (bound == Bound::transfer)
    // Host<->device both ways at once: at best both directions' calibrated rates.
    r.limit.value = lim.transfer_gbps("h2d_" + mode) + lim.transfer_gbps("d2h_" + mode);
  else if (bound == Bound::compute)
    r.limit.value = lim.gemm_gflops.count(r.dtype) ? lim.gemm_gflops.at(r.dtype) : 0.0;
  else
    r.limit.value = lim.memory_gbps();
  if (r.limit.known()) r.pct_of_limit = (bound == Bound::compute ? r.gflops : r.gbps) / r.limit.value;
  if (const double best = lim.transfer_gbps("h2d_" + mode); best > 0 && r.h2d_gbps > 0)
    r.h2d_pct_of_limit = r.h2d_gbps / best;
  if (const double best = lim.transfer_gbps("d2h_" + mode); best > 0 && r.d2h_gbps > 0)
    r.d2h_pct_of_limit = r.d2h_gbps / best;
}

// Warm-up, cold call and repetitions of one variant, then its check.
void measure(Case& c, const Entry& e, Result& r) {
  static std::set<std::string> seen;  // kernels already called in this process
  r.first_in_process =
      seen.insert(fmt::format("{}/{}/{}/{}", r.experiment, r.variant, r.space, r.dtype)).second;
  CaseArrays& a = c.arrays();
  r.copies_alias = a.copies_alias();
  // No copy phases where the experiment moves its arrays itself (copy_overlap,
  // whose copies are part of its kernel phase).
  const bool copies = e.copies != CopyMode::none && !a.copies_alias() &&
                      a.input_bytes() + a.output_bytes() > 0;

  const std::string range = fmt::format("portalab/{}/{}", r.experiment, r.space);
  a.poison_outputs();
  {
    // The library that served the variant, from the regions its calls push
    // (the recorder may fence: only the cold call runs under it).
    ScopedRange cold(range + "/cold");
    RegionRecorder recorder;
    r.cold_ms = repetition(c, e.variant, copies, range + "/cold").total();
    r.library = vendor_library(recorder.library());
    // The threads the host library ran with, read inside its calls (the
    // guards set them alike in every call); a device library's are its own.
    if (is_host_space(r.space)) r.library_threads = recorder.library_threads();
  }
  {
    ScopedRange warmup(range + "/warmup");
    for (int i = 0; i < r.warmups; ++i) {
      throw_if_interrupted();  // each repetition ends with a fence: a safe point
      repetition(c, e.variant, copies, range + "/warmup");
    }
  }
  std::vector<double> h2d, kernel, d2h, total;
  std::vector<std::pair<std::string, std::vector<double>>> metrics;  // in first-seen order
  std::string timed_by;
  profiler_start();  // nsys --capture-range=cudaProfilerApi records these alone
  for (int i = 0; i < r.reps; ++i) {
    if (interrupt_signal()) {
      profiler_stop();
      throw_if_interrupted();
    }
    const Rep t = repetition(c, e.variant, copies, range);
    h2d.push_back(t.h2d);
    kernel.push_back(t.kernel);
    d2h.push_back(t.d2h);
    total.push_back(t.total());
    timed_by = t.call.timed_by;
    for (const auto& [name, value] : t.call.metrics) {
      auto it = std::find_if(metrics.begin(), metrics.end(),
                             [&](const auto& m) { return m.first == name; });
      if (it == metrics.end()) it = metrics.insert(metrics.end(), {name, {}});
      it->second.push_back(value);
    }
  }
  profiler_stop();
  throw_if_interrupted();
  r.h2d = summarize(h2d);
  r.kernel = summarize(kernel);
  r.d2h = summarize(d2h);
  r.total = summarize(total);
  for (auto& [name, values] : metrics) r.set_metric(name, summarize(std::move(values)).median);
  if (!timed_by.empty()) r.timed_by = timed_by;
  if (!copies) {  // bring the outputs to the host mirror for the check, untimed
    a.d2h();
    a.fence();
  }
  if (r.kernel.median > 0) {
    r.gbps = r.bytes / (r.kernel.median * 1e6);
    r.gflops = r.flops / (r.kernel.median * 1e6);
  }
  if (r.launches > 0) r.us_per_launch = 1e3 * r.kernel.median / r.launches;
  if (copies) {
    r.h2d_gbps = r.h2d.median > 0 ? a.input_bytes() / (r.h2d.median * 1e6) : 0.0;
    r.d2h_gbps = r.d2h.median > 0 ? a.output_bytes() / (r.d2h.median * 1e6) : 0.0;
  }
  ScopedRange verify(range + "/verify");
  r.check = c.verify(e.variant);
  r.status = r.check.pass ? Status::pass : Status::fail;
  if (e.copies == CopyMode::none)
    r.note = "inputs created in the space: kernel alone";
  else if (a.copies_alias())
    r.note = "host space: the mirror is the data, nothing to copy";
}

// The row an entry will fill, with what is known before it runs.
Result row_of(const Entry& e) {
  Result r;
  r.experiment = e.experiment->name;
  r.variant = e.variant_name();
  r.space = e.space;
  r.threads = space_concurrency(e.space);
  r.dtype = e.dtype;
  r.n = e.n;
  r.parameters = e.parameters;
  r.copies = e.copies;
  r.reps = e.reps;
  r.warmups = e.warmups;
  const Work w = e.experiment->work(e.dtype, e.n, e.variant, e.parameters);
  r.bytes = w.bytes;
  r.flops = w.flops;
  r.launches = w.launches;
  return r;
}

}  // namespace

// ---- Stage 1: the deck into entries ----------------------------------------

const std::string& Entry::variant_name() const { return experiment->variants.at(variant); }

std::string Entry::describe() const {
  return fmt::format("{} {} {} {} n={} copies={}", experiment->name, variant_name(), space, dtype,
                     n, to_string(copies));
}

std::vector<Entry> expand(const Deck& deck, const Registry& registry) {
  std::vector<Entry> entries;
  std::size_t case_id = 0;
  for (const auto& plan : deck.plans) {
    const ExperimentInfo* info = registry.find(plan.experiment);
    if (!info) throw InputError(fmt::format("{}: no experiment '{}'", deck.path, plan.experiment));
    for (std::size_t n : plan.sizes)
      for (const auto& dtype : plan.dtypes)
        for (const auto& space : plan.spaces)
          for (CopyMode mode : plan.copies) {
            if (!applies(space, mode)) continue;
            for (const auto& variant : plan.variants)
              entries.push_back({info, info->variant_index(variant), space, dtype, n, mode,
                                 plan.reps, plan.warmups, plan.parameters, case_id});
            ++case_id;
          }
  }
  return entries;
}

std::size_t count_entries(const Deck& deck) {
  std::size_t n = 0;
  for (const auto& p : deck.plans)
    for (const auto& space : p.spaces)
      for (auto mode : p.copies)
        if (applies(space, mode)) n += p.sizes.size() * p.dtypes.size() * p.variants.size();
  return n;
}

// ---- Stage 2 ----------------------------------------------------------------

CaseSlot::CaseSlot() = default;
CaseSlot::~CaseSlot() = default;

Case* CaseSlot::get(const Entry& e, Status& status, std::string& note) {
  if (m_case_id != e.case_id) {
    m_case.reset();  // the last case's memory is free before the next is made
    m_case_id = e.case_id;
    m_status = Status::pass;
    m_note.clear();
    const std::size_t need = e.experiment->footprint(e.dtype, e.n, e.parameters);
    const std::size_t free_space = space_free_bytes(e.space);
    const std::size_t free_host = host_available_bytes();
    if (need > free_space || (!is_host_space(e.space) && need > free_host)) {
      m_status = Status::skipped;
      m_note = fmt::format("needs {} ({} bytes); free: {} in {} memory, {} on the host", gib(need),
                           need, gib(free_space), e.space, gib(free_host));
    } else {
      try {
        ScopedRange setup(fmt::format("portalab/{}/{}/setup", e.experiment->name, e.space));
        m_case = e.experiment->make(e.space, e.dtype, e.n, e.copies, e.parameters);
      } catch (const std::exception& ex) {
        // An allocation the free-memory check could not foresee failing
        // (fragmentation, another process, a limit it cannot read) is a
        // skip, as if foreseen; anything else an error.
        m_status = is_allocation_failure(ex) ? Status::skipped : Status::error;
        m_note = is_allocation_failure(ex)
                     ? fmt::format("allocation of {} failed: {}", gib(need), ex.what())
                     : fmt::format("setup failed: {}", ex.what());
      }
    }
  }
  status = m_status;
  note = m_note;
  return m_case.get();
}

Result run_entry(const Entry& e, CaseSlot& slot, const RunOptions& options) {
  throw_if_interrupted();
  Result r = row_of(e);
  // A variant this space cannot run at all is said so, not tried.
  if (const std::string why =
          e.experiment->not_applicable(e.space, e.dtype, e.variant, e.copies);
      !why.empty()) {
    r.status = Status::not_applicable;
    r.note = "not applicable: " + why;
    return r;
  }
  ScopedRange experiment_range("portalab/" + r.experiment);
  ScopedRange space_range(fmt::format("portalab/{}/{}", r.experiment, r.space));
  Case* c = slot.get(e, r.status, r.note);
  if (!c) return r;
  try {
    measure(*c, e, r);
    if (const auto* lim = options.limits ? options.limits->find(e.space) : nullptr)
      compare_with_limits(r, *lim, e.experiment->bound);
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& ex) {
    r.status = Status::error;
    r.note = ex.what();
  }
  // The values themselves, as the lab prints them (array_ops).
  if (options.tables) r.shown = c->show(e.variant);
  return r;
}

// ---- Stage 3: the sink ------------------------------------------------------

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
    j["float64_over_float32"] = dtype_ratios_json(find_dtype_ratios(results));
  }
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
  m_summary.results.push_back(std::move(r));
  // Written after every entry: a job killed later keeps what it measured.
  write_files(m_speedups.add(m_summary.results, i), false);
}

void Sink::case_done(const ExperimentInfo& experiment, std::size_t first) {
  if (!experiment.relate || first >= m_summary.results.size()) return;
  experiment.relate(std::span<Result>(m_summary.results).subspan(first));
  write_files(first, false);
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

// ---- All three --------------------------------------------------------------

RunSummary run_deck(const Deck& deck, const RunOptions& options,
                    const nlohmann::json& provenance) {
  const Registry& registry = options.registry ? *options.registry : global_registry();
  const std::vector<Entry> entries = expand(deck, registry);
  Sink sink(options, provenance, entries);
  CaseSlot slot;
  std::size_t case_first_row = 0;
  std::string current;  // the entry in progress, named if a signal abandons it
  try {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      current = e.describe();
      sink.record(run_entry(e, slot, options));
      const bool last = i + 1 == entries.size();
      if (last || entries[i + 1].case_id != e.case_id) {
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
