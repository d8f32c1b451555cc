#include "result.hpp"

#include "spaces.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace portalab {

PhaseStats summarize(std::vector<double> s) {
  PhaseStats p;
  if (s.empty()) return p;
  std::sort(s.begin(), s.end());
  const std::size_t m = s.size();
  p.median = m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
  p.min = s.front();
  p.max = s.back();
  const double mean = std::accumulate(s.begin(), s.end(), 0.0) / m;
  double ss = 0.0;
  for (double v : s) ss += (v - mean) * (v - mean);
  p.stddev = m > 1 ? std::sqrt(ss / (m - 1)) : 0.0;
  return p;
}

std::string_view to_string(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::skipped: return "SKIPPED";
    case Status::error: return "ERROR";
    case Status::not_applicable: return "N/A";
  }
  return "?";
}

double Result::metric(std::string_view name, double absent) const {
  for (const auto& [k, v] : metrics)
    if (k == name) return v;
  return absent;
}

void Result::set_metric(const std::string& name, double value) {
  for (auto& [k, v] : metrics)
    if (k == name) {
      v = value;
      return;
    }
  metrics.emplace_back(name, value);
}

std::string threads_text(int space_threads, int library_threads) {
  if (library_threads < 0) return fmt::format("{} (library: unknown)", space_threads);
  if (library_threads == 0 || library_threads == space_threads)
    return std::to_string(space_threads);
  return fmt::format("{} (library {})", space_threads, library_threads);
}

const Result* passing_row(std::span<const Result> rows, std::string_view variant) {
  for (const auto& r : rows)
    if (r.variant == variant && r.status == Status::pass) return &r;
  return nullptr;
}

void assign_speedups(std::vector<Result>& results) {
  const auto order = enabled_space_names();
  auto rank = [&](const std::string& space) {
    return std::find(order.begin(), order.end(), space) - order.begin();
  };
  // The same copy mode if the baseline space ran it; else, since a host
  // space's copies are no-ops, any of its modes (pinned runs on devices only).
  using Key = std::tuple<std::string, std::string, std::string, std::size_t, CopyMode>;
  using AnyMode = std::tuple<std::string, std::string, std::string, std::size_t>;
  std::map<Key, const Result*> same_mode;
  std::map<AnyMode, const Result*> any_mode;
  auto keep_first_space = [&](const Result*& b, const Result& r) {
    if (!b || rank(r.space) < rank(b->space)) b = &r;
  };
  for (const auto& r : results) {
    if (r.status != Status::pass) continue;
    keep_first_space(same_mode[{r.experiment, r.variant, r.dtype, r.n, r.copies}], r);
    if (is_host_space(r.space)) keep_first_space(any_mode[{r.experiment, r.variant, r.dtype, r.n}], r);
  }
  std::vector<std::pair<double, std::string>> found(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (r.status != Status::pass || r.total.median <= 0) continue;
    const Result* b = nullptr;
    if (auto it = same_mode.find({r.experiment, r.variant, r.dtype, r.n, r.copies});
        it != same_mode.end())
      b = it->second;
    if (auto it = any_mode.find({r.experiment, r.variant, r.dtype, r.n});
        it != any_mode.end() && (!b || rank(it->second->space) < rank(b->space)))
      b = it->second;
    if (b) found[i] = {b->total.median / r.total.median, b->space};
  }
  for (std::size_t i = 0; i < results.size(); ++i)
    std::tie(results[i].speedup, results[i].baseline) = found[i];
}

namespace {

// JSON has no NaN or infinity: write null for them.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json to_json(const PhaseStats& p) {
  return {{"median_ms", p.median}, {"min_ms", p.min}, {"max_ms", p.max}, {"std_ms", p.stddev}};
}

