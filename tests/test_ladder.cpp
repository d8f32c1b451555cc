// The bandwidth ladder: levels read from the knees of synthetic curves
// (clean, noisy, finely or coarsely swept, with a reported cache size that is
// wrong), the level a working set picks at the boundaries, the file, and rows
// held to their level.
#include "limits/calibrate.hpp"
#include "limits/compare.hpp"
#include "limits/ladder.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using portalab::find_levels;
using portalab::ReportedCache;
using portalab::SweepPoint;

// A cache of `bytes` at `gbps`; beyond the last, memory.
struct Step {
  double bytes, gbps;
};

// The curve of a machine with these caches and `memory_gbps` beyond them:
// flat within a cache, falling over a factor of 4 after it (geometrically),
// read at 4 kB * 2^(i / per_octave) up to `largest`. `noise(i)` multiplies
// point i.
template <class Noise>
std::vector<SweepPoint> curve(const std::vector<Step>& caches, double memory_gbps, int per_octave,
                              double largest, Noise noise) {
  std::vector<SweepPoint> out;
  for (int i = 0;; ++i) {
    const double w = 4096.0 * std::pow(2.0, static_cast<double>(i) / per_octave);
    if (w > largest) break;
    double bw = memory_gbps;
    for (std::size_t c = 0; c < caches.size(); ++c) {
      const double next = c + 1 < caches.size() ? caches[c + 1].gbps : memory_gbps;
      if (w <= caches[c].bytes) {
        bw = caches[c].gbps;
        break;
      }
      if (w < 4 * caches[c].bytes) {
        const double t = std::log(w / caches[c].bytes) / std::log(4.0);
        bw = caches[c].gbps * std::pow(next / caches[c].gbps, t);
        break;
      }
    }
    bw *= noise(i);
    // The read a little faster than the triad, the copy slower.
    out.push_back({w, 1.1 * bw, 0.8 * bw, bw});
  }
  return out;
}
std::vector<SweepPoint> curve(const std::vector<Step>& caches, double memory_gbps, int per_octave,
                              double largest) {
  return curve(caches, memory_gbps, per_octave, largest, [](int) { return 1.0; });
}

const std::vector<Step> three_caches = {{64e3, 200}, {2e6, 100}, {32e6, 50}};
std::vector<ReportedCache> reported_right() {
  return {{1, 48 * 1024, 1, "sysfs"}, {2, 2 * 1048576, 1, "sysfs"}, {3, 32 * 1048576, 1, "sysfs"}};
}

std::vector<std::string> names(const portalab::Ladder& l) {
  std::vector<std::string> out;
  for (const auto& v : l.levels) out.push_back(v.name);
  return out;
}

bool says(const portalab::Ladder& l, const std::string& words) {
  for (const auto& n : l.notes)
    if (n.find(words) != std::string::npos) return true;
  return false;
}

TEST(Ladder, ThreeCachesAndMemoryFromACleanCurve) {
  for (int per_octave : {1, 2, 4}) {
    SCOPED_TRACE(per_octave);
    const auto l = find_levels(curve(three_caches, 15, per_octave, 1e9), reported_right(),
                               "memory");
    ASSERT_EQ(names(l), (std::vector<std::string>{"L1", "L2", "L3", "memory"}));
    // Each level's bandwidth: its plateau's, or up to a tenth above where
    // its first point is the tail of the fall before it.
    const double bw[] = {200, 100, 50, 15};
    for (int k = 0; k < 4; ++k) {
      EXPECT_GE(l.levels[k].triad_gbps, bw[k] * (1 - 1e-9));
      EXPECT_LE(l.levels[k].triad_gbps, 1.1 * bw[k]);
      EXPECT_NEAR(l.levels[k].read_gbps, 1.1 * l.levels[k].triad_gbps, 1e-9 * bw[k]);
      EXPECT_EQ(l.levels[k].memory_gbps(), l.levels[k].triad_gbps);  // triad over copy
    }
    // Each cache level ends at its cache (within a step of the sweep, or the
    // first tenth of the fall) and holds rows until the next level's
    // plateau, within 4x of it (and a step).
    const double end[] = {64e3, 2e6, 32e6};
    for (int k = 0; k < 3; ++k) {
      EXPECT_LE(l.levels[k].end_bytes, 1.25 * end[k]);
      EXPECT_GT(l.levels[k].end_bytes, end[k] / std::pow(2.0, 1.0 / per_octave) * 0.99);
      EXPECT_GT(l.levels[k].holds_up_to_bytes, end[k]);
      EXPECT_LE(l.levels[k].holds_up_to_bytes, 4.2 * end[k]);
      EXPECT_GT(l.levels[k].reported_bytes, 0);
      EXPECT_EQ(l.levels[k].reported_source, "sysfs");
    }
    EXPECT_EQ(l.levels[3].holds_up_to_bytes, 0);
    EXPECT_TRUE(l.notes.empty()) << l.notes.front();
  }
}

