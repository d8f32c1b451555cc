#include "store/health.hpp"

#include "store/store.hpp"
#include "store/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace portalab::store {

namespace {

constexpr int exit_bad_input = 2;

const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none;
  if (!j.is_object()) return none;
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

std::string text(const nlohmann::json& j, const char* key) {
  const auto& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

struct Gpu {
  std::string uuid, name, host;
};

// The GPU of each rank (provenance.ranks), or of a run alone (devices).
std::map<int, Gpu> gpus_of(const nlohmann::json& p, const std::string& host) {
  std::map<int, Gpu> out;
  for (const auto& r : member(p, "ranks")) {
    const auto& d = member(r, "device");
    const auto& rank = member(r, "rank");
    if (!rank.is_number_integer() || text(d, "uuid").empty()) continue;
    out[rank.get<int>()] = {text(d, "uuid"), text(d, "name"), text(r, "host")};
  }
  if (out.empty())
    for (const auto& d : member(p, "devices"))
      if (!text(d, "uuid").empty()) {
        out[0] = {text(d, "uuid"), text(d, "name"), host};
        break;
      }
  return out;
}

// One figure judged against what it should be (`against`: the reference or
// its own median): a reason where it falls short.
std::optional<std::string> shortfall(const HealthFigure& f, double against, double tol,
                                     const std::string& what) {
  const double ratio = f.value / against;
  const std::string who = f.kind == "node" ? fmt::format("node {} ({})", f.host, f.model)
                          : f.kind == "link"
                              ? (f.peer.empty()
                                     ? fmt::format("{} ({})", f.id, f.model)
                                     : fmt::format("{} -> {} ({})", f.id, f.peer, f.model))
                              : f.id;
  if (lower_is_better(f.unit)) {
    if (ratio <= 1 + latency_slack * tol) return std::nullopt;
    return fmt::format("{} {} {:.4g} {}, {:.2f} times {} {:.4g}", who, f.quantity, f.value, f.unit,
                       ratio, what, against);
  }
  if (ratio >= 1 - tol) return std::nullopt;
  return fmt::format("{} {} {:.4g} {}, {:.2f} of {} {:.4g}", who, f.quantity, f.value, f.unit,
                     ratio, what, against);
}

class Judge {
 public:
  Judge(const References& refs, Connection* db, const HealthOptions& o, std::string run_id)
      : m_refs(refs), m_db(db), m_o(o), m_run_id(std::move(run_id)) {}

  void judge(HealthFigure& f, const std::string& store_quantity) {
    const double tol = m_o.tolerance_pct / 100;
    if (const auto model = m_refs.find(f.model); model != m_refs.end())
      if (const auto q = model->second.find(f.quantity); q != model->second.end()) {
        f.reference = q->second.measured;
        f.published = q->second.published;
      }
    bool judged = false;
    if (f.reference && f.value > 0) {
      judged = true;
      if (auto r = shortfall(f, f.reference->value, tol, fmt::format("the {} reference", f.model)))
        f.reasons.push_back(std::move(*r));
    }
    if (m_db && f.kind != "link") {
      const auto earlier = history(f, store_quantity);
      f.history_runs = static_cast<int>(earlier.size());
      if (!earlier.empty()) f.history = median_of(earlier);
      if (f.history_runs >= m_o.min_history && *f.history > 0 && f.value > 0) {
        judged = true;
        if (auto r = shortfall(f, *f.history, tol,
                               fmt::format("its own median over {} earlier runs", f.history_runs)))
          f.reasons.push_back(std::move(*r));
      }
    }
    f.verdict = !f.reasons.empty() ? "degraded" : judged ? "healthy" : "unjudged";
  }

 private:
  std::vector<double> history(const HealthFigure& f, const std::string& quantity) {
    std::vector<double> out;
    auto s = f.kind == "gpu" ? m_db->prepare(
                                   "SELECT l.value FROM limits l JOIN runs ru ON ru.id = l.run "
                                   "WHERE l.gpu_uuid = ?1 AND l.space = ?2 AND l.quantity = ?3 "
                                   "AND ru.run_id != ?4 ORDER BY ru.started_unix DESC LIMIT ?5")
                             : m_db->prepare(
                                   "SELECT l.value FROM limits l JOIN runs ru ON ru.id = l.run "
                                   "WHERE l.host_space = 1 AND ru.machine = ?1 AND l.space = ?2 "
                                   "AND l.quantity = ?3 AND ru.run_id != ?4 "
                                   "ORDER BY ru.started_unix DESC LIMIT ?5");
    s.bind(1, f.kind == "gpu" ? f.id : f.host)
        .bind(2, f.space)
        .bind(3, quantity)
        .bind(4, m_run_id)
        .bind(5, m_o.history_runs);
    while (s.step()) out.push_back(s.real(0));
    return out;
  }

  const References& m_refs;
  Connection* m_db;
  const HealthOptions& m_o;
  std::string m_run_id;
};

}  // namespace

bool Health::degraded() const {
  return !problems.empty() ||
         std::any_of(figures.begin(), figures.end(),
                     [](const HealthFigure& f) { return f.verdict == "degraded"; });
}

Health judge_health(const nlohmann::json& results, const References& refs, Connection* db,
                    const HealthOptions& o) {
  const auto& p = member(results, "provenance");
  if (!p.is_object() || !member(results, "results").is_array())
    throw StoreError(exit_bad_input, "not a portalab results document (no provenance or results)");
  Health h;
  h.host = text(member(p, "host"), "hostname");
  h.cpu_model = text(member(p, "host"), "cpu_model");
  h.started_at = text(p, "started_at");
  h.run_id = run_id_of(p);
  h.tolerance_pct = o.tolerance_pct;
  Judge judge(refs, db, o, h.run_id);
  const auto gpus = gpus_of(p, h.host);

  // Each rank's limits: the host spaces' are the node's (rank 0's), the
  // device spaces' its own GPU's. Ranks that shared a GPU (a mapping of
  // ranks to devices gone wrong) measured it together: its first rank's kept.
  std::map<std::string, int> checked;  // GPU UUID -> the rank whose figures are kept
  auto add_limits = [&](const nlohmann::json& calibration, int rank) {
    if (const auto g = gpus.find(rank); g != gpus.end()) {
      const auto [first, fresh] = checked.emplace(g->second.uuid, rank);
      if (!fresh) {
        h.problems.push_back(
            fmt::format("ranks {} and {} ran on the same GPU {}: each GPU needs a rank of its own "
                        "(--kokkos-map-device-id-by=mpi_rank)",
                        first->second, rank, g->second.uuid));
        if (rank != 0) return;
      }
    }
    for (const auto& l : limit_figures(member(calibration, "spaces"))) {
      if (l.quantity == "memory_gbps") continue;  // the best of copy, memcpy and triad
      HealthFigure f;
      f.space = l.space;
      f.unit = l.unit;
      f.value = l.value;
      f.unsteady = l.unsteady;
      if (l.host) {
        if (rank != 0) continue;
        f.kind = "node";
        f.id = f.host = h.host;
        f.model = h.cpu_model;
        f.quantity = l.space + " " + l.quantity;
      } else {
        const auto g = gpus.find(rank);
        if (g == gpus.end()) {
          h.notes.push_back(
              fmt::format("rank {}: {} measured on a GPU without a UUID: unjudged", rank, l.space));
          continue;
        }
        f.kind = "gpu";
        f.id = g->second.uuid;
        f.host = g->second.host.empty() ? h.host : g->second.host;
        f.model = g->second.name;
        f.quantity = l.quantity;
      }
      judge.judge(f, l.quantity);
      h.figures.push_back(std::move(f));
    }
  };
  const auto& calibration = member(p, "calibration");
  if (!calibration.is_object())
    h.problems.push_back(
        "the run measured no limits (the health deck calibrates: was "
        "calibrate = \"none\" set?)");
  add_limits(calibration, 0);
  for (const auto& r : member(p, "ranks")) {
    const auto& rank = member(r, "rank");
    if (rank.is_number_integer() && rank.get<int>() > 0)
      add_limits(member(r, "calibration"), rank.get<int>());
  }

  // The links rank 0 measured: between the GPUs it sees (named by the
  // ranks' devices where a rank ran on each), and the allreduce among ranks.
  const auto& links = member(calibration, "links");
  std::map<int, Gpu> by_ordinal;
  for (const auto& r : member(p, "ranks")) {
    const auto& d = member(r, "device");
    const auto& id = member(d, "device_id");
    if (id.is_number_integer() && !text(d, "uuid").empty() && text(r, "host") == h.host)
      by_ordinal[id.get<int>()] = {text(d, "uuid"), text(d, "name"), h.host};
  }
  if (by_ordinal.empty() && gpus.count(0)) {
    for (const auto& d : member(p, "devices"))
      if (member(d, "device_id").is_number_integer() && !text(d, "uuid").empty())
        by_ordinal[member(d, "device_id").get<int>()] = gpus.at(0);
  }
  const auto& one_way = member(links, "peer_one_way_gbps");
  const std::string gpu_model = gpus.count(0) ? gpus.at(0).name : std::string();
  if (one_way.is_array()) {
    const std::size_t n = one_way.size();
    if (n > 1 && gpus.size() < n)
      h.notes.push_back(fmt::format(
          "{} GPUs visible, {} of them checked: run one rank per GPU (mpirun -np {}, or srun) to "
          "check each",
          n, gpus.size(), n));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n && one_way[i].is_array() && j < one_way[i].size(); ++j) {
        if (i == j || !one_way[i][j].is_number() || one_way[i][j].get<double>() <= 0) continue;
        auto name = [&](std::size_t k) {
          const auto g = by_ordinal.find(static_cast<int>(k));
          return g != by_ordinal.end() ? g->second.uuid : fmt::format("device {}", k);
        };
        HealthFigure f;
        f.kind = "link";
        f.id = name(i);
        f.peer = name(j);
        f.host = h.host;
        f.model = gpu_model;
        f.space = "Cuda";
        f.quantity = "peer_gbps";
        f.unit = "GB/s";
        f.value = one_way[i][j].get<double>();
        judge.judge(f, f.quantity);
        h.figures.push_back(std::move(f));
      }
  }
  for (const auto& a : member(links, "allreduce")) {
    const auto& ranks = member(a, "ranks");
    const auto& bw = member(a, "busbw_gbps");
    if (!ranks.is_number_integer() || ranks.get<int>() < 2 || !bw.is_number()) continue;
    HealthFigure f;
    f.kind = "link";
    f.id = f.host = h.host;
    f.space = text(a, "space");
    const bool host_space = f.space == "Serial" || f.space == "OpenMP" || f.space == "Threads";
    f.model = host_space ? h.cpu_model : gpu_model;
    f.quantity = fmt::format("{}allreduce_busbw_gbps_{}_ranks", host_space ? f.space + " " : "",
                             ranks.get<int>());
    f.unit = "GB/s";
    f.value = bw.get<double>();
    judge.judge(f, f.quantity);
    h.figures.push_back(std::move(f));
  }

