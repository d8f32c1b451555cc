#include "engine/run_entry.hpp"

#include "experiment/experiment.hpp"
#include "limits/calibrate.hpp"
#include "platform/interrupt.hpp"
#include "platform/library_probe.hpp"
#include "platform/memory.hpp"
#include "platform/profiling.hpp"
#include "platform/spaces.hpp"
#include "platform/timing.hpp"
#include "ranks/comm.hpp"
#include "ranks/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
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

// The row's rates as fractions of the limits calibrated for its space; with
// several ranks, of as many times the limit (each rank has its own), and
// between ranks, of the links calibrated among them.
void compare_with_limits(Result& r, const SpaceLimits& lim, const Calibration& cal, Bound bound) {
  r.limit = {bound, 0.0, r.copies};
  const std::string mode(to_string(r.copies));
  // Each rank has its own memory, device and copy engines.
  const double per_rank = r.ranks;
  switch (bound) {
    case Bound::transfer:
      // Host<->device both ways at once: at best both directions' calibrated rates.
      r.limit.value = per_rank * (lim.transfer_gbps("h2d_" + mode) + lim.transfer_gbps("d2h_" + mode));
      break;
    case Bound::compute:
      r.limit.value = per_rank * (lim.gemm_gflops.count(r.dtype) ? lim.gemm_gflops.at(r.dtype) : 0.0);
      break;
    case Bound::memory:
      r.limit.value = per_rank * lim.memory_gbps();
      r.limit.beyond_cache = lim.beyond_cache(r.bytes / per_rank);
      break;
    case Bound::read:
      r.limit.value = per_rank * lim.read_limit_gbps();
      r.limit.beyond_cache = lim.beyond_cache(r.bytes / per_rank);
      break;
    case Bound::peer: r.limit.value = cal.links.peer_gbps(r.ranks, false); break;
    case Bound::peer_duplex: r.limit.value = cal.links.peer_gbps(r.ranks, true); break;
    case Bound::collective: r.limit.value = cal.links.allreduce_busbw(r.space, r.ranks); break;
  }
  if (r.limit.known()) r.pct_of_limit = (bound == Bound::compute ? r.gflops : r.gbps) / r.limit.value;
  if (const double best = lim.transfer_gbps("h2d_" + mode); best > 0 && r.h2d_gbps > 0)
    r.h2d_pct_of_limit = r.h2d_gbps / (per_rank * best);
  if (const double best = lim.transfer_gbps("d2h_" + mode); best > 0 && r.d2h_gbps > 0)
    r.d2h_pct_of_limit = r.d2h_gbps / (per_rank * best);
}

