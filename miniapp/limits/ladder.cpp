#include "limits/ladder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

namespace portalab {

double SweepPoint::best() const { return std::max({read_gbps, copy_gbps, triad_gbps}); }

std::string ReportedCache::name() const { return fmt::format("L{}", level == 0 ? 2 : level); }

double Level::memory_gbps() const { return std::max(copy_gbps, triad_gbps); }
double Level::read_limit_gbps() const { return std::max(read_gbps, memory_gbps()); }

const Level* Ladder::level_for(double bytes) const {
  if (levels.empty()) return nullptr;
  for (std::size_t i = 0; i + 1 < levels.size(); ++i)
    if (bytes <= levels[i].holds_up_to_bytes) return &levels[i];
  return &levels.back();
}

namespace {

// A point more than this below its plateau's fastest has left the level; two
// plateaus within it of each other are one level.
constexpr double fall = 0.2;
// A plateau spanning less than this factor of working set is part of a fall.
constexpr double least_span = 1.99;

std::string mb(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.3g} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.3g} MB", bytes / 1e6);
  return fmt::format("{:.3g} kB", bytes / 1e3);
}

// Runs of points: [first, end] a plateau, next the first point of the run after.
struct Run {
  std::size_t first, end, next;
  double top;
};

// Whether the curve has levelled off at point k: it is within a tenth of
// the median of the points over the next doubling of the working set (a
// median: one slow point is not the curve).
bool levelled(const std::vector<SweepPoint>& p, const std::vector<double>& e, std::size_t k) {
  std::vector<double> next;
  for (std::size_t m = k + 1; m < p.size() && p[m].bytes <= 2 * p[k].bytes; ++m)
    next.push_back(e[m]);
  if (next.empty()) return true;
  std::sort(next.begin(), next.end());
  const std::size_t h = next.size() / 2;
  const double median = next.size() % 2 ? next[h] : (next[h - 1] + next[h]) / 2;
  return e[k] <= 1.1 * median;
}

std::vector<Run> plateaus(const std::vector<SweepPoint>& p, const std::vector<double>& e) {
  std::vector<Run> runs;
  const std::size_t n = e.size();
  std::size_t i = 0;
  while (i < n) {
    double top = e[i];
    std::size_t j = i;
    while (j + 1 < n && e[j + 1] >= (1 - fall) * top) top = std::max(top, e[++j]);
    // The plateau ends at its last point within a tenth of its fastest (the
    // points after, still within a fifth, begin the fall).
    std::size_t end = j;
    while (end > i && e[end] < 0.9 * top) --end;
    // The fall: on until the curve levels off.
    std::size_t k = j + 1;
    while (k + 1 < n && !levelled(p, e, k)) ++k;
    runs.push_back({i, end, std::min(k, n), top});
    i = k;
  }
  return runs;
}

}  // namespace

