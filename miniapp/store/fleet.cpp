// `portalab db fleet`: the GPUs and nodes of one job (or date range), each
// against its group's median and the reference figures for its model, the
// outliers flagged with why.
#include "store/references.hpp"
#include "store/store.hpp"
#include "store/verdict.hpp"

#include "platform/space_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

namespace portalab::store {

namespace {

constexpr int exit_bad_input = 2;
// The fleet's default rows: of each kind the largest n whose kernel takes
// this long at least (the median over the GPUs): some twenty launches, so
// that a launch's and the timer's jitter stay small beside it.
constexpr double min_row_ms = 0.2;

// One figure of a GPU or node: a calibrated limit or a chosen row's rate,
// with what its own measurement says of its noise.
struct Figure {
  double value = 0;
  std::string unit;
  // A row: the rates of its fastest and slowest repetitions, and the
  // relative standard error of its median.
  std::optional<double> best, worst;
  double se = 0;
  std::optional<double> unsteady;  // a limit: slowest / fastest, where calibration said unsteady
  std::optional<double> ms;        // a row: its median time
};

// One GPU or node, its figures and why it stands out.
struct Member {
  std::string id, model, host;
  nlohmann::json facts = nlohmann::json::object();
  std::map<std::string, Figure> limits;  // quantity -> figure
  std::map<std::string, Figure> rows;    // row label -> figure
  int throttled = 0, clocked_rows = 0;
  std::optional<double> sm_mhz;
  std::vector<std::string> reasons;
};

// A figure's own noise, relative (a log deviation): a row's standard error
// of its median, an unsteady limit's half range.
double own_noise(const Figure& f) {
  return f.unsteady ? std::max(f.se, std::log(*f.unsteady) / 2) : f.se;
}

// Each member's figures against the median of its group (same model) and
// the model's reference figures; flags the outliers. A figure is flagged
// only when its shortfall exceeds the tolerance AND the noise: `sigmas`
// times its own noise and the spread of its group's figures combined, and
// (a row) even its fastest repetition is slower than its peers' slowest.
nlohmann::json judge(std::vector<Member>& members, const References& refs, double tol) {
  std::map<std::string, std::vector<Member*>> groups;
  for (auto& m : members) groups[m.model].push_back(&m);
  nlohmann::json out = nlohmann::json::array();
  for (auto& [model, group] : groups) {
    // Per quantity: the group's median, and the spread of the group's
    // figures about it (robust: an outlier does not widen it; none below
    // three members, whose median is one of two).
    struct Spread {
      double middle = 0, sigma = 0;  // the group's median, and the spread about it
      std::vector<std::pair<const Member*, double>>
          worst;           // rows: each member's slowest repetition
      bool ranges = true;  // every member's row has its range
      // The median of the other members' slowest repetitions.
      std::optional<double> peers_worst(const Member* self) const {
        std::vector<double> others;
        for (const auto& [m, w] : worst)
          if (m != self) others.push_back(w);
        if (!ranges || others.empty()) return std::nullopt;
        return median_of(others);
      }
    };
    auto spreads = [&](auto field) {
      std::map<std::string, std::vector<std::pair<const Member*, const Figure*>>> figures;
      for (const Member* m : group)
        for (const auto& [q, f] : m->*field) figures[q].emplace_back(m, &f);
      std::map<std::string, Spread> out;
      for (const auto& [q, fs] : figures) {
        std::vector<double> values, logs;
        Spread s;
        for (const auto& [m, f] : fs) {
          values.push_back(f->value);
          if (f->worst)
            s.worst.emplace_back(m, *f->worst);
          else
            s.ranges = false;
        }
        s.middle = median_of(values);
        if (fs.size() >= 3 && s.middle > 0) {
          for (const double v : values)
            if (v > 0) logs.push_back(std::log(v / s.middle));
          if (logs.size() >= 3) s.sigma = robust_sigma(logs);
        }
        out[q] = std::move(s);
      }
      return out;
    };
    const auto limit_spread = spreads(&Member::limits);
    const auto row_spread = spreads(&Member::rows);
    const auto ref = refs.find(model);
    // Peers' PCIe links and clocks.
    std::vector<double> widths, gens, app_clocks, sm;
    for (const Member* m : group) {
      if (m->facts.contains("pcie_width")) widths.push_back(m->facts["pcie_width"].get<double>());
      if (m->facts.contains("pcie_generation"))
        gens.push_back(m->facts["pcie_generation"].get<double>());
      if (m->facts.contains("applications_sm_mhz"))
        app_clocks.push_back(m->facts["applications_sm_mhz"].get<double>());
      if (m->sm_mhz) sm.push_back(*m->sm_mhz);
    }
    for (Member* m : group) {
      nlohmann::json j{{"id", m->id},
                       {"model", m->model},
                       {"host", m->host},
                       {"facts", m->facts},
                       {"group_size", group.size()}};
      auto figures = [&](const std::map<std::string, Figure>& mine,
                         const std::map<std::string, Spread>& spread, const char* what,
                         bool with_reference) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& [q, fig] : mine) {
          const double value = fig.value;
          const std::string& unit = fig.unit;
          nlohmann::json f{{"quantity", q}, {"unit", unit}, {"value", value}};
          if (fig.ms) f["ms"] = *fig.ms;
          if (fig.unsteady) f["unsteady"] = *fig.unsteady;
          const Spread& sp = spread.at(q);
          const bool lower = lower_is_better(unit);
          const double limit = lower ? 5 * tol : tol;
          std::vector<std::string> flags;
          if (sp.middle > 0 && value > 0) {
            const double noise =
                std::max(default_min_noise,
                         std::sqrt(sp.sigma * sp.sigma + own_noise(fig) * own_noise(fig)));
            f["median"] = sp.middle;
            f["vs_median"] = value / sp.middle;
            f["noise"] = noise;
            const double shortfall = lower ? value / sp.middle - 1 : 1 - value / sp.middle;
            // A rate's best repetition still below its peers' slowest (a
            // latency's, above): the repetitions do not overlap.
            const auto peers_worst = sp.peers_worst(m);
            const bool apart = !fig.best || !peers_worst ||
                               (lower ? *fig.best > *peers_worst : *fig.best < *peers_worst);
            if (group.size() > 1 && shortfall > limit && apart &&
                std::abs(std::log(value / sp.middle)) > default_sigmas * noise) {
              flags.push_back("median");
              m->reasons.push_back(fmt::format(
                  "{} {} {:.0f}% {} the median of {} {} ({:.4g} against {:.4g} {}, "
                  "noise {:.1f}%)",
                  what, q, 100 * std::abs(value / sp.middle - 1), lower ? "above" : "below",
                  group.size(), model, value, sp.middle, unit, 100 * noise));
            }
          }
          if (with_reference && ref != refs.end() && value > 0) {
            if (const auto r = ref->second.find(q);
                r != ref->second.end() && r->second.measured && r->second.measured->value > 0) {
              const Reference& measured = *r->second.measured;
              const double reference = measured.value;
              f["reference"] = reference;
              f["vs_reference"] = value / reference;
              f["reference_source"] = measured.source;
              f["reference_date"] = measured.date;
              if (const auto& p = r->second.published) {
                f["published"] = p->value;
                f["published_source"] = p->source;
              }
              const double shortfall = lower ? value / reference - 1 : 1 - value / reference;
              const double noise = std::max(default_min_noise, own_noise(fig));
              if (shortfall > (lower ? 5 : 2) * tol &&
                  std::abs(std::log(value / reference)) > default_sigmas * noise) {
                flags.push_back("reference");
                m->reasons.push_back(
                    fmt::format("{} {} {:.0f}% {} the reference for {} ({:.4g} against {:.4g} {})",
                                what, q, 100 * std::abs(value / reference - 1),
                                lower ? "above" : "below", model, value, reference, unit));
              }
            }
          }
          f["flagged"] = flags;
          list.push_back(std::move(f));
        }
        return list;
      };
      j["limits"] = figures(m->limits, limit_spread, "limit", true);
      j["rows"] = figures(m->rows, row_spread, "row", false);
      if (m->facts.contains("pcie_width") && !widths.empty()) {
        const double w = m->facts["pcie_width"].get<double>();
        const double best = *std::max_element(widths.begin(), widths.end());
        if (w < best)
          m->reasons.push_back(
              fmt::format("PCIe link x{:.0f}, narrower than its peers' x{:.0f}", w, best));
        else if (m->facts.contains("pcie_max_width") &&
                 w < m->facts["pcie_max_width"].get<double>())
          m->reasons.push_back(fmt::format("PCIe link x{:.0f} of x{:.0f} it can train to", w,
                                           m->facts["pcie_max_width"].get<double>()));
      }
      if (m->facts.contains("pcie_generation") && !gens.empty()) {
        const double g = m->facts["pcie_generation"].get<double>();
        const double best = *std::max_element(gens.begin(), gens.end());
        if (g < best)
          m->reasons.push_back(fmt::format("PCIe generation {:.0f}, its peers' {:.0f}", g, best));
      }
      if (m->facts.contains("applications_sm_mhz") && app_clocks.size() > 1) {
        const double c = m->facts["applications_sm_mhz"].get<double>(), mid = median_of(app_clocks);
        if (c < mid * (1 - tol))
          m->reasons.push_back(fmt::format(
              "clocks held down: application SM clock {:.0f} MHz, its peers' {:.0f}", c, mid));
      }
      if (m->throttled > 0)
        m->reasons.push_back(fmt::format("clocks held down: THROTTLED in {} of {} rows",
                                         m->throttled, m->clocked_rows));
      if (m->sm_mhz && sm.size() > 1 && *m->sm_mhz < median_of(sm) * (1 - tol))
        m->reasons.push_back(
            fmt::format("clocks held down: SM clock {:.0f} MHz in its rows, its peers' {:.0f}",
                        *m->sm_mhz, median_of(sm)));
      if (m->facts.contains("ecc_errors") && m->facts["ecc_errors"].get<double>() > 0)
        m->reasons.push_back(fmt::format("{:.0f} uncorrected ECC errors (NVML)",
                                         m->facts["ecc_errors"].get<double>()));
      j["throttled_rows"] = m->throttled;
      j["outlier"] = !m->reasons.empty();
      j["reasons"] = m->reasons;
      out.push_back(std::move(j));
    }
  }
  return out;
}

