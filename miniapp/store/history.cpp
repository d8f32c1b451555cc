// `portalab db history`: each row key's runs over time, the latest run's
// verdict against the earlier ones, and the regressions with what changed.
#include "store/store.hpp"
#include "store/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace portalab::store {

namespace {

struct RunPoint {
  std::int64_t run = 0;
  std::string started_at;
  Measure m;
  bool throttled = false;
  std::optional<double> sm_mhz;
  std::array<std::string, 7> facts;  // run_facts' values: what may change between runs
};

// What a run was built and run with, as the regressions list names it.
constexpr const char* run_facts[7][2] = {
    {"portalab_version", "portalab"}, {"kokkos_version", "Kokkos"},
    {"kokkos_kernels_version", "Kokkos Kernels"}, {"compiler", "compiler"},
    {"gpu_driver", "driver"}, {"cuda_runtime", "CUDA runtime"}, {"host_blas", "library"}};

std::string phase_checked(const std::string& phase) {
  for (const char* p : {"h2d", "kernel", "d2h", "total"})
    if (phase == p) return phase;
  throw StoreError(2, fmt::format("--phase '{}': one of h2d, kernel, d2h, total", phase));
}

nlohmann::json optional(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

// What differs between two runs of one row: the builds, the clocks, THROTTLED.
nlohmann::json changes_between(const RunPoint& before, const RunPoint& after) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < before.facts.size(); ++i)
    if (before.facts[i] != after.facts[i])
      out.push_back({{"what", run_facts[i][1]}, {"from", before.facts[i]}, {"to", after.facts[i]}});
  if (before.sm_mhz && after.sm_mhz && std::abs(*after.sm_mhz - *before.sm_mhz) > 0.02 * *before.sm_mhz)
    out.push_back({{"what", "SM clock (MHz)"}, {"from", fmt::format("{:.0f}", *before.sm_mhz)},
                   {"to", fmt::format("{:.0f}", *after.sm_mhz)}});
  if (before.throttled != after.throttled)
    out.push_back({{"what", "THROTTLED"}, {"from", before.throttled ? "yes" : "no"},
                   {"to", after.throttled ? "yes" : "no"}});
  return out;
}

}  // namespace