  // Rows that failed their check, and a run cut short.
  for (const auto& r : member(results, "results")) {
    const std::string check = text(r, "check");
    if (check != "PASS" && check != "N/A")
      h.problems.push_back(fmt::format("{} {} {} n={} {}: check {}", text(r, "experiment"),
                                       text(r, "variant"), text(r, "dtype"),
                                       member(r, "n").is_number() ? member(r, "n").dump() : "?",
                                       text(r, "space"), check.empty() ? "missing" : check));
  }
  const auto& summary = member(results, "summary");
  if (member(summary, "interrupted").is_object() || member(summary, "incomplete").is_object() ||
      member(summary, "incomplete").is_boolean())
    h.problems.push_back("the run did not finish: its figures are partial");
  // Never a silent pass: what no reference nor history judged, said.
  std::map<std::string, std::vector<std::string>> unjudged;  // member -> quantities
  for (const auto& f : h.figures)
    if (f.verdict == "unjudged")
      unjudged[f.kind == "node" ? fmt::format("node {} ({})", f.host, f.model)
                                : fmt::format("{} ({})", f.id, f.model.empty() ? "?" : f.model)]
          .push_back(f.quantity);
  for (const auto& [who, quantities] : unjudged)
    h.notes.push_back(
        fmt::format("{}: {} figures unjudged ({}{}): no reference for its model{}", who,
                    quantities.size(), quantities.front(), quantities.size() > 1 ? ", ..." : "",
                    db ? fmt::format(" and fewer than {} earlier runs in the store", o.min_history)
                       : ", and no store (--db) of its earlier runs"));
  return h;
}