Ladder find_levels(std::vector<SweepPoint> points, std::vector<ReportedCache> reported,
                   std::string_view last_name) {
  std::sort(points.begin(), points.end(),
            [](const SweepPoint& a, const SweepPoint& b) { return a.bytes < b.bytes; });
  Ladder l;
  l.points = points;
  l.reported = reported;
  if (points.empty()) return l;
  std::vector<double> e;
  for (const auto& p : points) e.push_back(p.best());
  std::vector<Run> runs = plateaus(points, e);
  // Short plateaus are points of a fall: of the level before (the first
  // level's, of the level after).
  std::vector<Run> kept;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const bool last = r + 1 == runs.size();
    if (last || points[runs[r].end].bytes >= least_span * points[runs[r].first].bytes) {
      if (!kept.empty()) kept.back().next = runs[r].first;
      kept.push_back(runs[r]);
    } else if (!kept.empty()) {
      kept.back().next = runs[r].next;
    } else if (r + 1 < runs.size()) {
      runs[r + 1].first = runs[r].first;  // the first level starts at the first point
    }
  }
  // A level within a fifth of the one before is the same level (a dip).
  std::vector<Run> levels;
  for (const auto& r : kept) {
    if (!levels.empty() && r.top >= (1 - fall) * levels.back().top) {
      levels.back().end = r.end;
      levels.back().next = r.next;
      levels.back().top = std::max(levels.back().top, r.top);
    } else {
      levels.push_back(r);
    }
  }
  // One reported size per level: sysfs before sysconf (it knows which CPUs
  // share a cache); the sources' disagreements are said.
  std::map<int, ReportedCache> by_level;
  for (const auto& c : reported) {
    if (c.bytes <= 0) continue;
    const auto [it, added] = by_level.try_emplace(c.level, c);
    if (!added && std::abs(it->second.total() - c.total()) > 0.01 * it->second.total())
      l.notes.push_back(fmt::format("{} reports an {} of {} in all, {} {}", it->second.source,
                                    c.name(), mb(it->second.total()), c.source, mb(c.total())));
  }
  std::map<int, bool> matched;
  int last_level = 0;
  for (std::size_t k = 0; k < levels.size(); ++k) {
    const Run& r = levels[k];
    const bool last = k + 1 == levels.size();
    Level v;
    v.first_bytes = points[r.first].bytes;
    v.end_bytes = points[r.end].bytes;
    v.points = static_cast<int>(r.end - r.first + 1);
    // Rows up to the next level's first point are held to this one.
    const std::size_t to = last ? points.size() - 1 : r.next;
    v.holds_up_to_bytes = last ? 0.0 : points[to].bytes;
    for (std::size_t i = r.first; i <= to; ++i) {
      v.read_gbps = std::max(v.read_gbps, points[i].read_gbps);
      v.copy_gbps = std::max(v.copy_gbps, points[i].copy_gbps);
      v.triad_gbps = std::max(v.triad_gbps, points[i].triad_gbps);
    }
    // The spread of the plateau from its fastest point on (the points before
    // it rise with the working set: a call's fixed cost, not the level).
    const auto peak = std::max_element(e.begin() + r.first, e.begin() + r.end + 1);
    v.spread = 1.0 - *std::min_element(peak, e.begin() + r.end + 1) / *peak;
    if (last) {
      v.name = std::string(last_name);
    } else {
      // The reported cache in this knee: between half the plateau's end and
      // twice the next level's first point (the sweep's steps); of several,
      // the nearest the plateau's end.
      const ReportedCache* match = nullptr;
      auto off = [&](const ReportedCache& c) {
        return std::abs(std::log(c.total() / v.end_bytes));
      };
      for (const auto& [level, c] : by_level)
        if (c.total() >= v.end_bytes / 2 && c.total() <= 2 * v.holds_up_to_bytes &&
            c.level > last_level && !matched[level] && (!match || off(c) < off(*match)))
          match = &c;
      if (match) {
        matched[match->level] = true;
        last_level = std::max(match->level, 1);
        v.name = match->name();
        v.reported_bytes = match->total();
        v.reported_source = match->source;
      } else {
        ++last_level;
        v.name = fmt::format("L{}", last_level);
        l.notes.push_back(fmt::format(
            "a knee from {} to {} ({}, {:.1f} -> {:.1f} GB/s) where no cache is reported: named "
            "by its order",
            mb(v.end_bytes), mb(v.holds_up_to_bytes), v.name, e[r.end], e[r.next]));
      }
    }
    l.levels.push_back(std::move(v));
  }
  const Level& memory = l.levels.back();
  const double largest = points.back().bytes;
  for (const auto& [level, c] : by_level) {
    if (matched[level]) continue;
    std::string why;
    if (c.total() > largest / 2)
      why = fmt::format(
          "the sweep's largest working set, {}, is not well beyond it: {} there may still be "
          "this cache's",
          mb(largest), memory.name);
    else if (c.total() >= memory.first_bytes && l.levels.size() > 1)
      why = fmt::format(
          "the curve levels off at {}'s {:.1f} GB/s from {} on: rows beyond {} are "
          "held to {}, not to this cache",
          memory.name, e[levels.back().first], mb(memory.first_bytes),
          mb(l.levels[l.levels.size() - 2].holds_up_to_bytes), memory.name);
    else
      why = "the curve has no knee near it: its bandwidth is not told apart from its neighbours'";
    l.notes.push_back(fmt::format(
        "{} reports an {} of {}{}; {}", c.source, c.name(), mb(c.bytes),
        c.instances > 1 ? fmt::format(" ({} for the space's threads)", mb(c.total())) : "", why));
  }
  if (l.levels.size() == 1)
    l.notes.push_back(fmt::format("no knee from {} to {}: every row is held to one level",
                                  mb(points.front().bytes), mb(largest)));
  else if (memory.points < 2)
    l.notes.push_back(fmt::format(
        "the curve had not levelled off at the sweep's largest working set, {}: {} there may "
        "still be partly a cache's",
        mb(largest), memory.name));
  return l;
}