nlohmann::json history(Connection& db, const HistoryOptions& o) {
  const std::string phase = phase_checked(o.phase);
  if (o.last < 2) throw StoreError(2, fmt::format("--last {}: at least 2 runs to compare", o.last));
  if (!(o.sigmas > 0) || !(o.min_noise >= 0))
    throw StoreError(2, "--sigmas must be > 0 and --min-noise >= 0");
  auto series = db.prepare(
      "SELECT id, experiment, variant, dtype, n, space, copies, library, threads, machine FROM series "
      "WHERE (?1 = '' OR machine = ?1) AND (?2 = '' OR experiment = ?2) AND (?3 = '' OR variant = ?3) "
      "AND (?4 = '' OR dtype = ?4) AND (?5 = '' OR space = ?5) "
      "ORDER BY experiment, variant, dtype, space, copies, library, threads, machine, n");
  series.bind(1, o.machine).bind(2, o.experiment).bind(3, o.variant).bind(4, o.dtype).bind(5, o.space);
  auto points = db.prepare(fmt::format(
      "SELECT r.run, ru.started_at, r.check_result, r.reps, r.{0}_ms, r.{0}_min_ms, r.{0}_max_ms, "
      "r.{0}_std_ms, e.throttled, e.sm_clock_mhz, ru.portalab_version, ru.kokkos_version, "
      "ru.kokkos_kernels_version, ru.compiler, ru.gpu_driver, ru.cuda_runtime, ru.host_blas "
      "FROM rows r JOIN runs ru ON ru.id = r.run LEFT JOIN energy e ON e.row = r.id "
      "WHERE r.series = ? ORDER BY r.started_unix DESC, r.id DESC LIMIT ?",
      phase));

  struct Series {
    nlohmann::json key;
    std::vector<RunPoint> runs;  // oldest first
  };
  std::vector<Series> all;
  while (series.step()) {
    Series s;
    s.key = {{"experiment", series.text(1)}, {"variant", series.text(2)}, {"dtype", series.text(3)},
             {"n", series.integer(4)},        {"space", series.text(5)},   {"copies", series.text(6)},
             {"library", series.text(7)},     {"threads", series.integer(8)},
             {"machine", series.text(9)}};
    points.bind(1, series.integer(0)).bind(2, o.last);
    while (points.step()) {
      RunPoint p;
      p.run = points.integer(0);
      p.started_at = points.text(1);
      p.m = {points.text(2), points.maybe_real(4), points.maybe_real(5), points.maybe_real(6),
             points.maybe_real(7), points.maybe_real(3)};
      p.throttled = !points.null(8) && points.integer(8) != 0;
      p.sm_mhz = points.maybe_real(9);
      for (std::size_t i = 0; i < p.facts.size(); ++i) p.facts[i] = points.text(10 + static_cast<int>(i));
      s.runs.push_back(std::move(p));
    }
    points.reset();
    std::reverse(s.runs.begin(), s.runs.end());
    all.push_back(std::move(s));
  }

  // The run-to-run noise as compare.py measures it, on pairs of consecutive
  // earlier runs of every row asked about (the latest runs left out: they
  // are what is judged).
  std::vector<std::pair<double, double>> pairs;
  for (const auto& s : all)
    for (std::size_t i = 1; i + 1 < s.runs.size(); ++i) {
      const auto &a = s.runs[i - 1].m, &b = s.runs[i].m;
      if (a.check == "PASS" && b.check == "PASS" && a.ms && b.ms) pairs.emplace_back(*a.ms, *b.ms);
    }
  const Noise noise(pairs, o.min_noise);

  nlohmann::json rows = nlohmann::json::array(), regressions = nlohmann::json::array();
  for (const auto& s : all) {
    nlohmann::json out{{"key", s.key}};
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& p : s.runs)
      runs.push_back({{"started_at", p.started_at}, {"check", p.m.check}, {"ms", optional(p.m.ms)},
                      {"min_ms", optional(p.m.min_ms)}, {"max_ms", optional(p.m.max_ms)},
                      {"throttled", p.throttled}, {"portalab", p.facts[0]}});
    out["runs"] = runs;
    const RunPoint& latest = s.runs.back();
    std::vector<const RunPoint*> earlier;
    for (std::size_t i = 0; i + 1 < s.runs.size(); ++i)
      if (s.runs[i].m.check == "PASS" && s.runs[i].m.ms) earlier.push_back(&s.runs[i]);
    if (s.runs.size() < 2 || (earlier.empty() && latest.m.check == "PASS")) {
      out["verdict"] = "NEW";
      rows.push_back(std::move(out));
      continue;
    }
    // The base: the earlier run of the median time (a real run, with its
    // repetitions' range, as compare.py's BASE is).
    const RunPoint* base = earlier.empty() ? &s.runs[s.runs.size() - 2] : nullptr;
    if (!earlier.empty()) {
      auto sorted = earlier;
      std::sort(sorted.begin(), sorted.end(), [](const RunPoint* a, const RunPoint* b) { return *a->m.ms < *b->m.ms; });
      base = sorted[(sorted.size() - 1) / 2];
    }
    // This row's own run-to-run noise where its earlier runs measure it,
    // never below the noise of rows of its time.
    std::optional<double> sigma;
    if (base->m.ms) {
      sigma = noise.sigma(*base->m.ms);
      std::vector<double> own;
      for (std::size_t i = 1; i < earlier.size(); ++i)
        own.push_back(std::log(*earlier[i]->m.ms / *earlier[i - 1]->m.ms));
      if (own.size() >= 3) sigma = std::max(*sigma, robust_sigma(own));
    }
    const auto [verdict, change] = classify(base->m, latest.m, sigma, o.sigmas);
    std::string upper = verdict;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out["verdict"] = upper;
    out["change"] = optional(change);
    out["noise"] = optional(sigma);
    out["base"] = {{"started_at", base->started_at}, {"ms", optional(base->m.ms)}};
    out["changes"] = changes_between(*base, latest);
    const bool regressed =
        verdict == "broken" || (verdict == "slower" && change && *change * 100 > o.threshold_pct);
    out["regression"] = regressed;
    if (regressed) regressions.push_back(out);
    rows.push_back(std::move(out));
  }
  // Regressions first, the largest change first.
  std::stable_sort(rows.begin(), rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a.value("regression", false) > b.value("regression", false);
  });
  std::stable_sort(regressions.begin(), regressions.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    const double ca = a["change"].is_number() ? a["change"].get<double>() : 1e300;
    const double cb = b["change"].is_number() ? b["change"].get<double>() : 1e300;
    return ca > cb;
  });
  nlohmann::json decades = nlohmann::json::object();
  for (const auto& [d, s] : noise.by_decade()) decades[fmt::format("{:g}", std::pow(10.0, d))] = s;
  return {{"phase", phase},
          {"last", o.last},
          {"threshold_pct", o.threshold_pct},
          {"sigmas", o.sigmas},
          {"noise", {{"pooled", noise.pooled()}, {"pairs", noise.count()}, {"by_decade_ms", decades},
                     {"floor", noise.floor()}}},
          {"rows", rows},
          {"regressions", regressions}};
}

}  // namespace portalab::store