// A VM that reports its host's L3 (480 MB): the knee is where the curve
// says, the memory level begins beyond it, and the notes say so.
TEST(Ladder, AReportedCacheSizeThatIsWrongIsSaidAndNotFollowed) {
  auto reported = reported_right();
  reported.back() = {3, 480e6, 1, "sysconf"};
  const auto l = find_levels(curve(three_caches, 15, 2, 2e9), reported, "memory");
  ASSERT_EQ(names(l), (std::vector<std::string>{"L1", "L2", "L3", "memory"}));
  EXPECT_LE(l.levels[2].end_bytes, 1.25 * 32e6);
  EXPECT_EQ(l.levels[2].reported_bytes, 0);  // no reported cache in this knee
  EXPECT_LE(l.levels[3].first_bytes, 4.2 * 32e6);
  EXPECT_TRUE(says(l, "where no cache is reported")) << l.notes.size();
  EXPECT_TRUE(says(l, "sysconf reports an L3 of 480 MB")) << l.notes.size();
  EXPECT_TRUE(says(l, "held to memory, not to this cache"));
  // A row of 100 MB, in the VM's "L3", is held to memory.
  EXPECT_EQ(l.level_for(200e6)->name, "memory");
}

// Two sources disagree (sysconf 268 MB, sysfs 32 MB): said; sysfs names the knee.
TEST(Ladder, SourcesThatDisagreeAreSaid) {
  auto reported = reported_right();
  reported.push_back({3, 268e6, 1, "sysconf"});
  const auto l = find_levels(curve(three_caches, 15, 1, 1e9), reported, "memory");
  ASSERT_EQ(names(l), (std::vector<std::string>{"L1", "L2", "L3", "memory"}));
  EXPECT_EQ(l.levels[2].reported_source, "sysfs");
  EXPECT_TRUE(says(l, "sysfs reports an L3 of 33.6 MB in all, sysconf 268 MB"));
}

// A call's fixed cost: small working sets rise to the first level's speed;
// they belong to it, and its spread is from its fastest point on.
TEST(Ladder, TheRiseOfSmallWorkingSetsIsTheFirstLevels) {
  auto points = curve(three_caches, 15, 1, 1e9);
  for (auto& p : points)
    if (p.bytes < 32e3) {
      const double slow = p.bytes / 32e3;
      p.read_gbps *= slow, p.copy_gbps *= slow, p.triad_gbps *= slow;
    }
  const auto l = find_levels(points, reported_right(), "memory");
  ASSERT_EQ(names(l), (std::vector<std::string>{"L1", "L2", "L3", "memory"}));
  EXPECT_EQ(l.levels[0].first_bytes, 4096);
  EXPECT_NEAR(l.levels[0].triad_gbps, 200, 1e-9);
  EXPECT_LT(l.levels[0].spread, 0.1);  // the plateau: within a tenth
}

