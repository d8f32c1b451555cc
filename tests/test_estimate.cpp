// The time estimate of an entry from its declared work and the machine's
// limits, the deck's entries planned in the runner's order, and the time
// left that the progress lines show.
#include "limits/calibrate.hpp"
#include "deck/deck.hpp"
#include "engine/dry_run.hpp"
#include "engine/estimate.hpp"
#include "experiment/experiment.hpp"
#include "engine/runner.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

namespace portalab {
namespace {

// Round figures, so that each part of the estimate can be computed by hand.
SpaceLimits host_limits() {
  SpaceLimits s;
  s.space = "Serial";
  s.host = true;
  s.copy_kernel_gbps = 10;  // 10 GB/s: 1e7 bytes per ms (not measured)
  s.gemm_gflops = {{"float64", 50}, {"float32", 100}};
  s.launch_us = 2;
  return s;
}

SpaceLimits device_limits() {
  SpaceLimits s;
  s.space = "Device";
  s.host = false;
  s.triad_gbps = 1000;
  s.gemm_gflops = {{"float64", 50000}};
  s.launch_us = 5;
  s.transfers["h2d_pageable"] = {{1 << 20, 5}, {1 << 26, 10}};
  s.transfers["d2h_pageable"] = {{1 << 26, 20}};
  return s;
}

TEST(Estimate, AMemoryBoundKernelMovesItsBytesAtTheSpacesBandwidth) {
  EntryWork w;
  w.work = {1e9, 1e6, 0};  // 1 GB, a few FLOPs
  w.dtype = "float64";
  w.repetitions = 13;
  w.pays_setup = false;
  const auto e = estimate_entry(w, host_limits(), host_limits());
  EXPECT_DOUBLE_EQ(e.kernel_ms, 100.0 + 0.002);  // 1e9 / 1e7, plus one launch
  EXPECT_EQ(e.copies_ms, 0.0);
  EXPECT_DOUBLE_EQ(e.timed_ms, 13 * e.kernel_ms);
  EXPECT_EQ(e.setup_ms, 0.0);
  EXPECT_EQ(e.limited_by, "memory 10 GB/s");
  EXPECT_DOUBLE_EQ(e.total_ms, e.timed_ms + e.check_ms);
}

TEST(Estimate, AComputeBoundKernelRunsAtTheGemmRateOfItsType) {
  EntryWork w;
  w.work = {1e3, 1e9, 0};
  w.dtype = "float32";
  const auto e = estimate_entry(w, host_limits(), host_limits());
  EXPECT_DOUBLE_EQ(e.kernel_ms, 10.0 + 0.002);  // 1e9 FLOPs at 100 GFLOP/s (not measured)
  EXPECT_EQ(e.limited_by, "gemm 100 GFLOP/s");
  w.dtype = "int64";  // no gemm of its own: float64's rate
  EXPECT_DOUBLE_EQ(estimate_entry(w, host_limits(), host_limits()).kernel_ms, 20.0 + 0.002);
}

TEST(Estimate, LaunchesCostTheLaunchLatencyEach) {
  EntryWork w;
  w.work = {0, 0, 1000};
  EXPECT_DOUBLE_EQ(estimate_entry(w, host_limits(), host_limits()).kernel_ms, 2.0);
}

TEST(Estimate, AnUnsteadyLaunchLatencyCountsItsFastestRepetition) {
  EntryWork w;
  w.work = {0, 0, 1000};
  SpaceLimits busy = host_limits();
  busy.launch_us = 5000;  // the median of three, two of them stalled
  busy.unsteady = {{"launch_us", 2, 9000, 3}};
  EXPECT_DOUBLE_EQ(estimate_entry(w, busy, busy).kernel_ms, 2.0);
  busy.unsteady = {{"triad_gbps", 1, 2, 3}};  // another limit's: the median stands
  EXPECT_DOUBLE_EQ(estimate_entry(w, busy, busy).kernel_ms, 5000.0);
}

TEST(Estimate, CopiesMoveAtTheBestTransferRateOfTheirKind) {
  EntryWork w;
  w.work = {1e9, 0, 0};
  w.copies = CopyMode::pageable;
  w.h2d_bytes = 1e8;  // at 10 GB/s: 10 ms (inputs, not measured)
  w.d2h_bytes = 2e8;  // at 20 GB/s: 10 ms
  w.host_space = false;
  w.repetitions = 2;
  const auto e = estimate_entry(w, device_limits(), host_limits());
  EXPECT_DOUBLE_EQ(e.kernel_ms, 1.0 + 0.005);
  EXPECT_DOUBLE_EQ(e.copies_ms, 20.0 + 2 * 0.005);
  EXPECT_DOUBLE_EQ(e.timed_ms, 2 * (e.kernel_ms + e.copies_ms));
}

// Adaptive repetitions warm up for min_warmup_s at least: a short kernel's
// warm-ups take that long, a long kernel's their count.
TEST(Estimate, AdaptiveWarmupsTakeTheirLeastTime) {
  EntryWork w;
  w.work = {1e6, 0, 0};  // 0.1 ms at 10 GB/s, plus one launch (inputs, not measured)
  w.dtype = "float64";
  w.repetitions = 1 + 2 + 10;  // cold, warm-ups, reps
  w.warmups = 2;
  w.pays_setup = false;
  const double per = estimate_entry(w, host_limits(), host_limits()).kernel_ms;
  EXPECT_DOUBLE_EQ(estimate_entry(w, host_limits(), host_limits()).timed_ms, 13 * per);
  w.adaptive = AdaptiveReps{.min_reps = 10, .max_reps = 10, .min_warmup_s = 0.05, .passes = 1};
  EXPECT_DOUBLE_EQ(estimate_entry(w, host_limits(), host_limits()).timed_ms, 11 * per + 50.0);
  // Two passes: the same repetitions, a cold call and warm-ups each.
  w.adaptive->passes = 2;
  EXPECT_DOUBLE_EQ(estimate_entry(w, host_limits(), host_limits()).timed_ms, 12 * per + 100.0);
  w.adaptive->passes = 1;
  w.work = {1e9, 0, 0};  // 100 ms a call, not measured: two warm-ups outlast 50 ms
  const double longer = estimate_entry(w, host_limits(), host_limits()).kernel_ms;
  EXPECT_DOUBLE_EQ(estimate_entry(w, host_limits(), host_limits()).timed_ms, 13 * longer);
}

TEST(Estimate, SetupAndCheckGrowWithTheFootprintAndSetupIsPaidOnce) {
  EntryWork w;
  w.footprint_bytes = 1e9;
  const auto first = estimate_entry(w, host_limits(), host_limits());
  w.pays_setup = false;
  const auto next = estimate_entry(w, host_limits(), host_limits());
  EXPECT_GT(first.setup_ms, 0.0);
  EXPECT_EQ(next.setup_ms, 0.0);
  EXPECT_GT(next.check_ms, 0.0);
  EXPECT_DOUBLE_EQ(first.check_ms, next.check_ms);
  w.footprint_bytes = 2e9;
  EXPECT_DOUBLE_EQ(estimate_entry(w, host_limits(), host_limits()).check_ms, 2 * next.check_ms);
}

TEST(Estimate, LimitsNotMeasuredAddNothing) {
  EntryWork w;
  w.work = {1e9, 1e9, 10};
  w.footprint_bytes = 1e9;
  const SpaceLimits none;
  const auto e = estimate_entry(w, none, none);
  EXPECT_EQ(e.total_ms, 0.0);
}

TEST(TimeLeft, TheRemainingEstimatesScaledByMeasuredOverEstimated) {
  const std::vector<double> entries{10, 30, 100, 60};
  // Inputs, not measured. The first two, estimated 40 ms, took 80; the prior is a tenth of the
  // 200 ms estimated in all, so the other 160 estimated take 160·100/60.
  EXPECT_DOUBLE_EQ(time_left_ms(entries, 2, 80.0), 160.0 * (80.0 + 20.0) / (40.0 + 20.0));
  EXPECT_DOUBLE_EQ(time_left_ms(entries, 4, 500.0), 0.0);
  EXPECT_DOUBLE_EQ(time_left_ms(entries, 0, 0.0), 200.0);  // nothing measured yet
  // A tiny first entry far off its estimate moves the forecast, within reason.
  const std::vector<double> tiny_first{0.01, 1000};
  const double left = time_left_ms(tiny_first, 1, 50.0);
  EXPECT_GT(left, 1000.0);
  EXPECT_LT(left, 2000.0);
}

TEST(TimeLeft, EntriesNotRunOrNotEstimatedCountNothing) {
  PlannedEntry p;
  p.estimate = EntryEstimate{};
  p.estimate->total_ms = 10;
  PlannedEntry not_run = p;
  not_run.not_run = "not applicable: too few threads";
  const std::vector<double> entries{p.estimated_ms(), not_run.estimated_ms(), p.estimated_ms()};
  EXPECT_EQ(entries[1], 0.0);
  EXPECT_EQ(PlannedEntry{}.estimated_ms(), 0.0);  // no limits for its space
  EXPECT_DOUBLE_EQ(time_left_ms(entries, 1, 20.0), 10.0 * (20.0 + 2.0) / (10.0 + 2.0));
  const std::vector<double> unknown(4, 0.0);  // no limits at all: by entry count
  EXPECT_DOUBLE_EQ(time_left_ms(unknown, 1, 30.0), 90.0);
}

// In passes, no entry is done until its last pass: a first pass of every
// entry counts for half of each (inputs, not measured).
TEST(TimeLeft, APassCountsForItsShareOfEachEntry) {
  // Two entries of 100 ms estimated, each half done, in 60 ms: the other
  // 100 ms estimated take 100·(60 + 20)/(100 + 20) (inputs, not measured).
  EXPECT_DOUBLE_EQ(
      time_left_ms(
          WorkDone{.done = 1, .total = 2, .estimated_done_ms = 100, .estimated_total_ms = 200},
          60.0),
      100.0 * (60.0 + 20.0) / (100.0 + 20.0));
  // Nothing estimated: by the entries' shares, 1 of 2 in 30 ms (not measured).
  EXPECT_DOUBLE_EQ(time_left_ms(WorkDone{.done = 1, .total = 2}, 30.0), 30.0);
  EXPECT_DOUBLE_EQ(time_left_ms(WorkDone{.done = 0, .total = 2}, 30.0), 0.0);
}

TEST(TimeLeft, DurationsReadAsAPersonWouldSayThem) {
  EXPECT_EQ(format_duration(850), "850 ms");
  EXPECT_EQ(format_duration(12345), "12.3 s");
  EXPECT_EQ(format_duration(245000), "4 min 05 s");
  EXPECT_EQ(format_duration(3720000), "1 h 02 min");
}

namespace {
// OpenMP, or Threads where Kokkos has that in its place.
std::string parallel_host() { return Kokkos::DefaultHostExecutionSpace::name(); }
}  // namespace

// The plan lists the entries the runner measures, in its order.
TEST(Plan, EntriesComeInTheRunnersOrder) {
  const Deck deck = parse_deck(R"(
reps = 1
warmups = 0
calibrate = "none"
spaces = ["Serial", ")" + parallel_host() +
                                   R"("]
copies = ["pageable", "pinned", "none"]
[vector_poly]
sizes = [100, 200]
dtypes = ["float64", "float32"]
[stream_copy]
sizes = [300]
[concurrent_small]
sizes = [64]
copies = "none"
kernels = 2
degree = 2
)",
                               "order.toml", catalog());
  Calibration cal;
  cal.spaces = {host_limits()};
  cal.spaces[0].space = parallel_host();  // Serial has no limits: its entries are not estimated
  const auto entries = plan_entries(expand(deck, global_registry()), {&cal, /*ask_spaces=*/true});
  ASSERT_EQ(entries.size(), count_entries(deck));
  const auto summary = run_deck(deck, RunOptions{}, nlohmann::json::object());
  ASSERT_EQ(summary.results.size(), entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& r = summary.results[i];
    const auto& e = entries[i];
    const Entry& en = e.entry;
    EXPECT_EQ(std::tie(en.experiment->name, en.variant_name(), en.space, en.dtype, en.n),
              std::tie(r.experiment, r.variant, r.space, r.dtype, r.n))
        << i;
    EXPECT_EQ(en.copies, r.copies) << i;
    EXPECT_EQ(e.work.bytes, r.bytes) << i;
    EXPECT_EQ(e.not_run.empty(), r.status != Status::not_applicable) << i << e.not_run;
    EXPECT_EQ(e.estimate.has_value(), en.space == parallel_host()) << i;
  }
  const std::string text = format_plan(deck.path, entries);
  EXPECT_NE(text.find("estimated total:"), std::string::npos) << text;
  EXPECT_NE(text.find("no limits for Serial"), std::string::npos) << text;
}

// The Sink's progress lines carry the time elapsed and the time left: from
// the estimates with limits, from the entry count without.
TEST(Progress, EveryLineSaysElapsedAndLeft) {
  const Deck deck = parse_deck(R"(
reps = 1
warmups = 0
calibrate = "none"
spaces = ["Serial", ")" + parallel_host() +
                                   R"("]
[vector_poly]
sizes = [100]
)",
                               "progress.toml", catalog());
  Calibration cal;
  cal.spaces = {host_limits()};
  cal.spaces.push_back(host_limits());
  cal.spaces[1].space = parallel_host();
  for (Calibration* limits : std::initializer_list<Calibration*>{&cal, nullptr}) {
    std::ostringstream progress;
    RunOptions options;
    options.progress = &progress;
    options.limits = limits;
    const auto summary = run_deck(deck, options, nlohmann::json::object());
    const std::regex line(R"(\[(\d+)/(\d+)\] .* \[[0-9.]+ m?s elapsed, ~[0-9.]+ m?s left\])");
    std::istringstream lines(progress.str());
    std::size_t count = 0;
    for (std::string l; std::getline(lines, l);) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(l, m, line)) << l;
      EXPECT_EQ(std::stoul(m[1]), ++count);
      EXPECT_EQ(std::stoul(m[2]), summary.results.size());
    }
    EXPECT_EQ(count, summary.results.size()) << progress.str();
    // Nothing is left after the last entry.
    EXPECT_NE(progress.str().rfind("~0 ms left]\n"), std::string::npos) << progress.str();
  }
}

