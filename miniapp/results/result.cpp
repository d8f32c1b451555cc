#include "results/result.hpp"

#include "experiment/registry.hpp"
#include "libraries/host_blas.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <variant>
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
  return portalab::metric(metrics, name, absent);
}

void Result::set_metric(const std::string& name, double value) {
  portalab::set_metric(metrics, name, value);
}

std::string threads_text(int space_threads, int library_threads) {
  if (library_threads < 0) return fmt::format("{} (library: unknown)", space_threads);
  if (library_threads == 0 || library_threads == space_threads)
    return std::to_string(space_threads);
  return fmt::format("{} (library {})", space_threads, library_threads);
}

std::string row_path(std::string_view kernel_paths, std::string_view library) {
  if (!kernel_paths.empty()) return std::string(kernel_paths);
  if (!library.empty() && library != "native") return "library";
  return "";
}

namespace {
// The name of choice v of `experiment`'s parameter `name`, or "" where it has
// no named choices (or the experiment is not registered: a test's row).
std::string choice_name(std::string_view experiment, std::string_view name, std::int64_t v) {
  if (experiment.empty()) return {};
  const ExperimentInfo* info = find_experiment(experiment);
  if (!info) return {};
  for (const auto& spec : info->parameters)
    if (spec.name == name && v >= 0 && static_cast<std::size_t>(v) < spec.choices.size())
      return spec.choices[static_cast<std::size_t>(v)];
  return {};
}
}  // namespace

std::string to_string(const Parameters& p, std::string_view experiment) {
  std::string s;
  for (const auto& [k, v] : p) {
    const std::string choice = choice_name(experiment, k, v);
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", k,
                     choice.empty() ? std::to_string(v) : choice);
  }
  return s;
}

nlohmann::json parameters_json(const Parameters& p, std::string_view experiment) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : p) {
    const std::string choice = choice_name(experiment, k, v);
    if (choice.empty())
      out[k] = v;
    else
      out[k] = choice;
  }
  return out;
}

std::string_view Limit::kind() const {
  switch (bound) {
    case Bound::memory: return "memory";
    case Bound::read: return "read";
    case Bound::compute: return "gemm";
    case Bound::transfer: return "duplex";
    case Bound::peer: return "peer";
    case Bound::peer_duplex: return "peer-duplex";
    case Bound::collective: return "allreduce";
  }
  return "?";
}

std::string_view Limit::unit() const { return bound == Bound::compute ? "GFLOP/s" : "GB/s"; }

nlohmann::json Limit::to_json() const {
  if (!known()) return nullptr;
  nlohmann::json j{{"name", kind()}, {"value", value}, {"unit", unit()}};
  if (bound == Bound::transfer) j["copies"] = portalab::to_string(copies);
  if (!level.empty()) j["level"] = level;
  if (!suspect.empty()) j["suspect"] = suspect;
  return j;
}

std::string Limit::text() const {
  if (!known()) return {};
  if (bound == Bound::transfer)
    return fmt::format("duplex {} copies {:.0f} GB/s", portalab::to_string(copies), value);
  if (bound == Bound::collective) return fmt::format("allreduce bus {:.0f} GB/s", value);
  // A level's bandwidth: the level, and "read" for a read limit.
  if (!level.empty() && (bound == Bound::memory || bound == Bound::read))
    return fmt::format("{}{} {:.0f} GB/s", level, bound == Bound::read ? " read" : "", value);
  return fmt::format("{} {:.0f} {}", kind(), value, unit());
}