// Noise of 8% (every other point slower), and a dip of 30% at one point
// within L2: the same levels (the dip is not a level).
TEST(Ladder, NoiseAndADipMakeNoLevels) {
  for (int per_octave : {1, 2, 4}) {
    SCOPED_TRACE(per_octave);
    const auto points = curve(three_caches, 15, per_octave, 1e9, [&](int i) {
      if (i == 8 * per_octave) return 0.7;  // 1 MB: in L2
      return i % 2 ? 0.92 : 1.0;
    });
    const auto l = find_levels(points, reported_right(), "memory");
    EXPECT_EQ(names(l), (std::vector<std::string>{"L1", "L2", "L3", "memory"}));
    EXPECT_NEAR(l.levels[1].spread, 0.3, 1e-9);
  }
}

// No reported caches (a device that says nothing): levels named by order.
TEST(Ladder, WithoutReportedCachesLevelsAreNamedByOrder) {
  const auto l = find_levels(curve({{40e6, 7000}}, 3000, 2, 4e9), {}, "HBM");
  ASSERT_EQ(names(l), (std::vector<std::string>{"L1", "HBM"}));
  // A GPU's L2, as cudaDeviceProp reports it, names it.
  const auto gpu = find_levels(curve({{40e6, 7000}}, 3000, 2, 4e9),
                               {{2, 50e6, 1, "cudaDeviceProp::l2CacheSize"}}, "HBM");
  ASSERT_EQ(names(gpu), (std::vector<std::string>{"L2", "HBM"}));
  EXPECT_GE(gpu.levels[1].triad_gbps, 3000 * (1 - 1e-9));
  EXPECT_LE(gpu.levels[1].triad_gbps, 3300);
}

TEST(Ladder, AFlatCurveOrOneThatDidNotLevelOffIsSaid) {
  const auto flat = find_levels(curve({}, 20, 1, 1e8), reported_right(), "memory");
  ASSERT_EQ(names(flat), (std::vector<std::string>{"memory"}));
  EXPECT_TRUE(says(flat, "no knee"));
  // The sweep ends in L3 ...
  const auto short_sweep = find_levels(curve(three_caches, 15, 1, 64e6), reported_right(),
                                       "memory");
  EXPECT_TRUE(says(short_sweep, "is not well beyond it")) << short_sweep.notes.size();
  // ... or ends in a fall.
  const auto falling = find_levels(curve(three_caches, 15, 2, 80e6), reported_right(), "memory");
  EXPECT_TRUE(says(falling, "had not levelled off")) << falling.notes.size();
}

TEST(Ladder, TheLevelOfAWorkingSetAtTheBoundaries) {
  const auto l = find_levels(curve(three_caches, 15, 1, 1e9), reported_right(), "memory");
  ASSERT_EQ(l.levels.size(), 4u);
  EXPECT_EQ(l.level_for(0)->name, "L1");
  EXPECT_EQ(l.level_for(100)->name, "L1");  // below the sweep's first point
  for (std::size_t k = 0; k + 1 < l.levels.size(); ++k) {
    const double edge = l.levels[k].holds_up_to_bytes;
    EXPECT_EQ(l.level_for(edge), &l.levels[k]);  // the faster level holds its edge
    EXPECT_EQ(l.level_for(edge * 1.0001), &l.levels[k + 1]);
    EXPECT_EQ(l.level_for(l.levels[k].end_bytes), &l.levels[k]);
  }
  EXPECT_EQ(l.level_for(1e15)->name, "memory");
  EXPECT_TRUE(l.is_last(l.level_for(1e15)));
  EXPECT_EQ(portalab::Ladder{}.level_for(1e6), nullptr);
}

TEST(Ladder, FileReadsBackTheSame) {
  auto l = find_levels(curve(three_caches, 15, 1, 1e9), reported_right(), "memory");
  l.threads = 2;
  const auto j = portalab::to_json(l);
  const auto back = portalab::ladder_from_json(j);
  EXPECT_EQ(portalab::to_json(back), j);
  EXPECT_TRUE(j["levels"].back()["holds_up_to_bytes"].is_null());
  EXPECT_NE(portalab::format_ladder("OpenMP", l).find("L3"), std::string::npos);
}

