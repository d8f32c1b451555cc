#include "engine/run_case.hpp"

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
#include <deque>
#include <limits>
#include <numeric>
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

// One variant of a case while the case is measured: its row, its gates and
// what it has timed. The variants of a case share the case's arrays.
struct VariantRun {
  VariantRun(const Entry& entry, const Comm& all) : e(&entry), lock(all) {}
  const Entry* e;
  Lockstep lock;
  Result r;
  Samples s;
  Case* c = nullptr;           // null on a rank outside the entry's group
  bool timing = false;         // its turns at repetitions are to come (interleaved)
  bool measured = false;       // its repetitions ended well on every rank
  bool copies = false;         // copy phases are timed
  std::string range;           // the profilers' name of its phases
  double elapsed_s = 0;        // its repetitions' time, gates included (max_time_s)
  int timed = 0;               // repetitions tried, for the fault injection
  int pass = 0;                // of the entry's passes
  std::size_t pass_start = 0;  // s's repetitions before this pass's
  std::unique_ptr<EnergyLog> energy;
};

// The cold call and warm-ups of one variant, each after a gate.
void prepare(VariantRun& v, const kernels::HostPolicy& policy) {
  static std::set<std::string> seen;  // kernels already called in this process
  Result& r = v.r;
  Case* c = v.c;
  const Entry& e = *v.e;
  Lockstep& lock = v.lock;
  r.first_in_process =
      seen.insert(fmt::format("{}/{}/{}/{}", r.experiment, r.variant, r.space, r.dtype)).second;
  CaseArrays* a = c ? &c->arrays() : nullptr;
  r.copies_alias = a && a->copies_alias();
  // No copy phases where the experiment moves its arrays itself (copy_overlap,
  // whose copies are part of its kernel phase).
  v.copies = a && e.copies != CopyMode::none && !a->copies_alias() &&
             a->input_bytes() + a->output_bytes() > 0;
  v.range = fmt::format("portalab/{}/{}", r.experiment, r.space);
  const bool copies = v.copies;
  const std::string& range = v.range;

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
    // Every rank runs as many as the rank that wants the most (the gate).
    ScopedRange warmup(range + "/warmup");
    const auto start = std::chrono::steady_clock::now();
    int done = 0;
    for (;;) {
      const double elapsed_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!lock.step(
              [&] {
                if (c) repetition(*c, e.variant, policy, copies, range + "/warmup");
                ++done;
              },
              c && wants_warmup(e, done, elapsed_s)))
        break;
    }
    r.warmups = done;
  }
}

// The check of v, untimed, on its last call's outputs, after a gate.
void check(VariantRun& v, const RunOptions& options) {
  Result& r = v.r;
  Case* c = v.c;
  v.lock.step([&] {
    if (!c) return;
    CaseArrays* a = &c->arrays();
    const bool copies = v.copies;
    const std::string& range = v.range;
    const Entry& e = *v.e;
    if (!copies) {  // bring the outputs to the host mirror for the check
      a->d2h();
      a->fence();
    }
    if (Fault::get().here("check")) a->poison_outputs();
    ScopedRange verify(range + "/verify");
    r.check = c->verify(e.variant);
    r.status = r.check.pass ? Status::pass : Status::fail;
    // The values themselves, as the lab prints them (array_ops).
    if (options.tables) r.shown = c->show(e.variant);
  });
}

