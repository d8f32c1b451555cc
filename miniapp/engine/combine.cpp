#include "engine/combine.hpp"

#include "support/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace portalab {

namespace {

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

Status status_named(const std::string& name) {
  for (Status st :
       {Status::pass, Status::fail, Status::skipped, Status::error, Status::not_applicable})
    if (to_string(st) == name) return st;
  return Status::error;
}

}  // namespace

void finish_row(Result& r, Samples& s, double in_bytes, double out_bytes) {
  r.reps = static_cast<int>(s.kernel.size());
  r.kernel_reps_ms = s.kernel;
  r.total_reps_ms = s.total;
  if (!s.kernel.empty()) {
    const stats::MedianInterval ci = stats::median_interval(s.kernel);
    r.median_ci_low_ms = ci.low;
    r.median_ci_high_ms = ci.high;
    r.rel_ci95 = stats::relative_halfwidth(ci);
  }
  r.h2d = summarize(s.h2d);
  r.kernel = summarize(s.kernel);
  r.d2h = summarize(s.d2h);
  r.total = summarize(s.total);
  // Each pass's median, where there were several (AdaptiveReps::passes).
  r.pass_kernel_ms.clear();
  r.pass_total_ms.clear();
  if (s.pass_ends.size() > 1)
    for (std::size_t p = 0, begin = 0; p < s.pass_ends.size(); begin = s.pass_ends[p++]) {
      const std::size_t end = std::min(s.pass_ends[p], s.kernel.size());
      if (begin >= end) continue;  // a pass of no repetition (an error) has no median
      r.pass_kernel_ms.push_back(
          summarize({s.kernel.begin() + begin, s.kernel.begin() + end}).median);
      r.pass_total_ms.push_back(summarize({s.total.begin() + begin, s.total.begin() + end}).median);
    }
  if (r.pass_kernel_ms.size() < 2) {  // one median is the row's own
    r.pass_kernel_ms.clear();
    r.pass_total_ms.clear();
  }
  for (auto& [name, values] : s.metrics) r.set_metric(name, summarize(std::move(values)).median);
  if (!s.timed_by.empty()) r.timed_by = s.timed_by;
  if (r.kernel.median > 0) {
    r.gbps = r.bytes / (r.kernel.median * 1e6);
    r.gflops = r.flops / (r.kernel.median * 1e6);
  }
  if (r.launches > 0) r.us_per_launch = 1e3 * r.kernel.median / r.launches;
  r.energy = s.energy;
  if (r.energy) r.energy->derive(r.flops, r.bytes);
  if (!s.h2d.empty() && r.h2d.median > 0 && in_bytes > 0)
    r.h2d_gbps = in_bytes / (r.h2d.median * 1e6);
  if (!s.d2h.empty() && r.d2h.median > 0 && out_bytes > 0)
    r.d2h_gbps = out_bytes / (r.d2h.median * 1e6);
}

nlohmann::json rank_part(const Result& r, const Samples& s, bool member, bool stopped_by_another,
                         double in_bytes, double out_bytes) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& [name, values] : s.metrics) metrics.push_back({name, values});
  return {{"member", member},
          {"stopped_by_another", stopped_by_another},
          {"status", std::string(to_string(r.status))},
          {"note", r.note},
          {"check",
           {{"pass", r.check.pass},
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
          {"pass_ends", s.pass_ends},
          {"in_bytes", in_bytes},
          {"out_bytes", out_bytes},
          {"energy", s.energy ? to_json(*s.energy) : nlohmann::json()}};
}

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
  // The ranks pass every gate together: their passes end alike.
  slowest.pass_ends = members.front()["pass_ends"].get<std::vector<std::size_t>>();
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

}  // namespace portalab