namespace {

// ---- The one table of result fields ----------------------------------------
// Each field has a name, the files it goes to, its value, and where it has a
// column of the console table. JSON takes the value as it is (non-finite
// numbers as null), CSV prints it ("" for none), the console its own way.

using Value = std::variant<std::monostate, bool, std::int64_t, double, std::string, nlohmann::json>;

enum Files : unsigned { csv_file = 1, json_file = 2, both_files = 3 };

struct Column {
  const char* header = nullptr;  // nullptr: no console column
  int width = 0;                 // negative: left-aligned
  std::string (*text)(const Result&) = nullptr;
};

struct Field {
  std::string name;
  Files files;
  std::function<Value(const Result&)> value;
  Column column{};
  int column_at = -1;  // position in the console table
};

std::string fmt_num(double v, int width) {
  if (v == 0.0) return fmt::format("{:>{}}", "0", width);
  return fmt::format("{:>{}.4g}", v, width);
}

// Copies of a host space's rows are no-ops, shown as 0* in the table.
bool shows_alias(const Result& r) { return r.copies_alias && r.copies != CopyMode::none; }

Value positive_or_none(double v) { return v > 0 ? Value(v) : Value(); }

nlohmann::json phase_json(const PhaseStats& p) {
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  return {{"median_ms", number(p.median)},
          {"min_ms", number(p.min)},
          {"max_ms", number(p.max)},
          {"std_ms", number(p.stddev)}};
}

const std::vector<std::pair<const char*, PhaseStats Result::*>>& phases() {
  static const std::vector<std::pair<const char*, PhaseStats Result::*>> p{
      {"h2d", &Result::h2d},
      {"kernel", &Result::kernel},
      {"d2h", &Result::d2h},
      {"total", &Result::total}};
  return p;
}

// A figure of the row's own energy source, where measured.
Value own_energy(const Result& r, double SourceEnergy::*member) {
  if (!r.energy || !r.energy->own().measured()) return Value();
  return r.energy->own().*member;
}
Value energy_optional(const Result& r, std::optional<double> EntryEnergy::*member) {
  if (!r.energy || !(*r.energy.*member)) return Value();
  return *(*r.energy.*member);
}

std::string alias_or(const Result& r, double ms) {
  return shows_alias(r) ? fmt::format("{:>9}", "0*") : fmt_num(ms, 9);
}
std::string or_dash(bool shown, const std::string& s) { return shown ? s : std::string("-"); }

std::vector<Field> make_fields() {
  auto text = [](auto member) {
    return [member](const Result& r) -> Value { return std::string(r.*member); };
  };
  auto number = [](auto member) {
    return [member](const Result& r) -> Value { return static_cast<double>(r.*member); };
  };
  std::vector<Field> f{
      {"experiment", both_files, text(&Result::experiment)},
      {"variant",
       both_files,
       text(&Result::variant),
       {"variant", -14, [](const Result& r) { return r.variant; }},
       1},
      {"library",
       both_files,
       text(&Result::library),
       {"library", -9, [](const Result& r) { return r.library; }},
       2},
      {"path", both_files, text(&Result::path)},
      {"threads",
       both_files,
       [](const Result& r) -> Value { return std::int64_t{r.threads}; },
       {"threads", -7, [](const Result& r) { return threads_text(r.threads, r.library_threads); }},
       3},
      {"library_threads", both_files,
       [](const Result& r) {
         return r.library_threads < 0 ? Value() : Value(std::int64_t{r.library_threads});
       }},
      {"space",
       both_files,
       text(&Result::space),
       {"space", -8, [](const Result& r) { return r.space; }},
       0},
      {"dtype", both_files, text(&Result::dtype)},
      {"n", both_files, [](const Result& r) -> Value { return static_cast<std::int64_t>(r.n); }},
      {"copies",
       both_files,
       [](const Result& r) -> Value { return std::string(to_string(r.copies)); },
       {"copies", -8, [](const Result& r) { return std::string(to_string(r.copies)); }},
       4},
      {"reps", both_files, [](const Result& r) -> Value { return std::int64_t{r.reps}; }},
      {"warmups", both_files, [](const Result& r) -> Value { return std::int64_t{r.warmups}; }},
      // How steady the kernel median is, and how the count was chosen.
      {"median_ci_low_ms", both_files,
       [](const Result& r) { return r.reps > 0 ? Value(r.median_ci_low_ms) : Value(); }},
      {"median_ci_high_ms", both_files,
       [](const Result& r) { return r.reps > 0 ? Value(r.median_ci_high_ms) : Value(); }},
      {"rel_ci95",
       both_files,
       [](const Result& r) {
         return r.reps > 0 && std::isfinite(r.rel_ci95) ? Value(r.rel_ci95) : Value();
       },
       {"ci95", 11,
        [](const Result& r) {
          if (r.reps == 0) return fmt::format("{:>11}", "-");
          const std::string ci = std::isfinite(r.rel_ci95)
                                     ? fmt::format("{:.1f}%", 100 * r.rel_ci95)
                                     : "-";
          return fmt::format("{:>11}", r.noisy() ? "NOISY " + ci : ci);
        }},
       17},
      {"noise_target", both_files,
       [](const Result& r) { return positive_or_none(r.noise_target); }},
      {"stopped_by", both_files,
       [](const Result& r) { return r.stopped_by.empty() ? Value() : Value(r.stopped_by); }},
      {"noisy", both_files, [](const Result& r) -> Value { return r.noisy(); }},
      {"repetitions", json_file,
       [](const Result& r) -> Value {
         nlohmann::json reps{{"kernel_ms", r.kernel_reps_ms}, {"total_ms", r.total_reps_ms}};
         if (!r.pass_kernel_ms.empty()) {
           reps["pass_kernel_ms"] = r.pass_kernel_ms;
           reps["pass_total_ms"] = r.pass_total_ms;
         }
         return reps;
       }},
      // Phase medians; the console shows a host space's no-op copies as 0*.
      {"h2d_ms",
       both_files,
       [](const Result& r) -> Value { return r.h2d.median; },
       {"h2d", 9, [](const Result& r) { return alias_or(r, r.h2d.median); }},
       5},
      {"kernel_ms",
       both_files,
       [](const Result& r) -> Value { return r.kernel.median; },
       {"kernel", 9, [](const Result& r) { return fmt_num(r.kernel.median, 9); }},
       6},
      {"d2h_ms",
       both_files,
       [](const Result& r) -> Value { return r.d2h.median; },
       {"d2h", 9, [](const Result& r) { return alias_or(r, r.d2h.median); }},
       7},
      {"total_ms",
       both_files,
       [](const Result& r) -> Value { return r.total.median; },
       {"total", 9, [](const Result& r) { return fmt_num(r.total.median, 9); }},
       8},
  };
  for (const auto& [name, member] : phases()) {
    f.push_back({std::string(name) + "_min_ms", csv_file,
                 [member](const Result& r) -> Value { return (r.*member).min; }});
    f.push_back({std::string(name) + "_max_ms", csv_file,
                 [member](const Result& r) -> Value { return (r.*member).max; }});
    f.push_back({std::string(name) + "_std_ms", csv_file,
                 [member](const Result& r) -> Value { return (r.*member).stddev; }});
  }
  f.back().column = {"±", 8,
                     [](const Result& r) { return fmt::format("{:>8.3g}", r.total.stddev); }};
  f.back().column_at = 9;
  std::vector<Field> rest{
      {"cold_ms",
       both_files,
       number(&Result::cold_ms),
       {"cold", 9, [](const Result& r) { return fmt_num(r.cold_ms, 9); }},
       10},
      {"first_in_process", both_files, [](const Result& r) -> Value { return r.first_in_process; }},
      {"copies_alias", both_files, [](const Result& r) -> Value { return r.copies_alias; }},
      {"bytes", both_files, number(&Result::bytes)},
      {"flops", both_files, number(&Result::flops)},
      {"gbps",
       both_files,
       number(&Result::gbps),
       {"GB/s", 8, [](const Result& r) { return fmt_num(r.gbps, 8); }},
       12},
      {"gflops",
       both_files,
       number(&Result::gflops),
       {"GFLOP/s", 8, [](const Result& r) { return fmt_num(r.gflops, 8); }},
       13},
      {"h2d_gbps", both_files, number(&Result::h2d_gbps)},
      {"d2h_gbps", both_files, number(&Result::d2h_gbps)},
      {"limit", json_file, [](const Result& r) -> Value { return r.limit.to_json(); }},
      // The CSV has no objects: the limit's fields as limit_<field>.
      {"limit_name", csv_file,
       [](const Result& r) {
         return r.limit.known() ? Value(std::string(r.limit.kind())) : Value();
       }},
      {"limit_value", csv_file,
       [](const Result& r) { return r.limit.known() ? Value(r.limit.value) : Value(); }},
      {"limit_unit", csv_file,
       [](const Result& r) {
         return r.limit.known() ? Value(std::string(r.limit.unit())) : Value();
       }},
      {"limit_copies", csv_file,
       [](const Result& r) {
         return r.limit.known() && r.limit.bound == Bound::transfer
                    ? Value(std::string(to_string(r.limit.copies)))
                    : Value();
       }},
      {"limit_level", csv_file,
       [](const Result& r) {
         return r.limit.known() && !r.limit.level.empty() ? Value(r.limit.level) : Value();
       }},
      {"limit_suspect", csv_file,
       [](const Result& r) {
         return r.limit.known() && !r.limit.suspect.empty() ? Value(r.limit.suspect) : Value();
       }},
      // The share and the level it is of; "!" a suspect limit, said under the table.
      {"pct_of_limit",
       both_files,
       [](const Result& r) { return positive_or_none(r.pct_of_limit); },
       {"%lim", 5,
        [](const Result& r) {
          return or_dash(r.pct_of_limit > 0,
                         fmt::format("{:.0f}%{}{}", 100 * r.pct_of_limit,
                                     r.limit.level.empty() ? "" : " " + r.limit.level,
                                     r.limit.suspect.empty() ? "" : " !"));
        }},
       14},
      {"h2d_pct_of_limit", both_files,
       [](const Result& r) { return positive_or_none(r.h2d_pct_of_limit); }},
      {"d2h_pct_of_limit", both_files,
       [](const Result& r) { return positive_or_none(r.d2h_pct_of_limit); }},
      {"speedup_over_baseline",
       both_files,
       [](const Result& r) { return positive_or_none(r.speedup_over_baseline); },
       {"speedup", 8,
        [](const Result& r) {
          return or_dash(r.speedup_over_baseline > 0,
                         fmt::format("{:.2f}x", r.speedup_over_baseline));
        }},
       11},
      {"baseline", both_files, text(&Result::baseline)},
      {"check",
       both_files,
       [](const Result& r) -> Value { return std::string(to_string(r.status)); },
       {"check", -7, [](const Result& r) { return std::string(to_string(r.status)); }},
       15},
      {"rel_error",
       both_files,
       [](const Result& r) -> Value { return r.check.rel_error; },
       {"rel.err", 8, [](const Result& r) { return fmt::format("{:>8.1e}", r.check.rel_error); }},
       16},
      {"tolerance", both_files, [](const Result& r) -> Value { return r.check.tolerance; }},
      {"note", both_files,
       [](const Result& r) -> Value { return r.note.empty() ? r.check.detail : r.note; }},
      {"launches", both_files, number(&Result::launches)},
      {"us_per_launch", both_files, number(&Result::us_per_launch)},
      // An object of integers and choices' names; in the CSV, that object as JSON text.
      {"parameters", both_files,
       [](const Result& r) -> Value { return parameters_json(r.parameters, r.experiment); }},
      {"timed_by", both_files, text(&Result::timed_by)},
      {"ranks", both_files, [](const Result& r) -> Value { return std::int64_t{r.ranks}; }},
      {"rank_kernel_min_ms", both_files,
       [](const Result& r) { return r.ranks > 1 ? Value(r.rank_kernel_min_ms) : Value(); }},
      {"rank_kernel_max_ms", both_files,
       [](const Result& r) { return r.ranks > 1 ? Value(r.rank_kernel_max_ms) : Value(); }},
      {"imbalance", both_files,
       [](const Result& r) { return r.ranks > 1 ? Value(r.imbalance) : Value(); }},
      {"per_rank", json_file,
       [](const Result& r) -> Value {
         return r.per_rank.is_null() ? nlohmann::json::array() : r.per_rank;
       }},
      // An object of numbers; in the CSV, that object as JSON text.
      {"metrics", both_files,
       [](const Result& r) -> Value {
         nlohmann::json m = nlohmann::json::object();
         for (const auto& [k, v] : r.metrics)
           m[k] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
         return m;
       }},
      // Energy: the row's own side (its GPU, or the CPU for a host space) in
      // the CSV; every figure, both sides, in the JSON's "energy" object.
      {"energy_source", csv_file,
       [](const Result& r) -> Value {
         return r.energy ? Value(std::string(r.energy->gpu_read ? "GPU" : "CPU")) : Value();
       }},
      {"joules_per_rep", csv_file,
       [](const Result& r) { return own_energy(r, &SourceEnergy::joules_per_rep); }},
      {"kernel_joules_per_rep", csv_file,
       [](const Result& r) { return own_energy(r, &SourceEnergy::kernel_joules_per_rep); }},
      {"mean_power_w", csv_file,
       [](const Result& r) { return own_energy(r, &SourceEnergy::mean_power_w); }},
      {"gflop_per_j", csv_file,
       [](const Result& r) {
         return r.energy ? positive_or_none(r.energy->gflop_per_j) : Value();
       }},
      {"gb_per_j", csv_file,
       [](const Result& r) { return r.energy ? positive_or_none(r.energy->gb_per_j) : Value(); }},
      {"sm_clock_mhz", csv_file,
       [](const Result& r) { return energy_optional(r, &EntryEnergy::sm_mhz); }},
      {"mem_clock_mhz", csv_file,
       [](const Result& r) { return energy_optional(r, &EntryEnergy::mem_mhz); }},
      {"temperature_c", csv_file,
       [](const Result& r) { return energy_optional(r, &EntryEnergy::temperature_c); }},
      {"clock_event_reasons", csv_file,
       [](const Result& r) -> Value {
         return r.energy ? Value(fmt::format("{}", fmt::join(r.energy->reasons, ";"))) : Value();
       }},
      {"throttled", csv_file,
       [](const Result& r) {
         return r.energy && r.energy->gpu_read ? Value(r.energy->throttled) : Value();
       }},
      {"energy_not_available", csv_file,
       [](const Result& r) -> Value {
         return r.energy ? Value(r.energy->own().not_available) : Value();
       }},
      {"energy", json_file,
       [](const Result& r) -> Value { return r.energy ? to_json(*r.energy) : nlohmann::json(); }},
      {"stats", json_file,
       [](const Result& r) -> Value {
         nlohmann::json stats;
         for (const auto& [name, member] : phases()) stats[name] = phase_json(r.*member);
         return stats;
       }},
  };
  f.insert(f.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
  return f;
}

const std::vector<Field>& fields() {
  static const std::vector<Field> all = make_fields();
  return all;
}

// Console columns in their order.
const std::vector<const Column*>& columns() {
  static const std::vector<const Column*> all = [] {
    std::vector<std::pair<int, const Column*>> at;
    for (const auto& f : fields())
      if (f.column_at >= 0) at.emplace_back(f.column_at, &f.column);
    std::sort(at.begin(), at.end());
    std::vector<const Column*> out;
    for (const auto& [i, c] : at) out.push_back(c);
    return out;
  }();
  return all;
}

nlohmann::json json_value(const Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate>)
          return nullptr;
        else if constexpr (std::is_same_v<X, double>)
          return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
        else
          return x;
      },
      v);
}

