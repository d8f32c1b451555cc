#include "engine/run_entry.hpp"

#include "engine/combine.hpp"
#include "experiment/experiment.hpp"
#include "limits/calibrate.hpp"
#include "limits/compare.hpp"
#include "support/interrupt.hpp"
#include "libraries/library_probe.hpp"
#include "platform/memory.hpp"
#include "platform/profiling.hpp"
#include "platform/spaces.hpp"
#include "platform/timing.hpp"
#include "support/stats.hpp"
#include "ranks/comm.hpp"
#include "ranks/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <set>

namespace portalab {

Watchdog* watchdog = nullptr;

namespace {

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", bytes / 1073741824.0); }

// Phase times of one repetition: h2d, kernel, d2h (copies only when real).
struct Rep {
  double h2d = 0, kernel = 0, d2h = 0;
  CallRecord call;
  double total() const { return h2d + kernel + d2h; }
};

// `range` names the entry for profilers: phases become range/h2d, ... and
// each range opens before its timer starts and closes after it stops. The
// energy counters are read between the phases, after the fence that ends
// one and before the next one's timer starts: outside every timed region.
Rep repetition(Case& c, std::size_t variant, const kernels::HostPolicy& policy, bool copies,
               const std::string& range, EnergyLog* energy = nullptr) {
  CaseArrays& a = c.arrays();
  Rep t;
  if (energy) energy->rep_start();
  if (copies) {
    {
      ScopedRange r(range + "/h2d");
      t.h2d = fenced_ms(a, [&] { a.h2d(); });
    }
    if (energy) energy->kernel_start();
  }
  {
    ScopedRange r(range + "/kernel");
    t.kernel = fenced_ms(a, [&] { c.run(variant, policy, t.call); });
    // The variant timed the part that matters itself (dispatch, instances).
    if (t.call.kernel_ms) t.kernel = *t.call.kernel_ms;
  }
  if (energy) energy->kernel_end();
  if (copies) {
    ScopedRange r(range + "/d2h");
    t.d2h = fenced_ms(a, [&] { a.d2h(); });
  }
  if (energy) energy->rep_end(copies);
  return t;
}

// The ranks of a run pass an entry's gates together: the barrier before each
// repetition, which also says whether every rank can go on and whether any
// received a signal. A rank whose step failed keeps passing gates (saying
// so) until all stop at the same one: no rank is left waiting in a
// collective. With one rank the gates are local and cost nothing.
class Lockstep {
 public:
  explicit Lockstep(const Comm& world) : m_world(world) {}
  // Before a step: false once any rank has failed, or where no rank wants
  // another (`more`: this rank's wish); Interrupted on every rank once any
  // has a signal.
  bool gate(bool more = true) {
    if (m_stopped) return false;
    const GateState g = m_world.gate(m_error.empty(), interrupt_signal(), more);
    if (watchdog) watchdog->beat();
    if (g.signal != 0) throw Interrupted(g.signal);
    if (!g.all_ok) {
      m_stopped = true;
      m_first_failed = g.first_failed;
    }
    return !m_stopped && g.any_more;
  }
  // Runs one step after its gate; its failure is kept, to be shared at the
  // next gate. False when the step was not run or failed.
  template <class F>
  bool step(F&& f, bool more = true) {
    if (!gate(more)) return false;
    try {
      f();
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& ex) {
      m_error = ex.what();
    }
    return m_error.empty();
  }
  // Shares the last step's outcome: true when every rank succeeded.
  bool finish() { return gate(); }

  const std::string& error() const { return m_error; }
  int first_failed() const { return m_first_failed; }
  bool stopped() const { return m_stopped; }