// The ranks of a run pass an entry's gates together: the barrier before each
// repetition, which also says whether every rank can go on and whether any
// received a signal. A rank whose step failed keeps passing gates (saying
// so) until all stop at the same one: no rank is left waiting in a
// collective. With one rank the gates are local and cost nothing.
class Lockstep {
 public:
  explicit Lockstep(const Comm& world) : m_world(world) {}
  // Before a step: false once any rank has failed; Interrupted on every rank
  // once any has a signal.
  bool gate() {
    if (m_stopped) return false;
    const GateState g = m_world.gate(m_error.empty(), interrupt_signal());
    if (watchdog) watchdog->beat();
    if (g.signal != 0) throw Interrupted(g.signal);
    if (!g.all_ok) {
      m_stopped = true;
      m_first_failed = g.first_failed;
    }
    return !m_stopped;
  }
  // Runs one step after its gate; its failure is kept, to be shared at the
  // next gate. False when the step was not run or failed.
  template <class F>
  bool step(F&& f) {
    if (!gate()) return false;
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

// The per-repetition phase times of one entry on one rank.
struct Samples {
  std::vector<double> h2d, kernel, d2h, total;
  std::vector<std::pair<std::string, std::vector<double>>> metrics;  // in first-seen order
  std::string timed_by;
  std::optional<EntryEnergy> energy;  // of the repetitions, where meters were given
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
    for (int i = 0; i < r.reps; ++i)
      if (!lock.step([&] {
            if (!c) return;
            if (i == 1 && Fault::get().here("early"))
              throw std::runtime_error(fmt::format("fault injected on rank {}", world().rank()));
            const Rep t =
                repetition(*c, e.variant, policy, copies, range, energy ? &*energy : nullptr);
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
          }))
        break;
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

// The row's statistics and rates from its samples (the slowest rank's, with
// several). in_bytes/out_bytes: what one copy phase moves.
void finish_row(Result& r, Samples& s, double in_bytes, double out_bytes) {
  r.h2d = summarize(s.h2d);
  r.kernel = summarize(s.kernel);
  r.d2h = summarize(s.d2h);
  r.total = summarize(s.total);
  for (auto& [name, values] : s.metrics) r.set_metric(name, summarize(std::move(values)).median);
  if (!s.timed_by.empty()) r.timed_by = s.timed_by;
  if (r.kernel.median > 0) {
    r.gbps = r.bytes / (r.kernel.median * 1e6);
    r.gflops = r.flops / (r.kernel.median * 1e6);
  }
  if (r.launches > 0) r.us_per_launch = 1e3 * r.kernel.median / r.launches;
  r.energy = s.energy;
  if (r.energy) r.energy->derive(r.flops, r.bytes);
  if (!s.h2d.empty() && r.h2d.median > 0 && in_bytes > 0) r.h2d_gbps = in_bytes / (r.h2d.median * 1e6);
  if (!s.d2h.empty() && r.d2h.median > 0 && out_bytes > 0) r.d2h_gbps = out_bytes / (r.d2h.median * 1e6);
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
  r.warmups = e.warmups;
  r.ranks = e.ranks;
  const Work w = e.experiment->work(e.dtype, e.n, e.variant, e.case_parameters());
  const double copies = e.experiment->distributed ? 1.0 : e.ranks;
  r.bytes = w.bytes * copies;
  r.flops = w.flops * copies;
  r.launches = w.launches;
  return r;
}

Status worse(Status a, Status b) {
  // error > fail > skipped > not applicable > pass: the row says the worst.
  auto rank = [](Status s) {
    switch (s) {
      case Status::error: return 4;
      case Status::fail: return 3;
      case Status::skipped: return 2;
      case Status::not_applicable: return 1;
      case Status::pass: return 0;
    }
    return 4;
  };
  return rank(a) >= rank(b) ? a : b;
}

// What a rank sends rank 0 of its part of an entry.
nlohmann::json rank_part(const Result& r, const Samples& s, bool member, bool stopped_by_another,
                         double in_bytes, double out_bytes) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& [name, values] : s.metrics) metrics.push_back({name, values});
  return {{"member", member},
          {"stopped_by_another", stopped_by_another},
          {"status", std::string(to_string(r.status))},
          {"note", r.note},
          {"check", {{"pass", r.check.pass},
                     {"rel_error", r.check.rel_error},
                     {"tolerance", r.check.tolerance},
                     {"detail", r.check.detail}}},
          {"cold_ms", r.cold_ms},
          {"library", r.library},
          {"h2d", s.h2d},
          {"kernel", s.kernel},
          {"d2h", s.d2h},
          {"total", s.total},
          {"metrics", metrics},
          {"timed_by", s.timed_by},
          {"in_bytes", in_bytes},
          {"out_bytes", out_bytes},
          {"energy", s.energy ? to_json(*s.energy) : nlohmann::json()}};
}

Status status_named(const std::string& name) {
  for (Status st : {Status::pass, Status::fail, Status::skipped, Status::error,
                    Status::not_applicable})
    if (to_string(st) == name) return st;
  return Status::error;
}

// Rank 0: the entry's row from every rank's part. The times are the slowest
// member's at each repetition (a barrier starts each), the check passes only
// where every member's does, and the first member that did not pass says why.
void combine(Result& r, const std::vector<std::string>& parts, const nlohmann::json& places) {
  std::vector<nlohmann::json> members;
  for (const auto& text : parts) {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j["member"].get<bool>()) members.push_back(std::move(j));
  }
  Status status = Status::pass;
  std::string note;
  // The same word from every member needs no rank: say it once.
  const bool agreed = std::all_of(members.begin(), members.end(), [&](const nlohmann::json& m) {
    return m["status"] == members.front()["status"] && m["note"] == members.front()["note"];
  });
  // The rank that failed says why; those it stopped only say that it did.
  const bool any_own_failure = std::any_of(members.begin(), members.end(), [](const auto& m) {
    return !m["stopped_by_another"].template get<bool>() && m["status"] != "PASS";
  });
  for (std::size_t k = 0; k < members.size(); ++k) {
    const auto& m = members[k];
    if (any_own_failure && m["stopped_by_another"].get<bool>()) continue;
    const Status st = status_named(m["status"]);
    if (worse(st, status) != status || (st != Status::pass && note.empty())) {
      const std::string why = m["note"].get<std::string>().empty()
                                  ? m["check"]["detail"].get<std::string>()
                                  : m["note"].get<std::string>();
      if (worse(st, status) != status || note.empty()) note = fmt::format("rank {}: {}", k, why);
    }
    status = worse(status, st);
  }
  // Rank 0's own check figures, unless another member's failed.
  r.status = status;
  if (status != Status::pass) r.note = agreed ? members.front()["note"].get<std::string>() : note;
  double worst_error = r.check.rel_error;
  bool all_pass = true;
  for (const auto& m : members) {
    // Infinite or NaN errors travel as null in JSON: the worst there is.
    const auto& e = m["check"]["rel_error"];
    worst_error = std::max(worst_error, e.is_number() ? e.get<double>()
                                                      : std::numeric_limits<double>::infinity());
    all_pass = all_pass && m["check"]["pass"].get<bool>();
  }
  r.check.rel_error = worst_error;
  r.check.pass = all_pass;
  if (status != Status::pass && status != Status::fail) return;

