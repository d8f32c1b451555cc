// The bandwidth ladder of a space: how fast its kernels move data at each
// working set, from the first level of cache to memory, and where each level
// ends. Calibration sweeps the working set of a read, a copy and a triad
// (calibrate.cpp); find_levels reads the levels from the curve's knees and
// cross-checks them with what the system reports. A row is then held to the
// level its working set lives in (compare.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// One working set of the sweep: the bytes a call touches (read + written,
// all its arrays together) and the fastest repetition of each kernel there.
struct SweepPoint {
  double bytes = 0.0;
  double read_gbps = 0.0, copy_gbps = 0.0, triad_gbps = 0.0;
  double best() const;  // the fastest of the three: the curve the knees are read from
};

// A cache the system reports, as the space's threads use it together: a
// private cache once per thread, a shared one once per group of CPUs sharing it.
struct ReportedCache {
  int level = 0;       // 1, 2, 3, ...; 0 a device's one cache (a GPU's L2)
  double bytes = 0.0;  // one cache
  int instances = 1;   // how many of it the space's threads use together
  std::string source;  // "sysfs", "sysconf", "cudaDeviceProp::l2CacheSize"
  double total() const { return bytes * instances; }
  std::string name() const;  // "L3", or "L2" for a device's
};

// A level of the ladder. Its plateau runs from first_bytes to end_bytes; the
// curve then falls to the next level, whose plateau starts at
// holds_up_to_bytes. Rows up to that working set are held to this level: a
// row in the fall is held to the faster level, so its share of its limit
// stays an upper bound.
struct Level {
  std::string name;                // "L1", "L2", "L3", "memory", "HBM"
  double first_bytes = 0.0;        // its first point
  double end_bytes = 0.0;          // the last point of its plateau: where it ends
  double holds_up_to_bytes = 0.0;  // 0: no end (the last level, memory)
  double read_gbps = 0.0, copy_gbps = 0.0, triad_gbps = 0.0;  // the fastest at its points
  double spread = 0.0;          // its plateau's slowest point below its fastest: 0.1 = 10%
  int points = 0;               // the sweep's points on its plateau
  double reported_bytes = 0.0;  // the reported cache its knee matches; 0: none
  std::string reported_source;
  double memory_gbps() const;  // the best of copy and triad
  // A read-only loop's limit: the best of the three, since the level served
  // the copy's and the triad's bytes as fast (the sweep's reduction is
  // latency-bound in a small cache: its rate is no roof there).
  double read_limit_gbps() const;
};

struct Ladder {
  int threads = 0;                      // the space's threads during the sweep
  std::vector<SweepPoint> points;       // in order of size
  std::vector<ReportedCache> reported;  // what the system says
  std::vector<Level> levels;            // fastest first; the last is memory (HBM on a device)
  std::vector<std::string> notes;       // where the curve and the system disagree, and why
  bool empty() const { return levels.empty(); }
  // The level a working set of `bytes` lives in: the first that holds it,
  // else the last; null when there are no levels.
  const Level* level_for(double bytes) const;
  bool is_last(const Level* l) const {
    return l != nullptr && !levels.empty() && l == &levels.back();
  }
};

// The levels of a sweep (points in order of size) from its knees: a plateau
// ends where the curve falls more than a fifth below the plateau's fastest
// point; the next starts where the fall levels off. A plateau spanning less
// than a factor of two of working set is part of a fall, and neighbouring
// plateaus within a fifth of each other are one. Each cache level is named
// after the reported cache whose size lies in its knee (within a factor of
// two either way), else by its order; the last level is `last_name`
// ("memory" or "HBM"). Every reported cache no knee matches, and every
// knee no reported cache matches, is said in the notes. Pure: no
// measurement, no system call.
Ladder find_levels(std::vector<SweepPoint> points, std::vector<ReportedCache> reported,
                   std::string_view last_name);

// The host's caches as sysfs (cpu0's, each with the CPUs sharing it) and
// sysconf report them, for a space of `threads` threads.
std::vector<ReportedCache> reported_host_caches(int threads);

nlohmann::json to_json(const Ladder& l);
// Throws nlohmann::json::exception where a field is missing (the caller names the file).
Ladder ladder_from_json(const nlohmann::json& j);
// The limits table's lines of a space's ladder: its levels and notes.
std::string format_ladder(std::string_view space, const Ladder& l);

}  // namespace portalab