 private:
  const Comm& m_world;
  std::string m_error;  // this rank's failure
  bool m_stopped = false;
  int m_first_failed = -1;
};

// Fault injection for the tests of multi-rank runs: PORTALAB_FAULT=check:R
// overwrites rank R's outputs before its check (it fails there alone);
// throw:R makes rank R's second repetition throw; early:R makes it throw
// before it runs, so that its peers wait in the experiment's own collective
// (the watchdog's case). Nothing otherwise.
struct Fault {
  std::string kind;
  int rank = -1;
  static const Fault& get() {
    static const Fault f = [] {
      Fault f;
      if (const char* v = std::getenv("PORTALAB_FAULT")) {
        const std::string text(v);
        if (const auto colon = text.find(':'); colon != std::string::npos) {
          f.kind = text.substr(0, colon);
          f.rank = std::atoi(text.c_str() + colon + 1);
        }
      }
      return f;
    }();
    return f;
  }
  bool here(std::string_view what) const { return kind == what && rank == world().rank(); }
};

// Warm-up, cold call and repetitions of one variant, each after a gate.
// c is null on a rank outside the entry's group: it passes the same gates.
Samples measure(Case* c, const Entry& e, const kernels::HostPolicy& policy, Result& r,
                Lockstep& lock, EnergyMeters* meters) {
  static std::set<std::string> seen;  // kernels already called in this process
  r.first_in_process =
      seen.insert(fmt::format("{}/{}/{}/{}", r.experiment, r.variant, r.space, r.dtype)).second;
  Samples s;
  CaseArrays* a = c ? &c->arrays() : nullptr;
  r.copies_alias = a && a->copies_alias();
  // No copy phases where the experiment moves its arrays itself (copy_overlap,
  // whose copies are part of its kernel phase).
  const bool copies = a && e.copies != CopyMode::none && !a->copies_alias() &&
                      a->input_bytes() + a->output_bytes() > 0;

  const std::string range = fmt::format("portalab/{}/{}", r.experiment, r.space);
  lock.step([&] {
    if (!c) return;
    a->poison_outputs();
    // The library that served the variant, from the regions its calls push
    // (the recorder may fence: only the cold call runs under it).
    ScopedRange cold(range + "/cold");
    RegionRecorder recorder;
    const Rep cold_call = repetition(*c, e.variant, policy, copies, range + "/cold");
    r.cold_ms = cold_call.total();
    r.library = vendor_library(recorder.library());
    r.path = row_path(cold_call.call.path, r.library);
    // The threads the host library ran with, read inside its calls (the
    // guards set them alike in every call); a device library's are its own.
    if (is_host_space(r.space)) r.library_threads = recorder.library_threads();
  });
  {
    ScopedRange warmup(range + "/warmup");
    for (int i = 0; i < r.warmups; ++i)
      if (!lock.step([&] {
            if (c) repetition(*c, e.variant, policy, copies, range + "/warmup");
          }))
        break;
  }
  std::optional<EnergyLog> energy;
  if (meters && c) energy.emplace(*meters, !is_host_space(r.space));
  profiler_start();  // nsys --capture-range=cudaProfilerApi records these alone
  try {
    const auto first = std::chrono::steady_clock::now();
    for (int i = 0;; ++i) {
      // Every rank passes the gate; a rank outside the group wants nothing.
      const double elapsed_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count();
      const bool more = c && wants_another(e, s.kernel, elapsed_s, r.stopped_by);
      if (!lock.step(
              [&] {
                if (!c) return;
                if (i == 1 && Fault::get().here("early"))
                  throw std::runtime_error(
                      fmt::format("fault injected on rank {}", world().rank()));
                const Rep t = repetition(*c, e.variant, policy, copies, range,
                                         energy ? &*energy : nullptr);
                // As a fence reports a device's failure: after the repetition.
                if (i == 1 && Fault::get().here("throw"))
                  throw std::runtime_error(
                      fmt::format("fault injected on rank {}", world().rank()));
                s.h2d.push_back(t.h2d);
                s.kernel.push_back(t.kernel);
                s.d2h.push_back(t.d2h);
                s.total.push_back(t.total());
                s.timed_by = t.call.timed_by;
                for (const auto& [name, value] : t.call.metrics) {
                  auto it = std::find_if(s.metrics.begin(), s.metrics.end(),
                                         [&](const auto& m) { return m.first == name; });
                  if (it == s.metrics.end()) it = s.metrics.insert(s.metrics.end(), {name, {}});
                  it->second.push_back(value);
                }
              },
              more))
        break;
    }
  } catch (...) {
    profiler_stop();
    throw;
  }
  profiler_stop();
  if (energy) s.energy = energy->finish();
  if (!lock.finish()) return s;
  // Every rank measured: the check, untimed.
  lock.step([&] {
    if (!c) return;
    if (!copies) {  // bring the outputs to the host mirror for the check
      a->d2h();
      a->fence();
    }
    if (Fault::get().here("check")) a->poison_outputs();
    ScopedRange verify(range + "/verify");
    r.check = c->verify(e.variant);
    r.status = r.check.pass ? Status::pass : Status::fail;
  });
  lock.finish();
  if (e.copies == CopyMode::none)
    r.note = "inputs created in the space: kernel alone";
  else if (r.copies_alias)
    r.note = "host space: the mirror is the data, nothing to copy";
  return s;
}

// The row an entry will fill, with what is known before it runs. Its work
// is the group's: every rank's case together, or what a distributed
// experiment declares for the group.
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
  r.noise_target = e.adaptive ? e.adaptive->noise : 0.0;
  r.warmups = e.warmups;
  r.ranks = e.ranks;
  const Work w = e.experiment->work(e.dtype, e.n, e.variant, e.case_parameters());
  const double copies = e.experiment->distributed ? 1.0 : e.ranks;
  r.bytes = w.bytes * copies;
  r.flops = w.flops * copies;
  r.footprint = static_cast<double>(e.experiment->footprint(e.dtype, e.n, e.case_parameters())) *
                e.ranks;
  r.launches = w.launches;
  return r;
}

}  // namespace

