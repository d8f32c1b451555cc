// Verdicts by a test (store/verdict.hpp): the Mann-Whitney U test on the
// repetitions of both runs, Holm's correction over the pairs compared
// together, and a tolerance on the change of the median.
#include "store/verdict.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace portalab::store {
namespace {

std::vector<double> around(double median, int n, double spread) {
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) xs.push_back(median * (1 + spread * ((i % 5) - 2) / 2.0 + 1e-6 * i));
  return xs;
}

RepeatedPair pair(std::vector<double> base, std::vector<double> now) {
  return {"PASS", "PASS", std::move(base), std::move(now)};
}

TEST(Verdict, ADoublingOfEveryRepetitionIsSlowerAndAHalvingFaster) {
  const auto v = verdicts_by_test({pair(around(1.0, 20, 0.05), around(2.0, 20, 0.05)),
                                   pair(around(2.0, 20, 0.05), around(1.0, 20, 0.05))});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].verdict, "slower");
  EXPECT_NEAR(*v[0].change, 1.0, 1e-3);
  EXPECT_EQ(v[1].verdict, "faster");
  // Both pairs apart alike: one p, which Holm doubles for two pairs.
  EXPECT_DOUBLE_EQ(*v[0].p, *v[1].p);
  EXPECT_LT(*v[0].p, 1e-6);
  EXPECT_DOUBLE_EQ(*v[0].p_adjusted, 2 * *v[0].p);
}

TEST(Verdict, AChangeWithinTheToleranceIsTheSameHoweverSignificant) {
  // 2% slower, every repetition: the test rejects, the tolerance (3%) holds.
  const auto v = verdicts_by_test({pair(around(1.0, 30, 0.001), around(1.02, 30, 0.001))});
  EXPECT_LT(*v[0].p_adjusted, default_alpha);
  EXPECT_EQ(v[0].verdict, "same");
  EXPECT_EQ(verdicts_by_test({pair(around(1.0, 30, 0.001), around(1.02, 30, 0.001))}, 0.01, 0.01)[0]
                .verdict,
            "slower");
}

TEST(Verdict, HolmCountsEveryPairComparedTogether) {
  // Six a side, every new one slower than every old one, 10% apart: the
  // exact two-sided p is 2 / C(12, 6) = 2/924, below 0.01 alone and above
  // it once five such pairs share the family (Holm: 5 x 2/924).
  const std::vector<double> base{1.0, 1.01, 1.02, 1.03, 1.04, 1.05};
  const std::vector<double> now{1.1, 1.11, 1.12, 1.13, 1.14, 1.15};
  const auto alone = verdicts_by_test({pair(base, now)});
  EXPECT_NEAR(*alone[0].p, 2.0 / 924.0, 1e-12);
  EXPECT_EQ(alone[0].verdict, "slower");
  const auto five = verdicts_by_test(std::vector<RepeatedPair>(5, pair(base, now)));
  for (const auto& v : five) {
    EXPECT_NEAR(*v.p_adjusted, 5 * 2.0 / 924.0, 1e-12);
    EXPECT_EQ(v.verdict, "same");
  }
}

TEST(Verdict, TheChangeMustAlsoExceedTheRunToRunNoise) {
  RepeatedPair doubled = pair(around(1.0, 20, 0.05), around(2.0, 20, 0.05));
  doubled.min_change = 0.5;  // a change of +100% exceeds it
  EXPECT_EQ(verdicts_by_test({doubled})[0].verdict, "slower");
  doubled.min_change = 1.5;  // two runs that differ by 150% anyway: no verdict
  EXPECT_EQ(verdicts_by_test({doubled})[0].verdict, "same");
}

// Two files whose entries moved unevenly (all slower, by 20% to 200%)
// spread far more than each side's own repeats: the noise between them is
// held to `ratio` times the repeats' (values made up, not measured).
TEST(Verdict, TheRunToRunNoiseIsHeldToTheSidesOwnRepeats) {
  std::vector<std::pair<double, double>> files, repeats;
  for (int i = 0; i < 16; ++i) files.emplace_back(1.0, 1.2 + 0.12 * i);
  for (int i = 0; i < 24; ++i) repeats.emplace_back(1.0, std::exp(i % 2 ? 0.02 : -0.02));
  const Noise within(repeats);
  EXPECT_NEAR(within.sigma(1.0), 1.4826 * 0.02, 1e-12);
  Noise noise(files);
  const double wide = noise.sigma(1.0);
  EXPECT_GT(wide, 3 * within.sigma(1.0));
  EXPECT_FALSE(noise.capped(1.0));
  noise.cap(within, 3.0);
  EXPECT_NEAR(noise.sigma(1.0), 3 * within.sigma(1.0), 1e-12);
  EXPECT_TRUE(noise.capped(1.0));
  // Files that differ by no more than that keep their own noise.
  Noise alike(repeats);
  alike.cap(within, 3.0);
  EXPECT_DOUBLE_EQ(alike.sigma(1.0), within.sigma(1.0));
  EXPECT_FALSE(alike.capped(1.0));
}

// Each side's runs spread about their own mean, pooled, as a deviation of
// the difference of the two sides' means (values made up, not measured).
TEST(Verdict, TheRunsOfEachSideMeasureTheEntrysOwnNoise) {
  // Logs {0, 0.2} and {0.5, 0.5, 0.5}: squares 0.02 over 1 + 2 degrees,
  // times 1/2 + 1/3.
  const auto sigma = runs_sigma({1.0, std::exp(0.2)}, std::vector<double>(3, std::exp(0.5)));
  ASSERT_TRUE(sigma);
  EXPECT_NEAR(*sigma, std::sqrt(0.02 / 3 * (1.0 / 2 + 1.0 / 3)), 1e-12);
  EXPECT_FALSE(runs_sigma({1.0}, {2.0}));  // one run a side: nothing to measure
  EXPECT_FALSE(runs_sigma({}, {}));
  EXPECT_FALSE(runs_sigma({1.0, 0.0, NAN}, {2.0}));  // no time, no run
  // One side run twice: its spread, and the other side's single run counts whole.
  EXPECT_NEAR(*runs_sigma({1.0, std::exp(0.2)}, {3.0}), std::sqrt(0.02 * (1.0 / 2 + 1.0)), 1e-12);
}

