// Verdicts by a test (store/verdict.hpp): the Mann-Whitney U test on the
// repetitions of both runs, Holm's correction over the pairs compared
// together, and a tolerance on the change of the median.
#include "store/verdict.hpp"

#include <gtest/gtest.h>

#include <cmath>
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