CaseSlot::CaseSlot() = default;
CaseSlot::~CaseSlot() = default;

Case* CaseSlot::get(const Entry& e, const Comm& group, Status& status, std::string& note) {
  if (m_case_id != e.case_id) {
    m_case.reset();  // the last case's memory is free before the next is made
    m_case_id = e.case_id;
    m_status = Status::pass;
    m_note.clear();
    const Parameters parameters = e.case_parameters();
    const std::size_t need = e.experiment->footprint(e.dtype, e.n, parameters);
    const std::size_t free_space = space_free_bytes(e.space);
    const std::size_t free_host = host_available_bytes();
    if (need > free_space || (!is_host_space(e.space) && need > free_host)) {
      m_status = Status::skipped;
      m_note = fmt::format("needs {} ({} bytes); free: {} in {} memory, {} on the host", gib(need),
                           need, gib(free_space), e.space, gib(free_host));
    } else {
      try {
        ScopedRange setup(fmt::format("portalab/{}/{}/setup", e.experiment->name, e.space));
        m_case = e.experiment->make(e.space, e.dtype, e.n, e.copies, parameters, group);
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

void CaseSlot::release() {
  m_case.reset();
  m_case_id.reset();
}

Result run_entry(const Entry& e, CaseSlot& slot, const RunOptions& options) {
  const Comm& all = options.world ? *options.world : world();
  Lockstep lock(all);
  lock.gate();  // a safe point on every rank: a signal stops them all here
  Result r = row_of(e);
  if (std::string why = e.too_few_ranks(all.size()); !why.empty()) {  // alike on every rank
    r.status = Status::not_applicable;
    r.note = std::move(why);
    return r;
  }
  const Comm& group = all.first(e.ranks);  // collective at the first use of e.ranks
  const bool member = group.member();
  ScopedRange experiment_range("portalab/" + r.experiment);
  ScopedRange space_range(fmt::format("portalab/{}/{}", r.experiment, r.space));
  Case* c = nullptr;
  if (member) {
    // A variant this space cannot run at all is said so, not tried.
    if (const std::string why = e.experiment->not_applicable(e.space, e.dtype, e.variant, e.copies);
        !why.empty()) {
      r.status = Status::not_applicable;
      r.note = "not applicable: " + why;
    } else {
      c = slot.get(e, group, r.status, r.note);
    }
  }
  Samples samples;
  // Every member has its case, or none measures.
  lock.step([&] {
    if (member && !c) throw std::runtime_error(r.note);
  });
  if (lock.gate())
    samples = measure(c, e, options.host_policies.of(e.space), r, lock, options.energy);
  if (c && !lock.error().empty() && r.status != Status::not_applicable &&
      r.status != Status::skipped) {
    r.status = Status::error;
    r.note = lock.error();
  }
  const bool stopped_by_another = c && lock.stopped() && lock.error().empty();
  if (stopped_by_another) {
    r.status = Status::error;
    r.note = fmt::format("stopped: rank {} could not go on", lock.first_failed());
  }
  const double in_bytes = c ? static_cast<double>(c->arrays().input_bytes()) : 0.0;
  const double out_bytes = c ? static_cast<double>(c->arrays().output_bytes()) : 0.0;
  if (all.size() == 1) {
    if (r.status == Status::pass || r.status == Status::fail) {
      const bool copied = !samples.h2d.empty() && summarize(samples.h2d).median > 0;
      finish_row(r, samples, copied ? in_bytes : 0, copied ? out_bytes : 0);
    }
  } else {
    // Rank 0 makes the row of every rank's part; the others' rows are theirs.
    const auto parts = all.gather(
        rank_part(r, samples, member, stopped_by_another, in_bytes, out_bytes)
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (all.rank() == 0) combine(r, parts, options.rank_places);
  }
  if (r.status == Status::pass || r.status == Status::fail)
    if (const auto* lim = options.limits ? options.limits->find(e.space) : nullptr)
      compare_with_limits(r, *lim, *options.limits, e.experiment->bound_of(e.variant));
  // The values themselves, as the lab prints them (array_ops).
  if (options.tables && c) r.shown = c->show(e.variant);
  return r;
}

bool wants_another(const Entry& e, const std::vector<double>& kernel_ms, double elapsed_s,
                   std::string& stopped_by) {
  const int done = static_cast<int>(kernel_ms.size());
  if (!e.adaptive) {
    stopped_by = "reps";
    return done < e.reps;
  }
  const AdaptiveReps& a = *e.adaptive;
  if (done < a.min_reps) return true;
  if (stats::relative_halfwidth(stats::median_interval(kernel_ms)) <= a.noise) {
    stopped_by = "noise";
    return false;
  }
  if (done >= a.max_reps) {
    stopped_by = "max_reps";
    return false;
  }
  if (elapsed_s >= a.max_time_s) {
    stopped_by = "max_time";
    return false;
  }
  return true;
}

}  // namespace portalab