namespace {

int cpus_in(const std::string& list) {  // "0-3,8" -> 5
  int count = 0;
  std::stringstream in(list);
  std::string part;
  while (std::getline(in, part, ',')) {
    int a = 0, b = 0;
    const auto dash = part.find('-');
    try {
      a = std::stoi(part.substr(0, dash));
      b = dash == std::string::npos ? a : std::stoi(part.substr(dash + 1));
    } catch (const std::exception&) {
      continue;
    }
    count += b - a + 1;
  }
  return std::max(count, 1);
}

}  // namespace

std::vector<ReportedCache> reported_host_caches(int threads) {
  threads = std::max(threads, 1);
  std::vector<ReportedCache> out;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_in(dir + "level"), type_in(dir + "type"), size_in(dir + "size"),
        shared_in(dir + "shared_cpu_list");
    int level = 0;
    std::string type, shared;
    double value = 0;
    char unit = 0;
    if (!(level_in >> level) || !(type_in >> type) || !(size_in >> value)) continue;
    if (type == "Instruction") continue;
    size_in >> unit;
    const double scale = unit == 'K'   ? 1024.0
                         : unit == 'M' ? 1048576.0
                         : unit == 'G' ? 1073741824.0
                                       : 1.0;
    std::getline(shared_in, shared);
    const int sharing = cpus_in(shared);
    out.push_back({level, value * scale, (threads + sharing - 1) / sharing, "sysfs"});
  }
  // sysconf does not say which CPUs share a cache: L1 and L2 taken as a
  // thread's own, the others as shared.
  const std::pair<int, int> names[] = {{1, _SC_LEVEL1_DCACHE_SIZE},
                                       {2, _SC_LEVEL2_CACHE_SIZE},
                                       {3, _SC_LEVEL3_CACHE_SIZE},
                                       {4, _SC_LEVEL4_CACHE_SIZE}};
  for (const auto& [level, name] : names) {
    const long value = sysconf(name);
    if (value > 0)
      out.push_back({level, static_cast<double>(value), level <= 2 ? threads : 1, "sysconf"});
  }
  return out;
}

namespace {
std::uint64_t whole(double bytes) { return static_cast<std::uint64_t>(std::llround(bytes)); }
}  // namespace

