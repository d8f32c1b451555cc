// `portalab db history`: each row key's runs over time, the latest run's
// verdict against the earlier ones, and the regressions with what changed.
#include "store/store.hpp"
#include "store/verdict.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <ostream>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace portalab::store {

namespace {

// What a run was built and run with (RunFacts::values), as the regressions
// list names it.
constexpr const char* history_facts[history_fact_count][2] = {{"portalab_version", "portalab"},
                                                              {"kokkos_version", "Kokkos"},
                                                              {"kokkos_kernels_version",
                                                               "Kokkos Kernels"},
                                                              {"compiler", "compiler"},
                                                              {"gpu_driver", "driver"},
                                                              {"cuda_runtime", "CUDA runtime"},
                                                              {"host_blas", "library"}};

std::string phase_checked(const std::string& phase) {
  for (const char* p : {"h2d", "kernel", "d2h", "total"})
    if (phase == p) return phase;
  throw StoreError(2, fmt::format("--phase '{}': one of h2d, kernel, d2h, total", phase));
}

// The runs the points are of, each read once however many rows it has.
class RunTable {
 public:
  RunTable(Connection& db, std::vector<RunFacts>& runs)
      : m_runs(runs), m_read(db.prepare([] {
          std::string sql = "SELECT started_at";
          for (const auto& f : history_facts) sql += fmt::format(", {}", f[0]);
          return sql + " FROM runs WHERE id = ?";
        }())) {}

  std::size_t index(std::int64_t run) {
    if (const auto it = m_index.find(run); it != m_index.end()) return it->second;
    RunFacts facts;
    m_read.bind(1, run);
    if (m_read.step()) {
      facts.started_at = m_read.text(0);
      for (int i = 0; i < history_fact_count; ++i) facts.values[i] = m_read.text(1 + i);
    }
    m_read.reset();
    m_runs.push_back(std::move(facts));
    return m_index[run] = m_runs.size() - 1;
  }

