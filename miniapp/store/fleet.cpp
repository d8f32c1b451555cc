// `portalab db fleet`: the GPUs and nodes of one job (or date range), each
// against its group's median and the reference figures for its model, the
// outliers flagged with why.
#include "store/store.hpp"

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

struct Reference {
  double value = 0;
  std::string unit, source, date;
};
// model -> quantity -> figure
using References = std::map<std::string, std::map<std::string, Reference>>;

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

References read_references(const std::string& path) {
  References refs;
  if (path.empty()) return refs;
  std::ifstream in(path);
  if (!in) throw StoreError(exit_bad_input, fmt::format("{}: cannot read the reference figures", path));
  const std::vector<std::string> header{"model", "quantity", "value", "unit", "source", "date"};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = csv_fields(line);
    if (f == header) continue;
    if (f.size() != header.size())
      throw StoreError(exit_bad_input,
                       fmt::format("{}:{}: {} fields; expected 6: model,quantity,value,unit,source,date",
                                   path, number, f.size()));
    char* end = nullptr;
    const double v = std::strtod(f[2].c_str(), &end);
    if (f[2].empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
      throw StoreError(exit_bad_input,
                       fmt::format("{}:{}: value '{}': expected a positive number", path, number, f[2]));
    refs[f[0]][f[1]] = {v, f[3], f[4], f[5]};
  }
  return refs;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

// Lower is better for latencies; rates otherwise.
bool lower_is_better(const std::string& unit) { return unit == "us" || unit == "ms"; }

bool is_host_space(const std::string& space) {
  return space == "Serial" || space == "OpenMP" || space == "Threads" || space == "HPX";
}

// One GPU or node, its figures and why it stands out.
struct Member {
  std::string id, model, host;
  nlohmann::json facts = nlohmann::json::object();
  std::map<std::string, std::pair<double, std::string>> limits;  // quantity -> (value, unit)
  std::map<std::string, std::pair<double, std::string>> rows;    // row label -> (value, unit)
  int throttled = 0, clocked_rows = 0;
  std::optional<double> sm_mhz;
  std::vector<std::string> reasons;
};

// Each member's figures against the median of its group (same model) and
// the model's reference figures; flags the outliers.
nlohmann::json judge(std::vector<Member>& members, const References& refs, double tol) {
  std::map<std::string, std::vector<Member*>> groups;
  for (auto& m : members) groups[m.model].push_back(&m);
  nlohmann::json out = nlohmann::json::array();
  for (auto& [model, group] : groups) {
    auto medians = [&](auto field) {
      std::map<std::string, std::vector<double>> values;
      for (const Member* m : group)
        for (const auto& [q, v] : m->*field) values[q].push_back(v.first);
      std::map<std::string, double> med;
      for (auto& [q, vs] : values) med[q] = median(vs);
      return med;
    };
    const auto limit_median = medians(&Member::limits);
    const auto row_median = medians(&Member::rows);
    const auto ref = refs.find(model);
    // Peers' PCIe links and clocks.
    std::vector<double> widths, gens, app_clocks, sm;
    for (const Member* m : group) {
      if (m->facts.contains("pcie_width")) widths.push_back(m->facts["pcie_width"].get<double>());
      if (m->facts.contains("pcie_generation")) gens.push_back(m->facts["pcie_generation"].get<double>());
      if (m->facts.contains("applications_sm_mhz")) app_clocks.push_back(m->facts["applications_sm_mhz"].get<double>());
      if (m->sm_mhz) sm.push_back(*m->sm_mhz);
    }
    for (Member* m : group) {
      nlohmann::json j{{"id", m->id}, {"model", m->model}, {"host", m->host}, {"facts", m->facts},
                       {"group_size", group.size()}};
      auto figures = [&](const auto& mine, const std::map<std::string, double>& med, const char* what,
                         bool with_reference) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& [q, v] : mine) {
          const auto& [value, unit] = v;
          nlohmann::json f{{"quantity", q}, {"unit", unit}, {"value", value}};
          const double mid = med.at(q);
          const bool lower = lower_is_better(unit);
          if (mid > 0) {
            f["median"] = mid;
            f["vs_median"] = value / mid;
            const double shortfall = lower ? value / mid - 1 : 1 - value / mid;
            if (group.size() > 1 && shortfall > (lower ? 5 * tol : tol))
              m->reasons.push_back(fmt::format("{} {} {:.0f}% {} the median of {} {} ({:.4g} against {:.4g} {})",
                                               what, q, 100 * std::abs(value / mid - 1),
                                               lower ? "above" : "below", group.size(), model,
                                               value, mid, unit));
          }
          if (with_reference && ref != refs.end()) {
            if (const auto r = ref->second.find(q); r != ref->second.end() && r->second.value > 0) {
              f["reference"] = r->second.value;
              f["vs_reference"] = value / r->second.value;
              f["reference_source"] = r->second.source;
              f["reference_date"] = r->second.date;
              const double shortfall = lower ? value / r->second.value - 1 : 1 - value / r->second.value;
              if (shortfall > (lower ? 5 : 2) * tol)
                m->reasons.push_back(fmt::format("{} {} {:.0f}% {} the reference for {} ({:.4g} against {:.4g} {})",
                                                 what, q, 100 * std::abs(value / r->second.value - 1),
                                                 lower ? "above" : "below", model, value,
                                                 r->second.value, unit));
            }
          }
          list.push_back(std::move(f));
        }
        return list;
      };
      j["limits"] = figures(m->limits, limit_median, "limit", true);
      j["rows"] = figures(m->rows, row_median, "row", false);
      if (m->facts.contains("pcie_width") && !widths.empty()) {
        const double w = m->facts["pcie_width"].get<double>();
        const double best = *std::max_element(widths.begin(), widths.end());
        if (w < best) m->reasons.push_back(fmt::format("PCIe link x{:.0f}, narrower than its peers' x{:.0f}", w, best));
        else if (m->facts.contains("pcie_max_width") && w < m->facts["pcie_max_width"].get<double>())
          m->reasons.push_back(fmt::format("PCIe link x{:.0f} of x{:.0f} it can train to", w,
                                           m->facts["pcie_max_width"].get<double>()));
      }
      if (m->facts.contains("pcie_generation") && !gens.empty()) {
        const double g = m->facts["pcie_generation"].get<double>();
        const double best = *std::max_element(gens.begin(), gens.end());
        if (g < best) m->reasons.push_back(fmt::format("PCIe generation {:.0f}, its peers' {:.0f}", g, best));
      }
      if (m->facts.contains("applications_sm_mhz") && app_clocks.size() > 1) {
        const double c = m->facts["applications_sm_mhz"].get<double>(), mid = median(app_clocks);
        if (c < mid * (1 - tol))
          m->reasons.push_back(fmt::format("clocks held down: application SM clock {:.0f} MHz, its peers' {:.0f}", c, mid));
      }
      if (m->throttled > 0)
        m->reasons.push_back(fmt::format("clocks held down: THROTTLED in {} of {} rows", m->throttled, m->clocked_rows));
      if (m->sm_mhz && sm.size() > 1 && *m->sm_mhz < median(sm) * (1 - tol))
        m->reasons.push_back(fmt::format("clocks held down: SM clock {:.0f} MHz in its rows, its peers' {:.0f}",
                                         *m->sm_mhz, median(sm)));
      if (m->facts.contains("ecc_errors") && m->facts["ecc_errors"].get<double>() > 0)
        m->reasons.push_back(fmt::format("{:.0f} uncorrected ECC errors (NVML)", m->facts["ecc_errors"].get<double>()));
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
    throw StoreError(exit_bad_input, fmt::format("--tolerance {}: a percentage in (0, 100)", o.tolerance_pct));
  for (const auto& f : o.rows)
    if (f.empty() || std::count(f.begin(), f.end(), '/') > 3)
      throw StoreError(exit_bad_input,
                       fmt::format("--row '{}': expected EXPERIMENT[/VARIANT[/DTYPE[/N]]]", f));
  const double tol = o.tolerance_pct / 100;

  // The runs: one job's, a date range's, or the latest job's.
  std::string job = o.job;
  double since = -1e300, until = 1e300;
  if (!o.since.empty() || !o.until.empty()) {
    if (!job.empty()) throw StoreError(exit_bad_input, "--job and --since/--until: give one of them");
    const auto a = o.since.empty() ? std::optional<double>(-1e300) : unix_time(o.since, false);
    const auto b = o.until.empty() ? std::optional<double>(1e300) : unix_time(o.until, true);
    if (!a || !b)
      throw StoreError(exit_bad_input,
                       fmt::format("--since/--until '{}': expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS",
                                   !a ? o.since : o.until));
    since = *a;
    until = *b;
  } else if (job.empty()) {
    auto latest = db.prepare("SELECT job_id, started_unix FROM runs ORDER BY started_unix DESC LIMIT 1");
    if (!latest.step()) throw StoreError(exit_bad_input, fmt::format("{}: the store holds no runs", db.path()));
    job = latest.text(0);
    if (job.empty()) {  // no Slurm: the day before the latest run
      until = latest.real(1);
      since = until - 86400;
    }
  }
  const bool by_job = !job.empty();
  const std::string selected =
      by_job ? "SELECT id FROM runs WHERE job_id = ?1" : "SELECT id FROM runs WHERE started_unix BETWEEN ?2 AND ?3";
  auto bind_selection = [&](Statement& s) {
    if (by_job) s.bind(1, job);
    else s.bind(2, since).bind(3, until);
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
      "FROM gpus g JOIN runs ru ON ru.id = g.run WHERE g.run IN (" + selected + ") ORDER BY ru.started_unix");
  bind_selection(gpu_rows);
  while (gpu_rows.step()) {
    Member& m = gpus[gpu_rows.text(0)];
    m.id = gpu_rows.text(0);
    m.model = gpu_rows.text(1);
    m.host = gpu_rows.text(2);
    m.facts["pci_bus_id"] = gpu_rows.text(3);
    const char* names[] = {"pcie_width", "pcie_max_width", "pcie_generation", "ecc_enabled",
                           "ecc_errors", "applications_sm_mhz", "power_limit_w"};
    for (int i = 0; i < 7; ++i)
      if (!gpu_rows.null(4 + i)) m.facts[names[i]] = gpu_rows.real(4 + i);
  }
  // Their calibrated limits, the latest of each.
  auto gpu_limits = db.prepare(
      "SELECT l.gpu_uuid, l.space, l.quantity, l.value, l.unit FROM limits l JOIN runs ru ON ru.id = l.run "
      "WHERE l.gpu_uuid IS NOT NULL AND l.run IN (" + selected + ") ORDER BY ru.started_unix");
  bind_selection(gpu_limits);
  while (gpu_limits.step())
    if (auto it = gpus.find(gpu_limits.text(0)); it != gpus.end())
      it->second.limits[gpu_limits.text(2)] = {gpu_limits.real(3), gpu_limits.text(4)};
  // Their rows: those of runs on one rank, whose GPU is that rank's.
  auto gpu_result_rows = db.prepare(
      "SELECT g.uuid, s.experiment, s.variant, s.dtype, s.n, s.space, s.copies, r.gbps, r.gflops, "
      "r.check_result, e.throttled, e.sm_clock_mhz FROM rows r JOIN series s ON s.id = r.series "
      "JOIN runs ru ON ru.id = r.run JOIN gpus g ON g.run = r.run AND g.rank = 0 "
      "LEFT JOIN energy e ON e.row = r.id "
      "WHERE ru.ranks = 1 AND r.run IN (" + selected + ") ORDER BY r.started_unix");
  bind_selection(gpu_result_rows);
  // label -> uuid -> (value, unit); the largest n of each experiment/variant by default.
  std::map<std::string, std::map<std::string, std::pair<double, std::string>>> row_values;
  std::map<std::string, std::pair<std::int64_t, std::string>> largest;  // exp/variant/dtype -> (n, label)
  std::map<std::string, std::vector<double>> clocks;
  while (gpu_result_rows.step()) {
    const std::string uuid = gpu_result_rows.text(0), space = gpu_result_rows.text(5);
    if (is_host_space(space)) continue;
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
    if (gpu_result_rows.text(9) != "PASS" || !wanted_row(o.rows, experiment, variant, dtype, n)) continue;
    const double gbps = gpu_result_rows.real(7), gflops = gpu_result_rows.real(8);
    if (!(gbps > 0) && !(gflops > 0)) continue;
    const std::string label = fmt::format("{} {} {} n={} {} {}", experiment, variant, dtype, n, space,
                                          gpu_result_rows.text(6));
    row_values[label][uuid] = gbps > 0 ? std::make_pair(gbps, std::string("GB/s"))
                                       : std::make_pair(gflops, std::string("GFLOP/s"));
    auto& big = largest[experiment + "/" + variant + "/" + dtype + "/" + space + "/" + gpu_result_rows.text(6)];
    if (n >= big.first) big = {n, label};
  }
  std::set<std::string> chosen;
  if (!o.rows.empty()) {
    for (const auto& [label, by_gpu] : row_values) chosen.insert(label);
  } else {
    for (const auto& [k, v] : largest) chosen.insert(v.second);
  }
  for (const auto& label : chosen)
    for (const auto& [uuid, value] : row_values[label]) gpus[uuid].rows[label] = value;
  for (auto& [uuid, vs] : clocks) gpus[uuid].sm_mhz = median(vs);

  // Nodes: their host spaces' limits, the latest of each.
  std::map<std::string, Member> nodes;
  auto node_limits = db.prepare(
      "SELECT ru.machine, ru.cpu_model, l.space, l.quantity, l.value, l.unit FROM limits l "
      "JOIN runs ru ON ru.id = l.run WHERE l.host_space = 1 AND l.run IN (" + selected + ") "
      "ORDER BY ru.started_unix");
  bind_selection(node_limits);
  while (node_limits.step()) {
    Member& m = nodes[node_limits.text(0)];
    m.id = m.host = node_limits.text(0);
    m.model = node_limits.text(1);
    m.limits[node_limits.text(2) + " " + node_limits.text(3)] = {node_limits.real(4), node_limits.text(5)};
  }

  std::vector<Member> gpu_list, node_list;
  for (auto& [k, m] : gpus) gpu_list.push_back(std::move(m));
  for (auto& [k, m] : nodes) node_list.push_back(std::move(m));
  nlohmann::json selection{{"runs", runs}, {"references", o.references}, {"tolerance_pct", o.tolerance_pct}};
  if (by_job) {
    selection["job"] = job;
  } else {
    selection["since"] = o.since.empty() && since > -1e299 ? iso8601(since) : o.since;
    selection["until"] = o.until.empty() && until < 1e299 ? iso8601(until) : o.until;
  }
  return {{"selection", selection}, {"gpus", judge(gpu_list, refs, tol)}, {"nodes", judge(node_list, refs, tol)}};
}

}  // namespace portalab::store