nlohmann::json to_json(const Ladder& l) {
  nlohmann::json levels = nlohmann::json::array(), points = nlohmann::json::array(),
                 reported = nlohmann::json::array();
  for (const auto& v : l.levels)
    levels.push_back(
        {{"name", v.name},
         {"first_bytes", whole(v.first_bytes)},
         {"end_bytes", whole(v.end_bytes)},
         {"holds_up_to_bytes", v.holds_up_to_bytes > 0 ? nlohmann::json(whole(v.holds_up_to_bytes))
                                                       : nlohmann::json(nullptr)},
         {"read_gbps", v.read_gbps},
         {"copy_gbps", v.copy_gbps},
         {"triad_gbps", v.triad_gbps},
         {"memory_gbps", v.memory_gbps()},
         {"read_limit_gbps", v.read_limit_gbps()},
         {"spread", v.spread},
         {"points", v.points},
         {"reported_bytes", whole(v.reported_bytes)},
         {"reported_source", v.reported_source}});
  for (const auto& p : l.points)
    points.push_back({{"bytes", whole(p.bytes)},
                      {"read_gbps", p.read_gbps},
                      {"copy_gbps", p.copy_gbps},
                      {"triad_gbps", p.triad_gbps}});
  for (const auto& c : l.reported)
    reported.push_back({{"level", c.level},
                        {"bytes", whole(c.bytes)},
                        {"instances", c.instances},
                        {"source", c.source}});
  return {{"threads", l.threads},
          {"levels", levels},
          {"notes", l.notes},
          {"reported", reported},
          {"points", points}};
}

Ladder ladder_from_json(const nlohmann::json& j) {
  Ladder l;
  l.threads = j.at("threads").get<int>();
  for (const auto& v : j.at("levels")) {
    Level one;
    one.name = v.at("name").get<std::string>();
    one.first_bytes = v.at("first_bytes").get<double>();
    one.end_bytes = v.at("end_bytes").get<double>();
    const auto& up_to = v.at("holds_up_to_bytes");
    one.holds_up_to_bytes = up_to.is_null() ? 0.0 : up_to.get<double>();
    one.read_gbps = v.at("read_gbps").get<double>();
    one.copy_gbps = v.at("copy_gbps").get<double>();
    one.triad_gbps = v.at("triad_gbps").get<double>();
    one.spread = v.at("spread").get<double>();
    one.points = v.at("points").get<int>();
    one.reported_bytes = v.at("reported_bytes").get<double>();
    one.reported_source = v.at("reported_source").get<std::string>();
    l.levels.push_back(std::move(one));
  }
  l.notes = j.at("notes").get<std::vector<std::string>>();
  for (const auto& c : j.at("reported"))
    l.reported.push_back({c.at("level").get<int>(), c.at("bytes").get<double>(),
                          c.at("instances").get<int>(), c.at("source").get<std::string>()});
  for (const auto& p : j.at("points"))
    l.points.push_back({p.at("bytes").get<double>(), p.at("read_gbps").get<double>(),
                        p.at("copy_gbps").get<double>(), p.at("triad_gbps").get<double>()});
  return l;
}

std::string format_ladder(std::string_view space, const Ladder& l) {
  if (l.empty()) return {};
  std::string out = fmt::format(
      "  {} levels ({} thread{}; {} working sets swept; GB/s, the fastest in each level):\n", space,
      l.threads, l.threads == 1 ? "" : "s", l.points.size());
  for (const auto& v : l.levels) {
    const std::string range = v.holds_up_to_bytes > 0
                                  ? fmt::format("ends at {} (rows up to {})", mb(v.end_bytes),
                                                mb(v.holds_up_to_bytes))
                                  : fmt::format("from {}", mb(v.first_bytes));
    const std::string reported = v.reported_bytes > 0
                                     ? fmt::format(", {} says {}", v.reported_source,
                                                   mb(v.reported_bytes))
                                     : "";
    out += fmt::format(
        "    {:<7} {:<36} read {:>7.1f}  copy {:>7.1f}  triad {:>7.1f}  spread "
        "{:.0f}%{}\n",
        v.name, range, v.read_gbps, v.copy_gbps, v.triad_gbps, 100 * v.spread, reported);
  }
  for (const auto& n : l.notes) out += fmt::format("    note: {}\n", n);
  return out;
}

}  // namespace portalab