// Rows against a space with a ladder: each held to its level, named; above
// 105% flagged with a reason; a level whose roof is above the gemm rate at
// the row's intensity holds it to the gemm rate. Without a ladder (an older
// file), rows are held to memory and name no level.
portalab::SpaceLimits space_with_ladder() {
  portalab::SpaceLimits s;
  s.space = "Serial";
  s.copy_kernel_gbps = s.copy_deep_copy_gbps = s.triad_gbps = 15;
  s.read_gbps = 16.5;
  s.gemm_gflops["float64"] = 100;
  s.ladder = find_levels(curve(three_caches, 15, 1, 1e9), reported_right(), "memory");
  s.raise_memory_level();
  return s;
}

portalab::Result row(double bytes, double gbps, double flops = 0) {
  portalab::Result r;
  r.space = "Serial";
  r.dtype = "float64";
  r.status = portalab::Status::pass;
  r.bytes = bytes;
  r.gbps = gbps;
  r.flops = flops;
  r.gflops = flops > 0 ? gbps * flops / bytes : 0;
  return r;
}

TEST(Ladder, RowsAreHeldToTheirLevel) {
  const auto s = space_with_ladder();
  portalab::Calibration cal;
  cal.spaces.push_back(s);
  auto r = row(1e6, 90);  // in L2, of the made-up curve (not measured)
  portalab::compare_with_limits(r, s, cal, portalab::Bound::memory);
  EXPECT_EQ(r.limit.level, "L2");
  EXPECT_DOUBLE_EQ(r.limit.value, 100);
  EXPECT_DOUBLE_EQ(r.pct_of_limit, 0.9);
  EXPECT_TRUE(r.limit.suspect.empty());
  EXPECT_EQ(r.limit.text(), "L2 100 GB/s");
  EXPECT_EQ(r.limit.to_json()["level"], "L2");
  EXPECT_FALSE(r.limit.to_json().contains("suspect"));

  auto read = row(1e6, 90);
  portalab::compare_with_limits(read, s, cal, portalab::Bound::read);
  EXPECT_DOUBLE_EQ(read.limit.value, 110);
  EXPECT_EQ(read.limit.text(), "L2 read 110 GB/s");

  auto memory = row(1e9, 14);
  portalab::compare_with_limits(memory, s, cal, portalab::Bound::memory);
  EXPECT_EQ(memory.limit.level, "memory");
  EXPECT_TRUE(memory.limit.beyond_cache);
  EXPECT_DOUBLE_EQ(memory.limit.value, 15);

  auto fast = row(10e6, 80);  // in L3, above it (not measured)
  portalab::compare_with_limits(fast, s, cal, portalab::Bound::memory);
  EXPECT_EQ(fast.limit.level, "L3");
  EXPECT_NE(fast.limit.suspect.find("in L3"), std::string::npos) << fast.limit.suspect;
  EXPECT_EQ(fast.limit.to_json()["suspect"], fast.limit.suspect);

  auto edge = row(s.ladder.levels[2].holds_up_to_bytes, 52);  // 104% of L3
  portalab::compare_with_limits(edge, s, cal, portalab::Bound::memory);
  EXPECT_EQ(edge.limit.level, "L3");
  EXPECT_TRUE(edge.limit.suspect.empty());

  // 10 FLOPs a byte in L2: the L2 roof is above the gemm rate (not measured).
  auto dense = row(1e6, 9, 1e7);
  portalab::compare_with_limits(dense, s, cal, portalab::Bound::memory);
  EXPECT_EQ(dense.limit.bound, portalab::Bound::compute);
  EXPECT_EQ(dense.limit.level, "L2");
  EXPECT_DOUBLE_EQ(dense.pct_of_limit, 0.9);
  // Held again (after a recheck), from the bound it declared.
  portalab::hold_to_limits(dense, cal);
  EXPECT_EQ(dense.limit.bound, portalab::Bound::compute);
  EXPECT_EQ(dense.limit.declared, portalab::Bound::memory);

  // An older file: no ladder, memory, no level.
  auto old = s;
  old.ladder = {};
  auto r_old = row(1e6, 90);
  portalab::compare_with_limits(r_old, old, cal, portalab::Bound::memory);
  EXPECT_EQ(r_old.limit.level, "");
  EXPECT_DOUBLE_EQ(r_old.limit.value, 15);
  EXPECT_FALSE(r_old.limit.suspect.empty());  // 600%: still flagged, with why
  EXPECT_FALSE(r_old.limit.to_json().contains("level"));
}