// Text that is not UTF-8 (a library's message) with U+FFFD, as the JSON
// files write it (result_files.cpp): a CSV reader expects UTF-8.
std::string valid_utf8(const std::string& s) {
  return nlohmann::json::parse(
             nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
      .get<std::string>();
}

std::string csv_quote(const std::string& text) {
  const std::string s = valid_utf8(text);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_value(const Value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, std::monostate>)
          return "";
        else if constexpr (std::is_same_v<X, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<X, std::int64_t>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<X, double>)
          // No number (a failed check's infinite error): empty, as JSON's null.
          return std::isfinite(x) ? fmt::format("{:.9g}", x) : std::string();
        else if constexpr (std::is_same_v<X, std::string>)
          return csv_quote(x);
        else
          return csv_quote(x.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      },
      v);
}

// Under a group's table: each row's energy where measured (why not is said
// once, when the run starts, and in the files), and THROTTLED rows (clocks
// held down while timed).
std::string energy_lines(const std::vector<const Result*>& rows) {
  std::string out;
  for (const Result* r : rows) {
    if (!r->energy || (r->status != Status::pass && r->status != Status::fail)) continue;
    const EntryEnergy& e = *r->energy;
    const SourceEnergy& s = e.own();
    const std::string who = fmt::format("  {:<8} {:<14} {:<8}", r->space, r->variant,
                                        to_string(r->copies));
    if (!s.measured()) continue;
    std::vector<std::string> parts{fmt::format("{:.4g} J/rep ({}), kernel {:.4g} J, {:.4g} W",
                                               s.joules_per_rep, e.gpu_read ? "GPU" : "CPU",
                                               s.kernel_joules_per_rep, s.mean_power_w)};
    if (e.gflop_per_j > 0)
      parts.push_back(fmt::format("{:.4g} GFLOP/J", e.gflop_per_j));
    else if (e.gb_per_j > 0)
      parts.push_back(fmt::format("{:.4g} GB/J", e.gb_per_j));
    if (e.sm_mhz) parts.push_back(fmt::format("SM {:.0f} MHz", *e.sm_mhz));
    if (e.mem_mhz) parts.push_back(fmt::format("mem {:.0f} MHz", *e.mem_mhz));
    if (e.temperature_c) parts.push_back(fmt::format("{:.0f} °C", *e.temperature_c));
    if (s.reps_counted * 2 < s.reps)
      parts.push_back(
          fmt::format("counter moved in {} of {} reps: coarse", s.reps_counted, s.reps));
    out += fmt::format("{} energy: {}\n", who, fmt::join(parts, ", "));
  }
  for (const Result* r : rows)
    if (r->energy && r->energy->throttled)
      out += fmt::format(
          "  THROTTLED {} {} {}: clocks held down ({}) during the timed "
          "repetitions: its times may not repeat\n",
          r->space, r->variant, to_string(r->copies), fmt::join(r->energy->reasons, ", "));
  return out;
}

}  // namespace