bool wanted_row(const std::vector<std::string>& filters, const std::string& experiment,
                const std::string& variant, const std::string& dtype, std::int64_t n) {
  if (filters.empty()) return true;
  const std::string parts[4] = {experiment, variant, dtype, std::to_string(n)};
  for (const auto& f : filters) {
    std::vector<std::string> want;
    std::stringstream ss(f);
    for (std::string p; std::getline(ss, p, '/');) want.push_back(p);
    bool ok = !want.empty() && want.size() <= 4;
    for (std::size_t i = 0; ok && i < want.size(); ++i) ok = want[i].empty() || want[i] == parts[i];
    if (ok) return true;
  }
  return false;
}

}  // namespace

nlohmann::json fleet(Connection& db, const FleetOptions& o) {
  const References refs = read_references(o.references);
  if (!(o.tolerance_pct > 0 && o.tolerance_pct < 100))
    throw StoreError(exit_bad_input,
                     fmt::format("--tolerance {}: a percentage in (0, 100)", o.tolerance_pct));
  for (const auto& f : o.rows)
    if (f.empty() || std::count(f.begin(), f.end(), '/') > 3)
      throw StoreError(exit_bad_input,
                       fmt::format("--row '{}': expected EXPERIMENT[/VARIANT[/DTYPE[/N]]]", f));
  const double tol = o.tolerance_pct / 100;

  // The runs: one job's, a date range's, or the latest job's.
  std::string job = o.job;
  double since = -1e300, until = 1e300;
  if (!o.since.empty() || !o.until.empty()) {
    if (!job.empty())
      throw StoreError(exit_bad_input, "--job and --since/--until: give one of them");
    const auto a = o.since.empty() ? std::optional<double>(-1e300) : unix_time(o.since, false);
    const auto b = o.until.empty() ? std::optional<double>(1e300) : unix_time(o.until, true);
    if (!a || !b)
      throw StoreError(
          exit_bad_input,
          fmt::format("--since/--until '{}': expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS",
                      !a ? o.since : o.until));
    since = *a;
    until = *b;
  } else if (job.empty()) {
    auto latest = db.prepare(
        "SELECT job_id, started_unix FROM runs ORDER BY started_unix DESC LIMIT 1");
    if (!latest.step())
      throw StoreError(exit_bad_input, fmt::format("{}: the store holds no runs", db.path()));
    job = latest.text(0);
    if (job.empty()) {  // no Slurm: the day before the latest run
      until = latest.real(1);
      since = until - 86400;
    }
  }
  const bool by_job = !job.empty();
  const std::string selected = by_job ? "SELECT id FROM runs WHERE job_id = ?1"
                                      : "SELECT id FROM runs WHERE started_unix BETWEEN ?2 AND ?3";
  auto bind_selection = [&](Statement& s) {
    if (by_job)
      s.bind(1, job);
    else
      s.bind(2, since).bind(3, until);
  };
  auto count = db.prepare("SELECT count(*) FROM (" + selected + ")");
  bind_selection(count);
  count.step();
  const std::int64_t runs = count.integer(0);
  if (runs == 0)
    throw StoreError(exit_bad_input,
                     by_job ? fmt::format("{}: no runs of job '{}' in the store", db.path(), job)
                            : fmt::format("{}: no runs started in that range", db.path()));

  // GPUs, by UUID: the facts of their latest run.
  std::map<std::string, Member> gpus;
  auto gpu_rows = db.prepare(
      "SELECT g.uuid, g.name, g.host, g.pci_bus_id, g.pcie_width, g.pcie_max_width, g.pcie_generation, "
      "g.ecc_enabled, g.ecc_errors, g.applications_sm_mhz, g.power_limit_w, g.rank "
      "FROM gpus g JOIN runs ru ON ru.id = g.run WHERE g.run IN (" +
      selected + ") ORDER BY ru.started_unix");
  bind_selection(gpu_rows);
  while (gpu_rows.step()) {
    Member& m = gpus[gpu_rows.text(0)];
    m.id = gpu_rows.text(0);
    m.model = gpu_rows.text(1);
    m.host = gpu_rows.text(2);
    m.facts["pci_bus_id"] = gpu_rows.text(3);
    const char* names[] = {"pcie_width", "pcie_max_width",      "pcie_generation", "ecc_enabled",
                           "ecc_errors", "applications_sm_mhz", "power_limit_w"};
    for (int i = 0; i < 7; ++i)
      if (!gpu_rows.null(4 + i)) m.facts[names[i]] = gpu_rows.real(4 + i);
  }
  // Their calibrated limits, the latest of each.
  auto gpu_limits = db.prepare(
      "SELECT l.gpu_uuid, l.space, l.quantity, l.value, l.unit, l.unsteady_ratio FROM limits l "
      "JOIN runs ru ON ru.id = l.run WHERE l.gpu_uuid IS NOT NULL AND l.run IN (" +
      selected +
      ") "
      "ORDER BY ru.started_unix");
  bind_selection(gpu_limits);
  while (gpu_limits.step())
    if (auto it = gpus.find(gpu_limits.text(0)); it != gpus.end()) {
      Figure f;
      f.value = gpu_limits.real(3);
      f.unit = gpu_limits.text(4);
      f.unsteady = gpu_limits.maybe_real(5);
      it->second.limits[gpu_limits.text(2)] = f;
    }
  // Their rows: those of runs on one rank, whose key names one GPU. Rates
  // are of the kernel phase's median, and so its repetitions' range.
  auto gpu_result_rows = db.prepare(
      "SELECT s.gpu, s.experiment, s.variant, s.dtype, s.n, s.space, s.copies, r.gbps, r.gflops, "
      "r.check_result, e.throttled, e.sm_clock_mhz, r.kernel_ms, r.kernel_min_ms, r.kernel_max_ms, "
      "r.kernel_std_ms, r.reps FROM rows r JOIN series s ON s.id = r.series "
      "JOIN runs ru ON ru.id = r.run LEFT JOIN energy e ON e.row = r.id "
      "WHERE ru.ranks = 1 AND s.gpu != '' AND r.run IN (" +
      selected + ") ORDER BY r.started_unix");
  bind_selection(gpu_result_rows);
  // label -> uuid -> figure; by default, of each experiment's variant, type,
  // space and copies, the largest n long enough to compare GPUs by.
  std::map<std::string, std::map<std::string, Figure>> row_values;
  std::map<std::string, std::set<std::pair<std::int64_t, std::string>>>
      sizes;  // kind -> (n, label)
  std::map<std::string, std::vector<double>> clocks;
  while (gpu_result_rows.step()) {
    const std::string uuid = gpu_result_rows.text(0), space = gpu_result_rows.text(5);
    auto it = gpus.find(uuid);
    if (it == gpus.end()) continue;
    Member& m = it->second;
    if (!gpu_result_rows.null(10)) {
      ++m.clocked_rows;
      if (gpu_result_rows.integer(10) != 0) ++m.throttled;
    }
    if (!gpu_result_rows.null(11)) clocks[uuid].push_back(gpu_result_rows.real(11));
    const std::string experiment = gpu_result_rows.text(1), variant = gpu_result_rows.text(2),
                      dtype = gpu_result_rows.text(3);
    const std::int64_t n = gpu_result_rows.integer(4);
    if (gpu_result_rows.text(9) != "PASS" || !wanted_row(o.rows, experiment, variant, dtype, n))
      continue;
    const double gbps = gpu_result_rows.real(7), gflops = gpu_result_rows.real(8);
    if (!(gbps > 0) && !(gflops > 0)) continue;
    const std::string label = fmt::format("{} {} {} n={} {} {}", experiment, variant, dtype, n,
                                          space, gpu_result_rows.text(6));
    Figure f;
    f.value = gbps > 0 ? gbps : gflops;
    f.unit = gbps > 0 ? "GB/s" : "GFLOP/s";
    const auto ms = gpu_result_rows.maybe_real(12), min_ms = gpu_result_rows.maybe_real(13),
               max_ms = gpu_result_rows.maybe_real(14), std_ms = gpu_result_rows.maybe_real(15),
               reps = gpu_result_rows.maybe_real(16);
    if (ms && *ms > 0) {
      f.ms = ms;
      if (min_ms && max_ms && *min_ms > 0 && *max_ms > 0) {
        f.best = f.value * *ms / *min_ms;
        f.worst = f.value * *ms / *max_ms;
      }
      if (std_ms && reps && *reps > 0) f.se = 1.2533 * *std_ms / *ms / std::sqrt(*reps);
    }
    row_values[label][uuid] = f;
    sizes[experiment + "/" + variant + "/" + dtype + "/" + space + "/" + gpu_result_rows.text(6)]
        .insert({n, label});
  }
  std::set<std::string> chosen;
  std::vector<std::string> too_short;
  if (!o.rows.empty()) {
    for (const auto& [label, by_gpu] : row_values) chosen.insert(label);
  } else {
    // A row of a few microseconds is its launch and its clocks' ramp more
    // than its GPU's speed: GPUs differ by the moment's noise there.
    for (const auto& [kind, by_n] : sizes) {
      const std::string* pick = nullptr;
      for (auto n = by_n.rbegin(); n != by_n.rend() && !pick; ++n) {
        std::vector<double> times;
        for (const auto& [uuid, f] : row_values[n->second])
          if (f.ms) times.push_back(*f.ms);
        if (!times.empty() && median_of(times) >= min_row_ms) pick = &n->second;
      }
      if (pick)
        chosen.insert(*pick);
      else
        too_short.push_back(by_n.rbegin()->second);
    }
  }
  for (const auto& label : chosen)
    for (const auto& [uuid, value] : row_values[label]) gpus[uuid].rows[label] = value;
  for (auto& [uuid, vs] : clocks) gpus[uuid].sm_mhz = median_of(vs);

  // Nodes: their host spaces' limits, the latest of each.
  std::map<std::string, Member> nodes;
  auto node_limits = db.prepare(
      "SELECT ru.machine, ru.cpu_model, l.space, l.quantity, l.value, l.unit, l.unsteady_ratio FROM limits l "
      "JOIN runs ru ON ru.id = l.run WHERE l.host_space = 1 AND l.run IN (" +
      selected +
      ") "
      "ORDER BY ru.started_unix");
  bind_selection(node_limits);
  while (node_limits.step()) {
    Member& m = nodes[node_limits.text(0)];
    m.id = m.host = node_limits.text(0);
    m.model = node_limits.text(1);
    Figure f;
    f.value = node_limits.real(4);
    f.unit = node_limits.text(5);
    f.unsteady = node_limits.maybe_real(6);
    m.limits[node_limits.text(2) + " " + node_limits.text(3)] = f;
  }

  std::vector<Member> gpu_list, node_list;
  for (auto& [k, m] : gpus) gpu_list.push_back(std::move(m));
  for (auto& [k, m] : nodes) node_list.push_back(std::move(m));
  nlohmann::json selection{{"runs", runs},
                           {"references", o.references},
                           {"tolerance_pct", o.tolerance_pct},
                           {"sigmas", default_sigmas},
                           {"min_row_ms", min_row_ms},
                           {"rows_too_short", too_short}};
  if (by_job) {
    selection["job"] = job;
  } else {
    selection["since"] = o.since.empty() && since > -1e299 ? iso8601(since) : o.since;
    selection["until"] = o.until.empty() && until < 1e299 ? iso8601(until) : o.until;
  }
  return {{"selection", selection},
          {"gpus", judge(gpu_list, refs, tol)},
          {"nodes", judge(node_list, refs, tol)}};
}

}  // namespace portalab::store