// An unfused loop moves 100 MB a repetition over a 50 MB case (in L3 of the
// made-up curve), but its passes keep 1 MB in use at once: held to L2, where
// that megabyte runs (the H200 node's Serial vector_poly unfused at 1e5 was
// held to memory for its 4 MB, not the 2.4 MB its passes keep, and ran at
// 172% of it).
TEST(Ladder, APhaseOfPassesIsHeldToTheLevelOfWhatItKeepsInUse) {
  const auto s = space_with_ladder();
  portalab::Calibration cal;
  cal.spaces.push_back(s);
  auto all_at_once = row(100e6, 90);
  all_at_once.footprint = 50e6;
  portalab::compare_with_limits(all_at_once, s, cal, portalab::Bound::memory);
  EXPECT_EQ(all_at_once.limit.level, "L3");
  auto passes = all_at_once;
  passes.resident_bytes = 1e6;
  portalab::compare_with_limits(passes, s, cal, portalab::Bound::memory);
  EXPECT_EQ(passes.limit.level, "L2");
  EXPECT_DOUBLE_EQ(passes.pct_of_limit, 0.9);
  EXPECT_TRUE(passes.limit.suspect.empty());
}

// A sweep whose last level begins inside the last-level cache the system
// reports (one thread reads a large L3 no faster than memory: the H200
// node's Serial, 315 MB of L3, memory from 2.97 MB): a row within that
// cache is held to the last level, but not beyond the cache (no limits
// re-measured for it), and a row above that level says why.
TEST(Ladder, ARowWithinTheReportedCacheIsNotBeyondIt) {
  auto s = space_with_ladder();
  s.cache_bytes = 2'000'000'000;
  portalab::Calibration cal;
  cal.spaces.push_back(s);
  auto r = row(1e9, 20);  // above memory's 15 GB/s (not measured)
  portalab::compare_with_limits(r, s, cal, portalab::Bound::memory);
  EXPECT_EQ(r.limit.level, "memory");
  EXPECT_FALSE(r.limit.beyond_cache);
  EXPECT_NE(r.limit.suspect.find("within the 2e+03 MB last-level cache"), std::string::npos)
      << r.limit.suspect;
  s.cache_bytes = 100'000'000;
  auto beyond = row(1e9, 14);
  portalab::compare_with_limits(beyond, s, cal, portalab::Bound::memory);
  EXPECT_TRUE(beyond.limit.beyond_cache);
}

// A calibration file reads its ladder back; one written before the ladder
// (none in it) still reads, and its rows are held to memory.
TEST(Ladder, CalibrationFilesWithAndWithoutALadderRead) {
  portalab::Calibration cal;
  cal.mode = "quick";
  cal.spaces.push_back(space_with_ladder());
  auto j = portalab::to_json(cal);
  ASSERT_TRUE(j["spaces"][0].contains("ladder"));
  const auto back = portalab::calibration_from_json(j, "limits.json");
  EXPECT_EQ(portalab::to_json(back), j);
  j["spaces"][0].erase("ladder");
  const auto old = portalab::calibration_from_json(j, "old.json");
  EXPECT_TRUE(old.spaces[0].ladder.empty());
  EXPECT_FALSE(old.spaces[0].beyond_cache(1e6));
  auto r = row(1e6, 10);
  portalab::hold_to_limits(r, old);
  EXPECT_EQ(r.limit.level, "");
  EXPECT_DOUBLE_EQ(r.limit.value, 15);
}

}  // namespace