const std::vector<std::pair<const char*, PhaseStats Result::*>>& phases() {
  static const std::vector<std::pair<const char*, PhaseStats Result::*>> p{
      {"h2d", &Result::h2d}, {"kernel", &Result::kernel}, {"d2h", &Result::d2h},
      {"total", &Result::total}};
  return p;
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Writes through a temporary file in the same directory, then renames.
void write_atomically(const std::filesystem::path& path, const std::string& content) {
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

std::string fmt_num(double v, int width) {
  if (v == 0.0) return fmt::format("{:>{}}", "0", width);
  return fmt::format("{:>{}.4g}", v, width);
}

}  // namespace

nlohmann::json to_json(const Result& r) {
  nlohmann::json j{
      {"experiment", r.experiment},
      {"variant", r.variant},
      {"library", r.library},
      {"threads", r.threads},
      {"space", r.space},
      {"dtype", r.dtype},
      {"n", r.n},
      {"parameters", r.parameters},
      {"copies", std::string(to_string(r.copies))},
      {"reps", r.reps},
      {"warmups", r.warmups},
  };
  for (const auto& [name, member] : phases()) j[std::string(name) + "_ms"] = (r.*member).median;
  j["cold_ms"] = r.cold_ms;
  j["first_in_process"] = r.first_in_process;
  j["copies_alias"] = r.copies_alias;
  j["bytes"] = r.bytes;
  j["flops"] = r.flops;
  j["gbps"] = r.gbps;
  j["gflops"] = r.gflops;
  j["h2d_gbps"] = r.h2d_gbps;
  j["d2h_gbps"] = r.d2h_gbps;
  j["launches"] = r.launches;
  j["us_per_launch"] = r.us_per_launch;
  auto pct = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); };
  j["limit"] = r.limit;
  j["pct_of_limit"] = pct(r.pct_of_limit);
  j["h2d_pct_of_limit"] = pct(r.h2d_pct_of_limit);
  j["d2h_pct_of_limit"] = pct(r.d2h_pct_of_limit);
  j["speedup"] = r.speedup > 0 ? nlohmann::json(r.speedup) : nlohmann::json();
  j["baseline"] = r.baseline;
  j["check"] = std::string(to_string(r.status));
  j["rel_error"] = number(r.check.rel_error);
  j["tolerance"] = r.check.tolerance;
  j["note"] = r.note.empty() ? r.check.detail : r.note;
  j["timed_by"] = r.timed_by;
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [k, v] : r.metrics) metrics[k] = number(v);
  j["metrics"] = metrics;
  nlohmann::json stats;
  for (const auto& [name, member] : phases()) stats[name] = to_json(r.*member);
  j["stats"] = stats;
  return j;
}

std::vector<std::string> csv_header() {
  std::vector<std::string> h{"experiment", "variant", "library", "threads", "space",
                             "dtype",      "n",       "copies",  "reps",    "warmups"};
  for (const auto& [name, member] : phases()) h.push_back(std::string(name) + "_ms");
  for (const auto& [name, member] : phases())
    for (const char* s : {"_min_ms", "_max_ms", "_std_ms"}) h.push_back(std::string(name) + s);
  for (const char* s : {"cold_ms", "first_in_process", "copies_alias", "bytes", "flops", "gbps",
                        "gflops", "h2d_gbps", "d2h_gbps", "limit", "pct_of_limit",
                        "h2d_pct_of_limit", "d2h_pct_of_limit", "speedup", "baseline", "check",
                        "rel_error", "tolerance", "note", "launches", "us_per_launch",
                        "parameters", "timed_by", "metrics"})
    h.emplace_back(s);
  return h;
}

std::vector<std::string> csv_row(const Result& r) {
  auto num = [](double v) { return fmt::format("{:.9g}", v); };
  std::vector<std::string> row{r.experiment, r.variant, csv_quote(r.library),
                               csv_quote(r.threads), r.space, r.dtype,
                               std::to_string(r.n),
                               std::string(to_string(r.copies)), std::to_string(r.reps),
                               std::to_string(r.warmups)};
  for (const auto& [name, member] : phases()) row.push_back(num((r.*member).median));
  for (const auto& [name, member] : phases()) {
    const PhaseStats& p = r.*member;
    row.push_back(num(p.min));
    row.push_back(num(p.max));
    row.push_back(num(p.stddev));
  }
  row.push_back(num(r.cold_ms));
  row.push_back(r.first_in_process ? "true" : "false");
  row.push_back(r.copies_alias ? "true" : "false");
  row.push_back(num(r.bytes));
  row.push_back(num(r.flops));
  row.push_back(num(r.gbps));
  row.push_back(num(r.gflops));
  row.push_back(num(r.h2d_gbps));
  row.push_back(num(r.d2h_gbps));
  row.push_back(csv_quote(r.limit));
  for (double p : {r.pct_of_limit, r.h2d_pct_of_limit, r.d2h_pct_of_limit})
    row.push_back(p > 0 ? num(p) : "");
  row.push_back(r.speedup > 0 ? num(r.speedup) : "");
  row.push_back(r.baseline);
  row.emplace_back(to_string(r.status));
  row.push_back(num(r.check.rel_error));
  row.push_back(num(r.check.tolerance));
  row.push_back(csv_quote(r.note.empty() ? r.check.detail : r.note));
  row.push_back(num(r.launches));
  row.push_back(num(r.us_per_launch));
  row.push_back(csv_quote(r.parameters));
  row.push_back(csv_quote(r.timed_by));
  std::string metrics;  // name=value;name=value
  for (const auto& [k, v] : r.metrics) metrics += fmt::format("{}{}={}", metrics.empty() ? "" : ";", k, num(v));
  row.push_back(csv_quote(metrics));
  return row;
}