 private:
  std::vector<RunFacts>& m_runs;
  Statement m_read;
  std::unordered_map<std::int64_t, std::size_t> m_index;
};

// What differs between two runs of one row: the code path (where both runs
// recorded one), the builds, the clocks, THROTTLED.
std::vector<HistoryChange> changes_between(const History& h, const HistoryPoint& before,
                                           const HistoryPoint& after) {
  std::vector<HistoryChange> out;
  if (before.path && after.path && *before.path != *after.path)
    out.push_back({"path", *before.path, *after.path});
  const auto &a = h.runs[before.run].values, &b = h.runs[after.run].values;
  for (int i = 0; i < history_fact_count; ++i)
    if (a[i] != b[i]) out.push_back({history_facts[i][1], a[i], b[i]});
  if (before.sm_mhz && after.sm_mhz &&
      std::abs(*after.sm_mhz - *before.sm_mhz) > 0.02 * *before.sm_mhz)
    out.push_back({"SM clock (MHz)", fmt::format("{:.0f}", *before.sm_mhz),
                   fmt::format("{:.0f}", *after.sm_mhz)});
  if (before.throttled != after.throttled)
    out.push_back({"THROTTLED", before.throttled ? "yes" : "no", after.throttled ? "yes" : "no"});
  return out;
}

// The passing earlier runs of a row with a time.
std::vector<std::size_t> passing_earlier(const HistoryRow& row) {
  std::vector<std::size_t> earlier;
  for (std::size_t i = 0; i + 1 < row.runs.size(); ++i)
    if (row.runs[i].m.check == "PASS" && row.runs[i].m.ms) earlier.push_back(i);
  return earlier;
}

// The earlier run the latest is judged against: the earlier run of the
// median time (a real run, with its repetitions' range, as compare.py's
// BASE is); none for a row that is NEW.
std::optional<std::size_t> base_of(const HistoryRow& row) {
  const auto& runs = row.runs;
  const auto earlier = passing_earlier(row);
  if (runs.size() < 2 || (earlier.empty() && runs.back().m.check == "PASS")) return std::nullopt;
  if (earlier.empty()) return runs.size() - 2;
  auto sorted = earlier;
  std::sort(sorted.begin(), sorted.end(),
            [&](std::size_t a, std::size_t b) { return *runs[a].m.ms < *runs[b].m.ms; });
  return sorted[(sorted.size() - 1) / 2];
}

// Each row's repetitions of the phase for the U test, its base's and latest
// run's (none where a run kept none), their passes' medians (none where a
// run had one pass), and whether its latest run is noisy. Looked up by row,
// the latest and the base: the repetitions are no part of rows_series, and
// a key's other runs need none.
std::vector<JudgedPair> read_repetitions(Connection& db, History& h) {
  std::vector<JudgedPair> pairs(h.rows.size());
  // A store without repetitions holds no row of results schema 5 (its
  // rows carry their repetitions), the first to say a row is noisy:
  // nothing to look up, and history as fast as before on an older store.
  {
    auto any = db.prepare("SELECT EXISTS(SELECT 1 FROM repetitions)");
    if (!(any.step() && any.integer(0) != 0)) return pairs;
  }
  const bool kept = h.phase == "kernel" || h.phase == "total";  // the phases a row repeats
  const std::string phase = kept ? h.phase : "total";
  auto read = db.prepare(
      fmt::format("SELECT r.noisy, p.{0}_ms, p.pass_{0}_ms FROM rows r LEFT JOIN repetitions p "
                  "ON p.row = r.id WHERE r.id = ?",
                  phase));
  const auto passes = [&] {
    return read.null(2) ? std::vector<double>{} : repetitions_of_blob(read.blob(2));
  };
  for (std::size_t i = 0; i < h.rows.size(); ++i) {
    HistoryRow& row = h.rows[i];
    JudgedPair& pair = pairs[i];
    read.bind(1, row.runs.back().row);
    if (read.step()) {
      row.noisy = !read.null(0) && read.integer(0) != 0;
      if (kept) {
        pair.now_ms = repetitions_of_blob(read.blob(1));
        pair.now_runs = passes();
      }
    }
    read.reset();
    if (!row.base || pair.now_ms.empty()) continue;
    read.bind(1, row.runs[*row.base].row);
    if (read.step()) {
      pair.base_ms = repetitions_of_blob(read.blob(1));
      pair.base_runs = passes();
    }
    read.reset();
  }
  return pairs;
}

// This row's own run-to-run noise where its earlier runs measure it (four
// at least), else none: how far their medians spread about their median
// (robustly: a run the machine slowed is one outlier, where it would be two
// consecutive differences), as the noise of the latest run against the
// base. The base is the earlier run of the median time, off the centre by
// the error of a median of n, sqrt(pi / 2n) of one run's.
std::optional<double> own_noise(const HistoryRow& row) {
  const auto earlier = passing_earlier(row);
  if (earlier.size() < 4) return std::nullopt;
  std::vector<double> logs;
  for (const std::size_t i : earlier) logs.push_back(std::log(*row.runs[i].m.ms));
  const double n = static_cast<double>(logs.size());
  return std::sqrt(1 + std::numbers::pi / (2 * n)) * robust_sigma(logs);
}

// The latest run of a row against its base, as judge_pairs found it (by the
// U test where both kept repetitions of the phase, else compare.py's rule).
void judge(const History& h, HistoryRow& row, const Judgement& j, const HistoryOptions& o) {
  const HistoryPoint& latest = row.runs.back();
  if (j.rule == "spread") row.noise = j.noise;
  if (j.rule == "test") row.min_change = j.min_change;
  row.p = j.p;
  row.p_adjusted = j.p_adjusted;
  row.verdict = j.verdict;
  for (char& c : row.verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  row.change = j.change;
  row.changes = changes_between(h, row.runs[*row.base], latest);
  row.regression = j.verdict == "broken" ||
                   (j.verdict == "slower" && j.change && *j.change * 100 > o.threshold_pct);
}

// ---- the JSON document, written directly: a history of every row of a
// large store is hundreds of thousands of points ----

using Buffer = fmt::memory_buffer;

void put(Buffer& out, std::string_view s) { out.append(s); }

void put_string(Buffer& out, std::string_view s) {
  const bool plain = std::none_of(s.begin(), s.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  });
  if (plain) {
    out.push_back('"');
    out.append(s);
    out.push_back('"');
  } else {  // escapes and UTF-8 checked as every other portalab JSON is
    put(out, nlohmann::json(std::string(s))
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

void put_number(Buffer& out, const std::optional<double>& v) {
  if (v && std::isfinite(*v))
    fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}"), *v);  // parsed once: per point
  else
    put(out, "null");
}

void put_key(Buffer& out, const SeriesKey& k) {
  const std::pair<const char*, const std::string*> text[] = {
      {"experiment", &k.experiment}, {"variant", &k.variant}, {"dtype", &k.dtype},
      {"space", &k.space},           {"copies", &k.copies},   {"library", &k.library},
      {"machine", &k.machine},       {"gpu", &k.gpu}};
  put(out, "{");
  for (const auto& [name, value] : text) {
    fmt::format_to(std::back_inserter(out), "\"{}\": ", name);
    put_string(out, *value);
    put(out, ", ");
  }
  fmt::format_to(std::back_inserter(out), "\"n\": {}, \"threads\": {}}}", k.n, k.threads);
}

void put_row(Buffer& out, const History& h, const HistoryRow& r,
             const std::vector<std::string>& run_text) {
  put(out, "{\"key\": ");
  put_key(out, r.key);
  put(out, ", \"runs\": [");
  for (std::size_t i = 0; i < r.runs.size(); ++i) {
    const auto& p = r.runs[i];
    put(out, i ? ", {" : "{");
    put(out, run_text[p.run]);  // "started_at": ..., "portalab": ...,
    put(out, " \"check\": ");
    put_string(out, p.m.check);
    put(out, ", \"ms\": ");
    put_number(out, p.m.ms);
    put(out, ", \"min_ms\": ");
    put_number(out, p.m.min_ms);
    put(out, ", \"max_ms\": ");
    put_number(out, p.m.max_ms);
    put(out, ", \"path\": ");
    if (p.path)
      put_string(out, *p.path);
    else
      put(out, "null");
    put(out, p.throttled ? ", \"throttled\": true}" : ", \"throttled\": false}");
  }
  put(out, "], \"verdict\": ");
  put_string(out, r.verdict);
  put(out, r.noisy ? ", \"noisy\": true" : ", \"noisy\": false");
  if (r.base) {
    put(out, ", \"change\": ");
    put_number(out, r.change);
    put(out, ", \"noise\": ");
    put_number(out, r.noise);
    put(out, ", \"min_change\": ");
    put_number(out, r.min_change);
    put(out, ", \"p\": ");
    put_number(out, r.p);
    put(out, ", \"p_adjusted\": ");
    put_number(out, r.p_adjusted);
    put(out, ", \"base\": {\"started_at\": ");
    put_string(out, h.runs[r.runs[*r.base].run].started_at);
    put(out, ", \"ms\": ");
    put_number(out, r.runs[*r.base].m.ms);
    put(out, "}, \"changes\": [");
    for (std::size_t i = 0; i < r.changes.size(); ++i) {
      put(out, i ? ", {\"what\": " : "{\"what\": ");
      put_string(out, r.changes[i].what);
      put(out, ", \"from\": ");
      put_string(out, r.changes[i].from);
      put(out, ", \"to\": ");
      put_string(out, r.changes[i].to);
      put(out, "}");
    }
    put(out, r.regression ? "], \"regression\": true" : "], \"regression\": false");
  }
  put(out, "}");
}

// Each key's last runs (o.last), in History::rows (not yet judged), its
// keys in the order history() gives them.
void read_rows(Connection& db, const HistoryOptions& o, History& h) {
  auto series = db.prepare(
      "SELECT id, experiment, variant, dtype, n, space, copies, library, threads, machine, gpu FROM series "
      "WHERE (?1 = '' OR machine = ?1) AND (?2 = '' OR experiment = ?2) AND (?3 = '' OR variant = ?3) "
      "AND (?4 = '' OR dtype = ?4) AND (?5 = '' OR space = ?5) "
      "AND (?6 = '' OR instr(',' || gpu || ',', ',' || ?6 || ',') > 0)");
  series.bind(1, o.machine)
      .bind(2, o.experiment)
      .bind(3, o.variant)
      .bind(4, o.dtype)
      .bind(5, o.space)
      .bind(6, o.gpu);
  std::vector<std::pair<std::int64_t, SeriesKey>> keys;
  while (series.step())
    keys.emplace_back(series.integer(0),
                      SeriesKey{series.text(1), series.text(2), series.text(3), series.text(5),
                                series.text(6), series.text(7), series.text(9), series.text(10),
                                series.integer(4), series.integer(8)});
  // Ordered here, not by SQL (whose index orders the key with n fourth and
  // sorts the rest slower): each text field's few values ranked, bytewise
  // as SQLite compares text, then the keys by those ranks.
  using Ranks = std::array<std::int64_t, 10>;
  std::vector<Ranks> ranks(keys.size());
  const auto rank = [&](std::string SeriesKey::*field, std::size_t slot) {
    std::unordered_map<std::string_view, std::size_t> seen;
    std::vector<std::string_view> values;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto [it, fresh] = seen.try_emplace(keys[i].second.*field, values.size());
      if (fresh) values.push_back(it->first);
      ranks[i][slot] = static_cast<std::int64_t>(it->second);
    }
    std::vector<std::size_t> by_value(values.size());
    for (std::size_t v = 0; v < values.size(); ++v) by_value[v] = v;
    std::sort(by_value.begin(), by_value.end(),
              [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
    std::vector<std::int64_t> rank_of(values.size());
    for (std::size_t r = 0; r < by_value.size(); ++r)
      rank_of[by_value[r]] = static_cast<std::int64_t>(r);
    for (auto& r : ranks) r[slot] = rank_of[static_cast<std::size_t>(r[slot])];
  };
  rank(&SeriesKey::experiment, 0);
  rank(&SeriesKey::variant, 1);
  rank(&SeriesKey::dtype, 2);
  rank(&SeriesKey::space, 3);
  rank(&SeriesKey::copies, 4);
  rank(&SeriesKey::library, 5);
  rank(&SeriesKey::machine, 7);
  rank(&SeriesKey::gpu, 8);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ranks[i][6] = keys[i].second.threads;
    ranks[i][9] = keys[i].second.n;
  }
  std::vector<std::size_t> sorted(keys.size());
  for (std::size_t i = 0; i < sorted.size(); ++i) sorted[i] = i;
  std::sort(sorted.begin(), sorted.end(),
            [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
  // A row's last runs, newest first: rows_series holds them in that order.
  // The energy join only where the store has energy figures: a lookup per
  // point otherwise finds nothing.
  bool energy = false;
  {
    auto any = db.prepare("SELECT EXISTS(SELECT 1 FROM energy)");
    energy = any.step() && any.integer(0) != 0;
  }
  auto points = db.prepare(fmt::format(
      "SELECT r.run, r.check_result, r.reps, r.{0}_ms, r.{0}_min_ms, r.{0}_max_ms, r.{0}_std_ms, "
      "r.path, r.id{1} "
      "WHERE r.series = ? ORDER BY r.started_unix DESC, r.id DESC LIMIT ?",
      h.phase,
      energy ? ", e.throttled, e.sm_clock_mhz FROM rows r LEFT JOIN energy e ON e.row = r.id"
             : " FROM rows r"));
  RunTable runs(db, h.runs);
  for (const std::size_t i : sorted) {
    auto& [id, key] = keys[i];
    HistoryRow row;
    row.key = std::move(key);
    row.runs.reserve(static_cast<std::size_t>(o.last));
    points.bind(1, id).bind(2, o.last);
    while (points.step()) {
      HistoryPoint p;
      p.run = runs.index(points.integer(0));
      p.m = {points.text(1),       points.maybe_real(3), points.maybe_real(4),
             points.maybe_real(5), points.maybe_real(6), points.maybe_real(2)};
      p.path = points.maybe_text(7);
      p.row = points.integer(8);
      if (energy) {
        p.throttled = !points.null(9) && points.integer(9) != 0;
        p.sm_mhz = points.maybe_real(10);
      }
      row.runs.push_back(std::move(p));
    }
    points.reset();
    if (row.runs.empty()) continue;  // a key whose runs are gone
    std::reverse(row.runs.begin(), row.runs.end());
    h.rows.push_back(std::move(row));
  }
}

}  // namespace

History history(Connection& db, const HistoryOptions& o) {
  History h;
  h.phase = phase_checked(o.phase);
  if (o.last < 2) throw StoreError(2, fmt::format("--last {}: at least 2 runs to compare", o.last));
  if (!(o.sigmas > 0) || !(o.min_noise >= 0))
    throw StoreError(2, "--sigmas must be > 0 and --min-noise >= 0");
  if (!(o.alpha > 0 && o.alpha < 1) || !(o.tolerance >= 0))
    throw StoreError(2, "--alpha must be in (0, 1) and --tolerance >= 0");
  h.last = o.last;
  h.threshold_pct = o.threshold_pct;
  h.sigmas = o.sigmas;
  h.alpha = o.alpha;
  h.tolerance = o.tolerance;
  // One read transaction: the rows of one moment, and the file locked and
  // checked once, not once per key.
  std::vector<JudgedPair> repeated;
  db.exec("BEGIN");
  try {
    read_rows(db, o, h);
    for (auto& r : h.rows)
      if (!(r.base = base_of(r))) r.verdict = "NEW";
    repeated = read_repetitions(db, h);
    db.exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }

  // The run-to-run noise as compare.py measures it, on pairs of consecutive
  // earlier runs of every row asked about (the latest runs left out: they
  // are what is judged).
  std::vector<std::pair<double, double>> pairs;
  for (const auto& r : h.rows)
    for (std::size_t i = 1; i + 1 < r.runs.size(); ++i) {
      const auto &a = r.runs[i - 1].m, &b = r.runs[i].m;
      if (a.check == "PASS" && b.check == "PASS" && a.ms && b.ms) pairs.emplace_back(*a.ms, *b.ms);
    }
  const Noise noise(pairs, o.min_noise);
  h.noise_pooled = noise.pooled();
  h.noise_pairs = noise.count();
  h.noise_floor = noise.floor();
  h.noise_by_decade = noise.by_decade();

  // The rows judged, each its pair: Holm's family is every row of this
  // history whose runs both kept repetitions.
  std::vector<std::size_t> judged;
  std::vector<JudgedPair> judged_pairs;
  for (std::size_t i = 0; i < h.rows.size(); ++i)
    if (const auto& r = h.rows[i]; r.base) {
      judged.push_back(i);
      judged_pairs.push_back({.base = r.runs[*r.base].m,
                              .now = r.runs.back().m,
                              .base_ms = std::move(repeated[i].base_ms),
                              .now_ms = std::move(repeated[i].now_ms),
                              .own_noise = own_noise(r),
                              .base_runs = std::move(repeated[i].base_runs),
                              .now_runs = std::move(repeated[i].now_runs)});
    }
  // The noise of the pairs judged too, as compare.py measures it on its two
  // runs, per latest run (a row's latest is the newest run that has it) of
  // min_group rows or more: where the machine was slower for a whole run,
  // its rows moved together, each by its own amount, and the earlier runs'
  // quiet alone would call most of them changed.
  std::map<std::size_t, std::vector<std::pair<double, double>>> by_latest;
  for (const std::size_t i : judged) {
    const HistoryRow& r = h.rows[i];
    const Measure &base = r.runs[*r.base].m, &latest = r.runs.back().m;
    if (base.check == "PASS" && latest.check == "PASS" && base.ms && latest.ms)
      by_latest[r.runs.back().run].emplace_back(*base.ms, *latest.ms);
  }
  std::map<std::size_t, Noise> latest_noise;
  for (const auto& [run, latest_pairs] : by_latest)
    if (static_cast<int>(latest_pairs.size()) >= min_group)
      latest_noise.emplace(run, Noise(latest_pairs, o.min_noise));
  for (std::size_t k = 0; k < judged.size(); ++k) {
    const HistoryRow& r = h.rows[judged[k]];
    const auto it = latest_noise.find(r.runs.back().run);
    if (it != latest_noise.end() && r.runs[*r.base].m.ms)
      judged_pairs[k].run_noise = it->second.sigma(*r.runs[*r.base].m.ms);
  }
  // The header's: that of the run latest for the most rows.
  if (const auto most = std::max_element(latest_noise.begin(), latest_noise.end(),
                                         [](const auto& a, const auto& b) {
                                           return a.second.count() < b.second.count();
                                         });
      most != latest_noise.end()) {
    const Noise& n = most->second;
    h.latest_noise_pooled = n.pooled();
    h.latest_noise_pairs = n.count();
    h.latest_noise_by_decade = n.by_decade();
  }
  const auto judgements = judge_pairs(judged_pairs, noise, o.alpha, o.tolerance, o.sigmas);
  for (std::size_t k = 0; k < judged.size(); ++k) {
    judge(h, h.rows[judged[k]], judgements[k], o);
    h.tested += judgements[k].p.has_value();
  }
  // Regressions first; the list of them the largest change first (a broken
  // row, without one, before all).
  std::stable_partition(h.rows.begin(), h.rows.end(),
                        [](const HistoryRow& r) { return r.regression; });
  for (std::size_t i = 0; i < h.rows.size() && h.rows[i].regression; ++i)
    h.regressions.push_back(i);
  std::stable_sort(h.regressions.begin(), h.regressions.end(), [&](std::size_t a, std::size_t b) {
    const auto change = [&](std::size_t i) { return h.rows[i].change.value_or(1e300); };
    return change(a) > change(b);
  });
  return h;
}

void write_history_json(const History& h, std::ostream& to) {
  Buffer out;
  // Written as it is made, a block at a time.
  const auto flush = [&] {
    to.write(out.data(), static_cast<std::streamsize>(out.size()));
    out.clear();
  };
  // Each run's started_at and portalab version, escaped once.
  std::vector<std::string> run_text;
  run_text.reserve(h.runs.size());
  for (const auto& r : h.runs) {
    Buffer b;
    put(b, "\"started_at\": ");
    put_string(b, r.started_at);
    put(b, ", \"portalab\": ");
    put_string(b, r.values[0]);
    put(b, ",");
    run_text.emplace_back(b.data(), b.size());
  }
  fmt::format_to(std::back_inserter(out),
                 "{{\"phase\": \"{}\", \"last\": {}, \"threshold_pct\": {}, \"sigmas\": {},\n"
                 "\"alpha\": {}, \"tolerance\": {}, \"tested\": {},\n"
                 "\"noise\": {{\"pooled\": {}, \"pairs\": {}, \"floor\": {}, \"by_decade_ms\": {{",
                 h.phase, h.last, h.threshold_pct, h.sigmas, h.alpha, h.tolerance, h.tested,
                 h.noise_pooled, h.noise_pairs, h.noise_floor);
  const auto put_decades = [&](const std::map<int, double>& by_decade) {
    bool first = true;
    for (const auto& [d, s] : by_decade) {
      fmt::format_to(std::back_inserter(out), "{}\"{:g}\": {}", first ? "" : ", ",
                     std::pow(10.0, d), s);
      first = false;
    }
    put(out, "}");
  };
  put_decades(h.noise_by_decade);
  fmt::format_to(std::back_inserter(out),
                 ", \"latest\": {{\"pooled\": {}, \"pairs\": {}, \"by_decade_ms\": {{",
                 h.latest_noise_pooled, h.latest_noise_pairs);
  put_decades(h.latest_noise_by_decade);
  put(out, "}},\n\"rows\": [");
  for (std::size_t i = 0; i < h.rows.size(); ++i) {
    put(out, i ? ",\n" : "\n");
    put_row(out, h, h.rows[i], run_text);
    if (out.size() > (1 << 20)) flush();
  }
  put(out, "],\n\"regressions\": [");
  for (std::size_t i = 0; i < h.regressions.size(); ++i) {
    put(out, i ? ",\n" : "\n");
    put_row(out, h, h.rows[h.regressions[i]], run_text);
  }
  put(out, "]}\n");
  flush();
}

}  // namespace portalab::store