// Two runs a side: an entry whose runs differ by 25% on one side is no
// slower for the same 25% on the other; tripled, it is.
TEST(Verdict, AChangeWithinTheSpreadOfTheRunsIsTheSame) {
  auto judged = [](double base_second, double now) {
    JudgedPair p;
    p.base.check = p.now.check = "PASS";
    p.base.ms = 1.0;
    for (const double run : {1.0, base_second}) {
      const auto reps = around(run, 20, 0.01);
      p.base_ms.insert(p.base_ms.end(), reps.begin(), reps.end());
      p.base_runs.push_back(run);
    }
    for (int i = 0; i < 2; ++i) {
      const auto reps = around(now, 20, 0.01);
      p.now_ms.insert(p.now_ms.end(), reps.begin(), reps.end());
      p.now_runs.push_back(now);
    }
    const Noise quiet({{1.0, 1.0}});  // the other entries did not move
    return judge_pairs({p}, quiet, default_alpha, default_tolerance, default_sigmas)[0];
  };
  const Judgement within = judged(1.25, 1.25);
  EXPECT_EQ(within.verdict, "same");
  EXPECT_GT(within.min_change, 0.25);
  EXPECT_EQ(judged(1.25, 3.0).verdict, "slower");
  // The base's runs alike: the change past the tolerance is found.
  EXPECT_EQ(judged(1.0, 1.25).verdict, "slower");
}

// Files without repetitions (the older rule), two runs a side: the change
// is held to the runs' spread there too.
TEST(Verdict, TheOlderRuleHoldsAChangeToTheRunsSpread) {
  const Noise quiet({{1.0, 1.0}});
  auto judged = [&](std::vector<double> base_runs) {
    JudgedPair p;
    p.base = {"PASS", 1.0, 0.99, 1.01, {}, 20};
    p.now = {"PASS", 1.2, 1.19, 1.21, {}, 20};
    p.base_runs = std::move(base_runs);
    p.now_runs = {1.2, 1.2};
    return judge_pairs({p}, quiet, default_alpha, default_tolerance, default_sigmas)[0];
  };
  const Judgement alike = judged({1.0, 1.0});
  EXPECT_EQ(alike.rule, "spread");
  EXPECT_EQ(alike.verdict, "slower");
  const Judgement apart = judged({0.9, 1.1});  // as far apart as the change
  EXPECT_EQ(apart.verdict, "same");
  EXPECT_NEAR(*apart.noise, *runs_sigma({0.9, 1.1}, {1.2, 1.2}), 1e-12);
}

// One run a side, a history behind it: the change must also exceed
// `sigmas` times the entry's own noise and the noise of the run it is in,
// whichever is the larger, however sure the test.
TEST(Verdict, OwnAndRunNoiseRaiseTheChangeNeeded) {
  const Noise quiet({{1.0, 1.0}});
  auto judged = [&](std::optional<double> own, std::optional<double> run) {
    JudgedPair p;
    p.base.check = p.now.check = "PASS";
    p.base.ms = 1.0;
    p.base_ms = around(1.0, 20, 0.01);
    p.now_ms = around(1.3, 20, 0.01);
    p.own_noise = own;
    p.run_noise = run;
    return judge_pairs({p}, quiet, default_alpha, default_tolerance, default_sigmas)[0];
  };
  const Judgement alone = judged(std::nullopt, std::nullopt);
  EXPECT_EQ(alone.verdict, "slower");
  EXPECT_NEAR(alone.min_change, std::expm1(default_sigmas * default_min_noise), 1e-12);
  for (const auto& [own, run] : {std::pair<std::optional<double>, std::optional<double>>{0.1, {}},
                                 {{}, 0.1},
                                 {0.02, 0.1},
                                 {0.1, 0.02}}) {
    const Judgement j = judged(own, run);
    EXPECT_EQ(j.verdict, "same");
    EXPECT_NEAR(j.min_change, std::expm1(default_sigmas * 0.1), 1e-12);
    EXPECT_LT(*j.p_adjusted, default_alpha);
  }
}

TEST(Verdict, ChecksAndMissingRepetitionsAreSaidNotTested) {
  const auto v = verdicts_by_test({{"PASS", "FAIL", {1.0}, {1.0}},
                                   {"FAIL", "PASS", {1.0}, {1.0}},
                                   {"PASS", "PASS", {}, {1.0, 2.0}},
                                   {"PASS", "PASS", {1.0, NAN}, {1.0, 2.0}},
                                   // apart, but 2/C(6, 3) = 0.1 is the least p of 3 against 3
                                   {"PASS", "PASS", {1.0, 1.1, 1.2}, {2.0, 2.1, 2.2}}});
  EXPECT_EQ(v[0].verdict, "broken");
  EXPECT_EQ(v[1].verdict, "pass");
  EXPECT_EQ(v[2].verdict, "untested");
  EXPECT_EQ(v[3].verdict, "untested");
  EXPECT_EQ(v[4].verdict, "untested");
  for (const auto& x : v) EXPECT_FALSE(x.p);
}

}  // namespace
}  // namespace portalab::store