// In passes, adjacent experiments with one count of them run their passes
// together (runner.cpp): every first pass, then every last one with the
// rows; an experiment of another count (fixed reps) is a block of its own.
TEST(Progress, AdjacentExperimentsRunTheirPassesTogether) {
  const Deck deck = parse_deck(R"(
warmups = 0
min_warmup_s = 0
calibrate = "none"
spaces = ["Serial"]
copies = ["none"]
min_reps = 2
max_reps = 2
[vector_poly]
sizes = [100]
variants = ["fused"]
[stream_copy]
sizes = [100]
variants = ["kernel"]
[dot]
sizes = [100]
variants = ["native"]
reps = 1
)",
                               "passes.toml", catalog());
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  const auto summary = run_deck(deck, options, nlohmann::json::object());
  ASSERT_EQ(summary.results.size(), 3u);
  std::vector<std::string> said;
  std::istringstream lines(progress.str());
  for (std::string l; std::getline(lines, l);) said.push_back(l.substr(0, l.find(" [")));
  const std::vector<std::string> expected = {
      "vector_poly: pass 1 of 2 done; its rows come with the last",
      "stream_copy: pass 1 of 2 done; its rows come with the last"};
  ASSERT_GE(said.size(), 5u) << progress.str();
  EXPECT_EQ(std::vector(said.begin(), said.begin() + 2), expected) << progress.str();
  EXPECT_NE(said[2].find("vector_poly"), std::string::npos) << progress.str();
  EXPECT_NE(said[3].find("stream_copy"), std::string::npos) << progress.str();
  EXPECT_NE(said[4].find("dot"), std::string::npos) << progress.str();
  EXPECT_EQ(summary.results[0].pass_kernel_ms.size(), 2u);
  EXPECT_EQ(summary.results[1].pass_kernel_ms.size(), 2u);
  EXPECT_TRUE(summary.results[2].pass_kernel_ms.empty());
  EXPECT_NE(progress.str().rfind("~0 ms left]\n"), std::string::npos) << progress.str();
}

}  // namespace
}  // namespace portalab