// One timed repetition of v, after its gate; false once v is done on every
// rank. A failure on this rank is kept for the next gate, which every rank
// passes at the same place in the order: v is dropped there by all at once.
bool time_one(VariantRun& v, const kernels::HostPolicy& policy) {
  Case* c = v.c;
  Samples& s = v.s;
  const auto start = std::chrono::steady_clock::now();
  // Every rank passes the gate; a rank outside the group wants nothing.
  const bool more = c && wants_another(*v.e, std::span(s.kernel).subspan(v.pass_start), v.elapsed_s,
                                       v.r.stopped_by, v.pass);
  const bool went = v.lock.step(
      [&] {
        if (!c) return;
        const int i = v.timed++;
        if (i == 1 && Fault::get().here("early"))
          throw std::runtime_error(fmt::format("fault injected on rank {}", world().rank()));
        const Rep t = repetition(*c, v.e->variant, policy, v.copies, v.range, v.energy.get());
        // As a fence reports a device's failure: after the repetition.
        if (i == 1 && Fault::get().here("throw"))
          throw std::runtime_error(fmt::format("fault injected on rank {}", world().rank()));
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
      more);
  v.elapsed_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return went || (!v.lock.error().empty() && !v.lock.stopped());
}

// The timed repetitions of variants of one case: with `order`, round after
// round, one of each variant still wanting more, in an order shuffled anew,
// so that a drift of the machine falls on every variant alike (the same seed
// gives every rank the same order); without, each variant's in one block.
// `measured`: every rank's repetitions ended well.
void time_variants(const std::vector<VariantRun*>& runs, const RunOptions& options,
                   std::mt19937_64* order) {
  // A row's energy is its counters' move over its window, where its
  // repetitions ran alone; beside others', the sum over its own repetitions.
  for (VariantRun* v : runs)
    if (options.energy && v->c)
      v->energy = std::make_unique<EnergyLog>(*options.energy, !is_host_space(v->r.space),
                                              /*interleaved=*/runs.size() > 1);
  std::vector<std::size_t> active(runs.size());
  std::iota(active.begin(), active.end(), std::size_t{0});
  auto one = [&](std::size_t k) {
    return time_one(*runs[k], options.host_policies.of(runs[k]->e->space));
  };
  profiler_start();  // nsys --capture-range=cudaProfilerApi records these alone
  try {
    if (!order)
      for (const std::size_t k : active)
        while (one(k)) {
        }
    while (order && !active.empty()) {
      shuffle(active, *order);
      std::vector<std::size_t> still;
      for (const std::size_t k : active)
        if (one(k)) still.push_back(k);
      std::sort(still.begin(), still.end());  // the next shuffle starts from the listed order
      active = std::move(still);
    }
  } catch (...) {
    profiler_stop();
    throw;
  }
  profiler_stop();
  for (VariantRun* v : runs) {
    if (v->energy) v->s.energy = v->energy->finish();
    v->measured = v->lock.finish();
  }
}

// `now`, the row of a pass from all passes' repetitions so far, made what
// the passes together say: the first pass's cold call (the one that is
// cold), every pass's warm-ups, the failure of an earlier pass where this
// one passed, and a budget that ran out in any pass unless the repetitions
// together are steady.
void merge_passes(Result& now, const Result& before) {
  now.cold_ms = before.cold_ms;
  now.first_in_process = before.first_in_process;
  now.warmups += before.warmups;
  if (before.status == Status::error ||
      (before.status == Status::fail && now.status != Status::error)) {
    now.status = before.status;
    now.note = before.note;
    now.check = before.check;
  }
  if (now.noise_target > 0 && now.reps > 0) {
    const std::string budget = now.noisy()      ? now.stopped_by
                               : before.noisy() ? before.stopped_by
                                                : "";
    now.stopped_by = budget.empty() || now.rel_ci95 <= now.noise_target ? "noise" : budget;
  }
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
  r.resident_bytes = w.resident_bytes * e.ranks;
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

std::vector<Result> run_case(std::span<const Entry> entries, CaseSlot& slot,
                             const RunOptions& options, std::mt19937_64* order, int pass,
                             std::span<Carried> carried) {
  const Comm& all = options.world ? *options.world : world();
  std::deque<VariantRun> runs;
  // One range around the case: a tool sees each variant's cold call in the
  // range of its repetitions. None where the run has too few ranks for it.
  const Entry& front = entries.front();
  std::optional<ScopedRange> experiment_range, space_range;
  if (front.too_few_ranks(all.size()).empty()) {
    experiment_range.emplace("portalab/" + front.experiment->name);
    space_range.emplace(fmt::format("portalab/{}/{}", front.experiment->name, front.space));
  }
  // Each variant's set-up, cold call, warm-ups and check, in the listed order.
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    VariantRun& v = runs.emplace_back(e, all);
    v.pass = pass;
    if (!carried.empty()) {
      v.s = carried[i].samples;
      v.pass_start = v.s.kernel.size();
    }
    v.lock.gate();  // a safe point on every rank: a signal stops them all here
    Result& r = v.r = row_of(e);
    if (std::string why = e.too_few_ranks(all.size()); !why.empty()) {  // alike on every rank
      r.status = Status::not_applicable;
      r.note = std::move(why);
      continue;
    }
    const Comm& group = all.first(e.ranks);  // collective at the first use of e.ranks
    const bool member = group.member();
    if (member) {
      // A variant this space cannot run at all is said so, not tried.
      if (const std::string why = e.experiment->not_applicable(e.space, e.dtype, e.variant,
                                                               e.copies);
          !why.empty()) {
        r.status = Status::not_applicable;
        r.note = "not applicable: " + why;
      } else {
        v.c = slot.get(e, group, r.status, r.note);
      }
    }
    // Every member has its case, or none measures.
    v.lock.step([&] {
      if (member && !v.c) throw std::runtime_error(r.note);
    });
    if (!v.lock.gate()) continue;
    prepare(v, options.host_policies.of(e.space));
    if (order) {  // checked now: the others' turns overwrite its outputs
      check(v, options);
      v.timing = v.lock.finish();
    } else {  // its repetitions at once, then the check on their outputs
      time_variants({&v}, options, nullptr);
      if (v.measured) {
        check(v, options);
        v.lock.finish();
      }
    }
  }
  if (order) {
    std::vector<VariantRun*> turns;
    for (VariantRun& v : runs)
      if (v.timing) turns.push_back(&v);
    if (!turns.empty()) time_variants(turns, options, order);
  }
  // Each row, in the listed order (with several ranks, a gather each), and
  // the passes so far: it is carried to the next.
  std::vector<Result> rows;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    VariantRun& v = runs[i];
    Result& r = v.r;
    Case* c = v.c;
    const Entry& e = *v.e;
    const auto carry = [&] {
      if (carried.empty()) return;
      Carried& k = carried[i];
      if (k.passes > 0) merge_passes(r, k.row);
      k.samples = v.s;
      k.row = r;
      ++k.passes;
    };
    if (!e.too_few_ranks(all.size()).empty()) {  // said before it was set up
      carry();
      rows.push_back(std::move(r));
      continue;
    }
    v.s.pass_ends.push_back(v.s.kernel.size());
    if (v.measured) {
      if (e.copies == CopyMode::none)
        r.note = "inputs created in the space: kernel alone";
      else if (r.copies_alias)
        r.note = "host space: the mirror is the data, nothing to copy";
    }
    if (c && !v.lock.error().empty() && r.status != Status::not_applicable &&
        r.status != Status::skipped) {
      r.status = Status::error;
      r.note = v.lock.error();
    }
    const bool stopped_by_another = c && v.lock.stopped() && v.lock.error().empty();
    if (stopped_by_another) {
      r.status = Status::error;
      r.note = fmt::format("stopped: rank {} could not go on", v.lock.first_failed());
    }
    const double in_bytes = c ? static_cast<double>(c->arrays().input_bytes()) : 0.0;
    const double out_bytes = c ? static_cast<double>(c->arrays().output_bytes()) : 0.0;
    if (all.size() == 1) {
      if (r.status == Status::pass || r.status == Status::fail) {
        const bool copied = !v.s.h2d.empty() && summarize(v.s.h2d).median > 0;
        finish_row(r, v.s, copied ? in_bytes : 0, copied ? out_bytes : 0);
      }
    } else {
      // Rank 0 makes the row of every rank's part; the others' rows are theirs.
      const auto parts = all.gather(
          rank_part(r, v.s, all.first(e.ranks).member(), stopped_by_another, in_bytes, out_bytes)
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      if (all.rank() == 0) combine(r, parts, options.rank_places);
    }
    if (r.status == Status::pass || r.status == Status::fail)
      if (const auto* lim = options.limits ? options.limits->find(e.space) : nullptr)
        compare_with_limits(r, *lim, *options.limits, e.experiment->bound_of(e.variant));
    carry();
    rows.push_back(std::move(r));
  }
  return rows;
}

void shuffle(std::vector<std::size_t>& order, std::mt19937_64& rng) {
  // Fisher-Yates on the generator's raw output: std::shuffle's and the
  // distributions' algorithms differ between standard libraries, and a
  // seed recorded in one build must give the same order in another.
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
}

bool wants_warmup(const Entry& e, int done, double elapsed_s) {
  return done < e.warmups || (e.adaptive && elapsed_s < e.adaptive->min_warmup_s);
}

bool wants_another(const Entry& e, std::span<const double> kernel_ms, double elapsed_s,
                   std::string& stopped_by, int pass) {
  const int done = static_cast<int>(kernel_ms.size());
  if (!e.adaptive) {
    stopped_by = "reps";
    return done < e.reps;
  }
  const AdaptiveReps a = e.adaptive->share(pass);
  if (done < a.min_reps) return true;
  if (stats::relative_halfwidth(stats::median_interval({kernel_ms.begin(), kernel_ms.end()})) <=
      a.noise) {
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