  Samples slowest;
  const std::size_t reps = members.front()["kernel"].size();
  for (const char* phase : {"h2d", "kernel", "d2h", "total"}) {
    std::vector<double> per_rep(reps, 0.0);
    for (const auto& m : members)
      for (std::size_t i = 0; i < reps && i < m[phase].size(); ++i)
        per_rep[i] = std::max(per_rep[i], m[phase][i].get<double>());
    (phase == std::string("h2d")      ? slowest.h2d
     : phase == std::string("kernel") ? slowest.kernel
     : phase == std::string("d2h")    ? slowest.d2h
                                      : slowest.total) = std::move(per_rep);
  }
  for (const auto& metric : members.front()["metrics"])
    slowest.metrics.emplace_back(metric[0].get<std::string>(),
                                 metric[1].get<std::vector<double>>());
  slowest.timed_by = members.front()["timed_by"].get<std::string>();
  double cold = 0, in_bytes = 0, out_bytes = 0;
  std::vector<double> medians;
  // Each rank's energy, and the node's: its GPUs and CPUs each counted once.
  std::vector<EntryEnergy> energies;
  std::vector<std::string> hosts, devices;
  r.per_rank = nlohmann::json::array();
  for (std::size_t k = 0; k < members.size(); ++k) {
    const auto& m = members[k];
    cold = std::max(cold, m["cold_ms"].get<double>());
    in_bytes += m["in_bytes"].get<double>();
    out_bytes += m["out_bytes"].get<double>();
    const double kernel = summarize(m["kernel"].get<std::vector<double>>()).median;
    medians.push_back(kernel);
    nlohmann::json row = {{"rank", k},
                          {"kernel_ms", kernel},
                          {"total_ms", summarize(m["total"].get<std::vector<double>>()).median},
                          {"cold_ms", m["cold_ms"]},
                          {"check", m["status"]}};
    if (k < places.size()) {
      const auto& p = places[k];
      for (const char* key : {"host", "local_rank", "cpus", "device"})
        if (p.contains(key)) row[key] = p[key];
    }
    if (m.contains("energy") && m["energy"].is_object()) {
      row["energy"] = m["energy"];
      energies.push_back(entry_energy_from_json(m["energy"]));
      const nlohmann::json place = k < places.size() ? places[k] : nlohmann::json::object();
      hosts.push_back(place.value("host", std::to_string(k)));
      devices.push_back(place.contains("device") ? place["device"].value("uuid", std::to_string(k))
                                                 : std::to_string(k));
    }
    r.per_rank.push_back(std::move(row));
  }
  r.cold_ms = cold;
  if (energies.size() == members.size()) slowest.energy = sum_over_ranks(energies, hosts, devices);
  finish_row(r, slowest, in_bytes, out_bytes);
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  double mean = 0;
  for (double m : medians) mean += m / static_cast<double>(medians.size());
  r.rank_kernel_min_ms = *lo;
  r.rank_kernel_max_ms = *hi;
  r.imbalance = mean > 0 ? *hi / mean - 1.0 : 0.0;
}

}  // namespace

void hold_to_limits(Result& r, const Calibration& cal) {
  if (r.status != Status::pass && r.status != Status::fail) return;
  if (const auto* lim = cal.find(r.space)) compare_with_limits(r, *lim, cal, r.limit.bound);
}

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
        rank_part(r, samples, member, stopped_by_another, in_bytes, out_bytes).dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (all.rank() == 0) combine(r, parts, options.rank_places);
  }
  if (r.status == Status::pass || r.status == Status::fail)
    if (const auto* lim = options.limits ? options.limits->find(e.space) : nullptr)
      compare_with_limits(r, *lim, *options.limits, e.experiment->bound_of(e.variant));
  // The values themselves, as the lab prints them (array_ops).
  if (options.tables && c) r.shown = c->show(e.variant);
  return r;
}

}  // namespace portalab