nlohmann::json to_json(const Result& r) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& f : fields())
    if (f.files & json_file) j[f.name] = json_value(f.value(r));
  return j;
}

std::vector<std::string> csv_header() {
  std::vector<std::string> h;
  for (const auto& f : fields())
    if (f.files & csv_file) h.push_back(f.name);
  return h;
}

std::vector<std::string> csv_row(const Result& r) {
  std::vector<std::string> row;
  for (const auto& f : fields())
    if (f.files & csv_file) row.push_back(csv_value(f.value(r)));
  return row;
}

std::string csv_line(const Result& r) { return fmt::format("{}\n", fmt::join(csv_row(r), ",")); }

std::string format_table(std::span<const Result> results, const std::string& experiment) {
  std::map<std::tuple<std::string, std::size_t, int>, std::vector<const Result*>> groups;
  std::vector<std::tuple<std::string, std::size_t, int>> order;
  for (const auto& r : results) {
    if (r.experiment != experiment) continue;
    auto key = std::make_tuple(r.dtype, r.n, r.ranks);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  // A column is as wide as its widest cell in the group ("2 (library 1)").
  auto length = [](const std::string& s) {
    return static_cast<int>(std::count_if(s.begin(), s.end(), [](char ch) {
      return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;  // UTF-8 code points
    }));
  };
  std::vector<int> width;
  auto cell = [&](std::size_t i, const std::string& s) {
    return columns()[i]->width < 0 ? fmt::format("{:<{}}", s, width[i])
                                   : fmt::format("{:>{}}", s, width[i]);
  };
  std::string out;
  for (const auto& key : order) {
    const auto& rows = groups[key];
    const Result& first = *rows.front();
    const std::string parameters = to_string(first.parameters, first.experiment);
    const int ranks = std::get<2>(key);
    // A fixed count, or repetitions until the median is steady (each row's own).
    std::string reps = first.noise_target > 0
                           ? fmt::format("reps until the median's 95% interval is within {:g}%",
                                         100 * first.noise_target)
                           : fmt::format("{} reps", first.reps);
    if (first.pass_kernel_ms.size() > 1)
      reps += fmt::format(" in {} passes", first.pass_kernel_ms.size());
    out += fmt::format("\n{}  {}  n={}{}{}  ({} after {} warm-ups; times in ms, median ± std)\n",
                       experiment, std::get<0>(key), std::get<1>(key),
                       ranks > 1 ? fmt::format("  ranks={}", ranks) : std::string(),
                       parameters.empty() ? "" : "  " + parameters, reps, first.warmups);
    // Nothing measured: who (space, variant, library, threads, copies), then why.
    auto shown = [](const Result* r) {
      const bool measured = r->status == Status::pass || r->status == Status::fail;
      return measured ? columns().size() : std::size_t(5);
    };
    width.assign(columns().size(), 0);
    for (std::size_t i = 0; i < columns().size(); ++i) {
      width[i] = std::max(std::abs(columns()[i]->width), length(columns()[i]->header));
      for (const Result* r : rows)
        if (i < shown(r)) width[i] = std::max(width[i], length(columns()[i]->text(*r)));
    }
    std::vector<std::string> line;
    for (std::size_t i = 0; i < columns().size(); ++i)
      line.push_back(cell(i, columns()[i]->header));
    out += fmt::format("{}\n", fmt::join(line, " "));
    for (const Result* r : rows) {
      line.clear();
      const bool measured = r->status == Status::pass || r->status == Status::fail;
      for (std::size_t i = 0; i < shown(r); ++i) line.push_back(cell(i, columns()[i]->text(*r)));
      if (!measured) line.push_back(fmt::format("{} {}", to_string(r->status), r->note));
      out += fmt::format("{}\n", fmt::join(line, " "));
    }
    if (std::any_of(rows.begin(), rows.end(), [](const Result* r) { return shows_alias(*r); }))
      out += "  0* host space: the host mirror is the data itself, there is nothing to copy\n";
    for (const Result* r : rows)
      if (r->us_per_launch > 0)
        out += fmt::format("  {:<8} {:<16} {:<8} {:>9.3f} µs per launch ({:g} launches)\n",
                           r->space, r->variant, to_string(r->copies), r->us_per_launch,
                           r->launches);
    for (const Result* r : rows) {
      if (r->metrics.empty()) continue;
      std::vector<std::string> metrics;
      for (const auto& [k, v] : r->metrics) metrics.push_back(fmt::format("{} {:.4g}", k, v));
      out += fmt::format("  {:<8} {:<14} {:<8} {}: {}\n", r->space, r->variant,
                         to_string(r->copies), r->timed_by, fmt::join(metrics, ", "));
    }
    for (const Result* r : rows)
      if (r->ranks > 1 && (r->status == Status::pass || r->status == Status::fail))
        out += fmt::format(
            "  {:<8} {:<14} {:<8} {} ranks: the slowest rank's times; kernel "
            "per rank {:.4g} to {:.4g} ms, imbalance {:.1f}%\n",
            r->space, r->variant, to_string(r->copies), r->ranks, r->rank_kernel_min_ms,
            r->rank_kernel_max_ms, 100 * r->imbalance);
    out += energy_lines(rows);
    if (first.limit.known())
      out += fmt::format(
          "  %lim: kernel rate against the limit of its space ({}){}\n", first.limit.kind(),
          first.limit.level.empty() ? "" : ", at the level of the ladder its working set lives in");
    for (const Result* r : rows)
      if (!r->limit.suspect.empty())
        out += fmt::format("  ! {:<8} {:<14} {:.0f}% of {}: suspect limit: {}\n", r->space,
                           r->variant, 100 * r->pct_of_limit, r->limit.text(), r->limit.suspect);
    // Rows the host BLAS or LAPACK served with kernels narrower than the CPU's.
    const HostBlasKernels& blas = host_blas_kernels();
    if (!blas.warning.empty() && std::any_of(rows.begin(), rows.end(), [&](const Result* r) {
          return !r->library.empty() && blas.library.rfind(r->library, 0) == 0;
        }))
      out += fmt::format("  WARNING {}\n", blas.warning);
  }
  return out;
}

}  // namespace portalab
