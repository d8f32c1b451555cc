#include "runner.hpp"

#include "analysis.hpp"
#include "calibrate.hpp"
#include "experiment.hpp"
#include "interrupt.hpp"
#include "kernels/library_threads.hpp"
#include "memory.hpp"
#include "profiling.hpp"
#include "spaces.hpp"
#include "timing.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <new>
#include <span>
#include <ostream>
#include <set>

namespace portalab {
namespace {

bool applies(const std::string& space, CopyMode mode) {
  // Pinned memory speeds copies to a device; a host space has nothing to copy.
  return !(mode == CopyMode::pinned && is_host_space(space));
}

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", bytes / 1073741824.0); }

// Phase times of one repetition: h2d, kernel, d2h (copies only when real).
struct Rep {
  double h2d = 0, kernel = 0, d2h = 0;
  double total() const { return h2d + kernel + d2h; }
};

// `range` names the entry for profilers: phases become range/h2d, ... and
// each range opens before its timer starts and closes after it stops.
Rep repetition(Case& c, std::string_view variant, bool copies, const std::string& range) {
  Rep t;
  if (copies) {
    ScopedRange r(range + "/h2d");
    t.h2d = fenced_ms(c, [&] { c.h2d(); });
  }
  {
    ScopedRange r(range + "/kernel");
    t.kernel = fenced_ms(c, [&] { c.run(variant); });
    // Launch dispatch: the experiment timed the launches alone, before this fence.
    if (const auto own = c.self_timed_ms()) t.kernel = *own;
  }
  if (copies) {
    ScopedRange r(range + "/d2h");
    t.d2h = fenced_ms(c, [&] { c.d2h(); });
  }
  return t;
}

// Warm-up, cold call and repetitions of one variant, then its check.
void measure(Case& c, Result& r, CopyMode mode) {
  static std::set<std::string> seen;  // kernels already called in this process
  r.first_in_process =
      seen.insert(fmt::format("{}/{}/{}/{}", r.experiment, r.variant, r.space, r.dtype)).second;
  r.copies_alias = c.copies_alias();
  // No copy phases where the experiment moves its arrays itself (copy_overlap,
  // whose copies are part of its kernel phase).
  const bool copies = mode != CopyMode::none && !c.copies_alias() &&
                      c.h2d_bytes() + c.d2h_bytes() > 0;

  const std::string range = fmt::format("portalab/{}/{}", r.experiment, r.space);
  kernels::LibraryThreadsSeen::reset();  // host library calls report their threads
  c.poison_outputs();
  {
    ScopedRange cold(range + "/cold");
    r.cold_ms = repetition(c, r.variant, copies, range + "/cold").total();
  }
  {
    ScopedRange warmup(range + "/warmup");
    for (int i = 0; i < r.warmups; ++i) {
      throw_if_interrupted();  // each repetition ends with a fence: a safe point
      repetition(c, r.variant, copies, range + "/warmup");
    }
  }
  std::vector<double> h2d, kernel, d2h, total;
  std::vector<std::pair<std::string, std::vector<double>>> metrics;  // in first-seen order
  profiler_start();  // nsys --capture-range=cudaProfilerApi records these alone
  for (int i = 0; i < r.reps; ++i) {
    if (interrupt_signal()) {
      profiler_stop();
      throw_if_interrupted();
    }
    const Rep t = repetition(c, r.variant, copies, range);
    h2d.push_back(t.h2d);
    kernel.push_back(t.kernel);
    d2h.push_back(t.d2h);
    total.push_back(t.total());
    for (const auto& [name, value] : c.metrics()) {
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
  r.timed_by = c.timed_by(r.variant);
  if (!copies) {  // bring the outputs to the host mirror for the check, untimed
    c.d2h();
    c.fence();
  }
  if (r.kernel.median > 0) {
    r.gbps = r.bytes / (r.kernel.median * 1e6);
    r.gflops = r.flops / (r.kernel.median * 1e6);
  }
  if (r.launches > 0) r.us_per_launch = 1e3 * r.kernel.median / r.launches;
  if (copies) {
    r.h2d_gbps = r.h2d.median > 0 ? c.h2d_bytes() / (r.h2d.median * 1e6) : 0.0;
    r.d2h_gbps = r.d2h.median > 0 ? c.d2h_bytes() / (r.d2h.median * 1e6) : 0.0;
  }
  ScopedRange verify(range + "/verify");
  r.check = c.verify(r.variant);
  r.library = c.library(r.variant);
  r.threads = threads_text(space_concurrency(r.space), kernels::LibraryThreadsSeen::get());
  r.status = r.check.pass ? Status::pass : Status::fail;
  if (mode == CopyMode::none)
    r.note = "inputs created in the space: kernel alone";
  else if (c.copies_alias())
    r.note = "host space: the mirror is the data, nothing to copy";
}

// The row's rates as fractions of the limits calibrated for its space.
void compare_with_limits(Result& r, const SpaceLimits& lim, const std::string& bound) {
  if (bound == "transfer") {
    // Host<->device both ways at once: at best both directions' calibrated rates.
    const std::string mode(to_string(r.copies));
    const double duplex =
        lim.transfer_gbps("h2d_" + mode) + lim.transfer_gbps("d2h_" + mode);
    if (duplex > 0) {
      r.limit = fmt::format("duplex {} copies {:.0f} GB/s", mode, duplex);
      r.pct_of_limit = r.gbps / duplex;
    }
  } else if (bound == "compute") {
    const auto it = lim.gemm_gflops.find(r.dtype);
    if (it != lim.gemm_gflops.end() && it->second > 0) {
      r.limit = fmt::format("gemm {:.0f} GFLOP/s", it->second);
      r.pct_of_limit = r.gflops / it->second;
    }
  } else if (lim.memory_gbps() > 0) {
    r.limit = fmt::format("memory {:.0f} GB/s", lim.memory_gbps());
    r.pct_of_limit = r.gbps / lim.memory_gbps();
  }
  const std::string mode(to_string(r.copies));
  if (const double best = lim.transfer_gbps("h2d_" + mode); best > 0 && r.h2d_gbps > 0)
    r.h2d_pct_of_limit = r.h2d_gbps / best;
  if (const double best = lim.transfer_gbps("d2h_" + mode); best > 0 && r.d2h_gbps > 0)
    r.d2h_pct_of_limit = r.d2h_gbps / best;
}

}  // namespace

std::size_t count_entries(const Deck& deck) {
  std::size_t n = 0;
  for (const auto& p : deck.plans)
    for (const auto& space : p.spaces)
      for (auto mode : p.copies)
        if (applies(space, mode)) n += p.sizes.size() * p.dtypes.size() * p.variants.size();
  return n;
}

nlohmann::json RunSummary::to_json() const {
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
                     {"failures", failures},
                     {"gpu_crossover", gpu_crossover_json(find_crossovers(results))},
                     {"float64_over_float32", dtype_ratios_json(find_dtype_ratios(results))}};
  if (interrupted_by != 0)
    j["interrupted"] = {{"signal", signal_name(interrupted_by)},
                        {"abandoned", abandoned},
                        {"not_run", not_run}};
  return j;
}

RunSummary run_deck(const Deck& deck, const RunOptions& options,
                    const nlohmann::json& provenance) {
  RunSummary summary;
  const std::size_t entries = count_entries(deck);
  auto record = [&](Result r) {
    summary.failed += r.status == Status::fail;
    summary.errors += r.status == Status::error;
    summary.skipped += r.status == Status::skipped;
    summary.not_applicable += r.status == Status::not_applicable;
    if (options.progress) {
      const std::string what =
          fmt::format("{} {} {} {} n={} copies={}", r.experiment, r.variant, r.space, r.dtype,
                      r.n, to_string(r.copies));
      if (r.status == Status::pass || r.status == Status::fail)
        fmt::print(*options.progress, "[{}/{}] {}: total {:.4g} ms, kernel {:.4g} ms, {}\n",
                   summary.results.size() + 1, entries, what, r.total.median, r.kernel.median,
                   to_string(r.status));
      else
        fmt::print(*options.progress, "[{}/{}] {}: {}: {}\n", summary.results.size() + 1,
                   entries, what, to_string(r.status), r.note);
    }
    summary.results.push_back(std::move(r));
    // Written after every entry: a job killed later keeps what it measured.
    if (options.out_dir) {
      auto rows = summary.results;
      assign_speedups(rows);
      write_results(*options.out_dir, rows, provenance, summary.to_json());
    }
  };

  std::string current;  // the entry in progress, named if a signal abandons it
  const ExperimentPlan* current_plan = nullptr;
  try {
    for (const auto& plan : deck.plans) {
      current_plan = &plan;
      const ExperimentInfo& info = *find_experiment(plan.experiment);
      std::string parameters_text;
      for (const auto& [k, v] : plan.parameters)
        parameters_text += fmt::format("{}{}={}", parameters_text.empty() ? "" : " ", k, v);
      ScopedRange experiment_range("portalab/" + plan.experiment);
      for (std::size_t n : plan.sizes)
        for (const auto& dtype : plan.dtypes)
          for (const auto& space : plan.spaces)
            for (CopyMode mode : plan.copies) {
              if (!applies(space, mode)) continue;
              throw_if_interrupted();
              current = fmt::format("{} {} {} n={} copies={} (setup)", plan.experiment, space,
                                    dtype, n, to_string(mode));
              auto entry = [&](const std::string& variant) {
                Result r;
                r.experiment = plan.experiment;
                r.variant = variant;
                r.space = space;
                r.threads = threads_text(space_concurrency(space), 0);
                r.dtype = dtype;
                r.n = n;
                r.parameters = parameters_text;
                r.copies = mode;
                r.reps = plan.reps;
                r.warmups = plan.warmups;
                const Work w = info.work(dtype, n, variant, plan.parameters);
                r.bytes = w.bytes;
                r.flops = w.flops;
                r.launches = w.launches;
                return r;
              };
              // Variants this space cannot run at all are said so, not tried.
              std::vector<std::string> why_not;
              for (const auto& v : plan.variants)
                why_not.push_back(info.not_applicable(space, v, mode, plan.parameters));
              auto all_variants = [&](Status status, const std::string& note) {
                for (std::size_t i = 0; i < plan.variants.size(); ++i) {
                  Result r = entry(plan.variants[i]);
                  r.status = why_not[i].empty() ? status : Status::not_applicable;
                  r.note = why_not[i].empty() ? note : "not applicable: " + why_not[i];
                  record(std::move(r));
                }
              };
              if (std::all_of(why_not.begin(), why_not.end(),
                              [](const std::string& w) { return !w.empty(); })) {
                all_variants(Status::not_applicable, "");
                continue;
              }

              const std::size_t need = info.footprint(dtype, n, plan.parameters);
              const std::size_t free_space = space_free_bytes(space);
              const std::size_t free_host = host_available_bytes();
              if (need > free_space || (!is_host_space(space) && need > free_host)) {
                all_variants(
                    Status::skipped,
                    fmt::format("needs {} ({} bytes); free: {} in {} memory, {} on the host",
                                gib(need), need, gib(free_space), space, gib(free_host)));
                continue;
              }
              ScopedRange space_range(fmt::format("portalab/{}/{}", plan.experiment, space));
              std::unique_ptr<Case> c;
              try {
                ScopedRange setup(fmt::format("portalab/{}/{}/setup", plan.experiment, space));
                c = info.make(space, dtype, n, mode, plan.parameters);
              } catch (const std::exception& e) {
                // An allocation the free-memory check could not foresee failing
                // (fragmentation, another process, a limit it cannot read) is
                // a skip, as if foreseen; anything else an error.
                if (is_allocation_failure(e))
                  all_variants(Status::skipped,
                               fmt::format("allocation of {} failed: {}", gib(need), e.what()));
                else
                  all_variants(Status::error, fmt::format("setup failed: {}", e.what()));
                continue;
              }
              const std::size_t first_row = summary.results.size();
              for (std::size_t vi = 0; vi < plan.variants.size(); ++vi) {
                const std::string& variant = plan.variants[vi];
                Result r = entry(variant);
                if (!why_not[vi].empty()) {
                  r.status = Status::not_applicable;
                  r.note = "not applicable: " + why_not[vi];
                  record(std::move(r));
                  continue;
                }
                current = fmt::format("{} {} {} {} n={} copies={}", r.experiment, variant, space,
                                      dtype, n, to_string(mode));
                try {
                  measure(*c, r, mode);
                  if (const auto* lim = options.limits ? options.limits->find(space) : nullptr)
                    compare_with_limits(r, *lim, info.bound);
                } catch (const Interrupted&) {
                  throw;
                } catch (const std::exception& e) {
                  r.status = Status::error;
                  r.note = e.what();
                }
                // The values themselves, as the lab prints them (array_ops).
                if (const std::string shown = options.tables ? c->show(variant) : std::string();
                    !shown.empty())
                  fmt::print(*options.tables, "\n{} {} {} {} n={} copies={}: {}\n{}",
                             plan.experiment, variant, space, dtype, n, to_string(mode),
                             to_string(r.status), shown);
                record(std::move(r));
              }
              // Figures comparing the case's variants (overlap gained), then
              // the files again with them.
              if (info.relate) {
                info.relate(std::span<Result>(summary.results).subspan(first_row));
                if (options.out_dir) {
                  auto rows = summary.results;
                  assign_speedups(rows);
                  write_results(*options.out_dir, rows, provenance, summary.to_json());
                }
              }
            }
      if (options.tables) {
        auto rows = summary.results;
        assign_speedups(rows);
        *options.tables << format_table(rows, plan.experiment) << std::flush;
      }
    }
  } catch (const Interrupted& e) {
    summary.interrupted_by = e.signal;
    summary.abandoned = current;
    summary.not_run = entries - summary.results.size();
    auto rows = summary.results;
    assign_speedups(rows);
    if (options.out_dir)  // again, now that the summary says so
      write_results(*options.out_dir, rows, provenance, summary.to_json());
    if (options.tables && current_plan)  // the experiment cut short
      *options.tables << format_table(rows, current_plan->experiment) << std::flush;
  }
  assign_speedups(summary.results);
  return summary;
}

}  // namespace portalab