nlohmann::json to_json(const Health& h) {
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& f : h.figures) {
    nlohmann::json j{{"kind", f.kind},      {"id", f.id},       {"host", f.host},
                     {"model", f.model},    {"space", f.space}, {"quantity", f.quantity},
                     {"unit", f.unit},      {"value", f.value}, {"verdict", f.verdict},
                     {"reasons", f.reasons}};
    if (!f.peer.empty()) j["peer"] = f.peer;
    if (f.unsteady) j["unsteady"] = *f.unsteady;
    if (f.reference) {
      j["reference"] = f.reference->value;
      j["reference_source"] = f.reference->source;
      j["reference_date"] = f.reference->date;
      j["vs_reference"] = f.value / f.reference->value;
    }
    if (f.published) {
      j["published"] = f.published->value;
      j["published_source"] = f.published->source;
    }
    if (f.history) {
      j["history_median"] = *f.history;
      j["history_runs"] = f.history_runs;
    }
    figures.push_back(std::move(j));
  }
  return {{"host", h.host},
          {"cpu_model", h.cpu_model},
          {"run_id", h.run_id},
          {"started_at", h.started_at},
          {"references", h.references},
          {"tolerance_pct", h.tolerance_pct},
          {"verdict", h.degraded() ? "degraded" : "healthy"},
          {"problems", h.problems},
          {"notes", h.notes},
          {"figures", figures}};
}

}  // namespace portalab::store