void write_results(const std::string& dir, const std::vector<Result>& results,
                   const nlohmann::json& provenance, const nlohmann::json& summary) {
  std::filesystem::create_directories(dir);
  std::string csv = fmt::format("{}\n", fmt::join(csv_header(), ","));
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) {
    csv += fmt::format("{}\n", fmt::join(csv_row(r), ","));
    rows.push_back(to_json(r));
  }
  const nlohmann::json doc{{"provenance", provenance}, {"summary", summary}, {"results", rows}};
  write_atomically(std::filesystem::path(dir) / "results.csv", csv);
  write_atomically(std::filesystem::path(dir) / "results.json", doc.dump(2) + "\n");
}

std::string format_table(const std::vector<Result>& results, const std::string& experiment) {
  std::map<std::pair<std::string, std::size_t>, std::vector<const Result*>> groups;
  std::vector<std::pair<std::string, std::size_t>> order;
  for (const auto& r : results) {
    if (r.experiment != experiment) continue;
    auto key = std::make_pair(r.dtype, r.n);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  std::string out;
  for (const auto& key : order) {
    const auto& rows = groups[key];
    out += fmt::format("\n{}  {}  n={}{}  ({} reps after {} warm-ups; times in ms, median ± std)\n",
                       experiment, key.first, key.second,
                       rows.front()->parameters.empty() ? "" : "  " + rows.front()->parameters,
                       rows.front()->reps,
                       rows.front()->warmups);
    // As wide as the group's longest, "2 (library 1)" where they differ.
    std::size_t tw = 7;
    for (const Result* r : rows) tw = std::max(tw, r->threads.size());
    out += fmt::format("{:<8} {:<14} {:<9} {:<{}} {:<8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>8} "
                       "{:>8} {:>8} {:>5} {:<7} {:>8}\n",
                       "space", "variant", "library", "threads", tw, "copies", "h2d", "kernel",
                       "d2h", "total", "±", "cold", "speedup", "GB/s", "GFLOP/s", "%lim", "check",
                       "rel.err");
    for (const Result* r : rows) {
      if (r->status == Status::skipped || r->status == Status::error ||
          r->status == Status::not_applicable) {
        out += fmt::format("{:<8} {:<14} {:<9} {:<{}} {:<8} {} {}\n", r->space, r->variant,
                           r->library, r->threads, tw, to_string(r->copies),
                           to_string(r->status), r->note);
        continue;
      }
      const bool alias = r->copies_alias && r->copies != CopyMode::none;
      out += fmt::format(
          "{:<8} {:<14} {:<9} {:<{}} {:<8} {:>9} {} {:>9} {} {} {} {:>8} {} {} {:>5} {:<7} "
          "{:>8.1e}\n",
          r->space, r->variant, r->library, r->threads, tw, to_string(r->copies),
          alias ? "0*" : fmt_num(r->h2d.median, 9),
          fmt_num(r->kernel.median, 9), alias ? "0*" : fmt_num(r->d2h.median, 9),
          fmt_num(r->total.median, 9), fmt::format("{:>8.3g}", r->total.stddev), fmt_num(r->cold_ms, 9),
          r->speedup > 0 ? fmt::format("{:.2f}x", r->speedup) : std::string("-"),
          fmt_num(r->gbps, 8), fmt_num(r->gflops, 8),
          r->pct_of_limit > 0 ? fmt::format("{:.0f}%", 100 * r->pct_of_limit) : std::string("-"),
          to_string(r->status), r->check.rel_error);
    }
    if (std::any_of(rows.begin(), rows.end(), [](const Result* r) {
          return r->copies_alias && r->copies != CopyMode::none;
        }))
      out += "  0* host space: the host mirror is the data itself, there is nothing to copy\n";
    for (const Result* r : rows)
      if (r->us_per_launch > 0)
        out += fmt::format("  {:<8} {:<16} {:<8} {:>9.3f} µs per launch ({:g} launches)\n",
                           r->space, r->variant, to_string(r->copies), r->us_per_launch,
                           r->launches);
    for (const Result* r : rows) {
      if (r->metrics.empty()) continue;
      std::vector<std::string> shown;
      for (const auto& [k, v] : r->metrics) shown.push_back(fmt::format("{} {:.4g}", k, v));
      out += fmt::format("  {:<8} {:<14} {:<8} {}: {}\n", r->space, r->variant,
                         to_string(r->copies), r->timed_by, fmt::join(shown, ", "));
    }
    if (!rows.front()->limit.empty())
      out += fmt::format("  %lim: kernel rate against the limit of its space ({})\n",
                         rows.front()->limit.substr(0, rows.front()->limit.find(' ')));
    // The memory limit is calibrated on arrays far larger than the caches.
    if (std::any_of(rows.begin(), rows.end(), [](const Result* r) {
          return r->pct_of_limit > 1.05 && r->limit.rfind("memory", 0) == 0;
        }))
      out += "  %lim above 100%: the arrays fit in a cache, faster than the memory the limit "
             "was measured on\n";
  }
  return out;
}

}  // namespace portalab
