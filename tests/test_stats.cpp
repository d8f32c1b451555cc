// The statistics of support/stats: the median's interval against the ranks
// and coverages of scipy.stats.binom, the Mann-Whitney U test against
// scipy.stats.mannwhitneyu (SciPy 1.10.1) on each of its paths, and Holm's
// adjusted p-values worked by hand. Expected values are SciPy's output, not
// measured.
#include "support/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using portalab::stats::holm;
using portalab::stats::mann_whitney;
using portalab::stats::median_interval;
using portalab::stats::MedianInterval;
using portalab::stats::relative_halfwidth;

constexpr double inf = std::numeric_limits<double>::infinity();

// 1, 2, ..., n: the k-th order statistic is k.
std::vector<double> one_to(std::size_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 1.0);
  return v;
}

// mann_whitney(x, y) gives U, p (to a relative 1e-12) and takes the path
// SciPy takes.
void expect_u_test(const std::vector<double>& x, const std::vector<double>& y, double u, double p,
                   bool exact) {
  const auto t = mann_whitney(x, y);
  EXPECT_EQ(t.u, u);
  EXPECT_NEAR(t.p, p, 1e-12 * p);
  EXPECT_EQ(t.exact, exact);
}

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median_interval({5, 1, 3}).median, 3);
  EXPECT_EQ(median_interval({4, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(median_interval({7}).median, 7);
}

// l and coverage 1 - 2 binom.cdf(l-1, n, 0.5), l the largest with coverage
// >= 0.95, from scipy.stats.binom; x(l) = l and x(n+1-l) = n+1-l here.
TEST(Stats, MedianIntervalRanksMatchTheBinomial) {
  struct Case {
    std::size_t n, l;
    double coverage;
  };
  for (const Case& c :
       {Case{6, 1, 0.96875}, Case{10, 2, 0.978515625}, Case{20, 6, 0.9586105346679688},
        Case{100, 40, 0.9647997997822951}, Case{1000, 469, 0.9537088026395019},
        Case{100000, 49690, 0.9504442853304775}}) {
    const MedianInterval m = median_interval(one_to(c.n));
    EXPECT_TRUE(m.bounded) << c.n;
    EXPECT_EQ(m.low, c.l) << c.n;
    EXPECT_EQ(m.high, c.n + 1 - c.l) << c.n;
    EXPECT_NEAR(m.coverage, c.coverage, 1e-12) << c.n;
  }
  // At 0.99, n = 20: l = 4 (binom.cdf(3, 20, 0.5)).
  const MedianInterval m = median_interval(one_to(20), 0.99);
  EXPECT_EQ(m.low, 4);
  EXPECT_EQ(m.high, 17);
  EXPECT_NEAR(m.coverage, 0.9974231719970703, 1e-12);
  // At 0.3, n = 4: the middle two (l = 2), covering P(B = 2) = 0.375.
  const MedianInterval middle = median_interval(one_to(4), 0.3);
  EXPECT_EQ(middle.low, 2);
  EXPECT_EQ(middle.high, 3);
  EXPECT_DOUBLE_EQ(middle.coverage, 0.375);
}

// Five samples: min..max covers 1 - 2/32 < 0.95.
TEST(Stats, MedianIntervalUnboundedAtFiveSamples) {
  const MedianInterval m = median_interval({3, 9, 1, 4, 2});
  EXPECT_FALSE(m.bounded);
  EXPECT_EQ(m.low, 1);
  EXPECT_EQ(m.high, 9);
  EXPECT_EQ(m.median, 3);
  EXPECT_DOUBLE_EQ(m.coverage, 0.9375);
  EXPECT_EQ(relative_halfwidth(m), inf);
  // The same five at a lower confidence are bounded by min..max.
  EXPECT_TRUE(median_interval({3, 9, 1, 4, 2}, 0.9).bounded);
}

TEST(Stats, MedianIntervalOfShuffledEqualsSorted) {
  std::vector<double> samples;
  for (int i = 0; i < 57; ++i) samples.push_back(std::sqrt(3.0 + i) * (i % 5 + 1));
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  std::shuffle(samples.begin(), samples.end(), std::mt19937(57));
  const MedianInterval a = median_interval(samples), b = median_interval(sorted);
  EXPECT_EQ(a.median, b.median);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_EQ(a.coverage, b.coverage);
  EXPECT_LT(a.low, a.median);
  EXPECT_GT(a.high, a.median);
}

TEST(Stats, RelativeHalfwidthIsTheLargerSideOverTheMedian) {
  EXPECT_DOUBLE_EQ(relative_halfwidth({10, 9, 12, 0.96, true}), 0.2);
  EXPECT_DOUBLE_EQ(relative_halfwidth({10, 7, 11, 0.96, true}), 0.3);
  EXPECT_EQ(relative_halfwidth({10, 7, 11, 0.94, false}), inf);
  EXPECT_EQ(relative_halfwidth({0, -1, 1, 0.96, true}), inf);
  EXPECT_EQ(relative_halfwidth({-2, -3, -1, 0.96, true}), inf);
  // Six samples 1..6: l = 1, median 3.5, the larger side 2.5.
  EXPECT_DOUBLE_EQ(relative_halfwidth(median_interval(one_to(6))), 2.5 / 3.5);
}

TEST(Stats, MedianIntervalRefusesNoSamplesNanOrBadConfidence) {
  EXPECT_THROW(median_interval({}), std::invalid_argument);
  EXPECT_THROW(median_interval({1, std::nan(""), 3}), std::invalid_argument);
  EXPECT_THROW(median_interval({1, 2, 3}, 0), std::invalid_argument);
  EXPECT_THROW(median_interval({1, 2, 3}, 1), std::invalid_argument);
}

// mannwhitneyu([19, 22, 16, 29, 24], [20, 11, 17, 12]): SciPy's own example.
TEST(Stats, MannWhitneyExactWithoutTies) {
  expect_u_test({19, 22, 16, 29, 24}, {20, 11, 17, 12}, 17, 0.1111111111111111, true);
  expect_u_test({20, 11, 17, 12}, {19, 22, 16, 29, 24}, 3, 0.1111111111111111, true);
  // mannwhitneyu([1.0], [2.0])
  expect_u_test({1}, {2}, 0, 1.0, true);
}

// SciPy 1.10 takes the exact path unless both samples exceed 8 (its
// documentation says "less than 8"): x8 = [1.5, 3.5, 4.5, 8.5, 10.5, 12.5,
// 15.5, 19.5], y12 = range(1, 25, 2); mannwhitneyu(x8, y12),
// mannwhitneyu(y12, x8), mannwhitneyu(x8 + [20.5], y12).
TEST(Stats, MannWhitneyExactUpToEightValues) {
  std::vector<double> x8 = {1.5, 3.5, 4.5, 8.5, 10.5, 12.5, 15.5, 19.5}, y12;
  for (int v = 1; v < 25; v += 2) y12.push_back(v);
  expect_u_test(x8, y12, 38, 0.4726680955783123, true);
  expect_u_test(y12, x8, 58, 0.4726680955783123, true);
  x8.push_back(20.5);
  expect_u_test(x8, y12, 48, 0.695894823170777, false);
}

// mannwhitneyu([1, 2, 2, 3, 5], [2, 4, 4, 6, 7, 8]) and swapped.
TEST(Stats, MannWhitneyAsymptoticWithTies) {
  expect_u_test({1, 2, 2, 3, 5}, {2, 4, 4, 6, 7, 8}, 5, 0.07934368319771502, false);
  expect_u_test({2, 4, 4, 6, 7, 8}, {1, 2, 2, 3, 5}, 25, 0.07934368319771502, false);
}

// x = [(i * 37 % 101) / 10.0 for i in range(30)], y = [(i * 53 % 103) / 10.0
// + 1.0 for i in range(30)] (50 distinct values of 60); mannwhitneyu(x, y).
TEST(Stats, MannWhitneyThirtyAgainstThirty) {
  std::vector<double> x, y;
  for (int i = 0; i < 30; ++i) {
    x.push_back((i * 37 % 101) / 10.0);
    y.push_back((i * 53 % 103) / 10.0 + 1.0);
  }
  expect_u_test(x, y, 372, 0.25181493680888545, false);
  expect_u_test(y, x, 528, 0.25181493680888545, false);
}

// y200 = [float(i) for i in range(200)]; mannwhitneyu([120.5, 150.5, 170.5,
// 185.5, 199.5], y200); likewise 7 values against range(1000).
TEST(Stats, MannWhitneyExactAgainstALargeSample) {
  std::vector<double> y200(200), y1000(1000);
  std::iota(y200.begin(), y200.end(), 0.0);
  std::iota(y1000.begin(), y1000.end(), 0.0);
  expect_u_test({120.5, 150.5, 170.5, 185.5, 199.5}, y200, 829, 0.008872653530324055, true);
  expect_u_test({10.5, 100.5, 200.5, 250.5, 300.5, 330.5, 400.5}, y1000, 1597, 0.010807862293937999,
                true);
}

// mannwhitneyu([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]), ([3, 3, 3], [3, 3]) and
// ([2.0], [2.0]): U at its mean, p = 1.
TEST(Stats, MannWhitneyIdenticalSamplesGivePOne) {
  expect_u_test({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, 12.5, 1.0, false);
  expect_u_test({3, 3, 3}, {3, 3}, 3, 1.0, false);
  expect_u_test({2}, {2}, 0.5, 1.0, false);
}

TEST(Stats, MannWhitneyRefusesEmptyOrNan) {
  EXPECT_THROW(mann_whitney({}, {1, 2}), std::invalid_argument);
  EXPECT_THROW(mann_whitney({1, 2}, {}), std::invalid_argument);
  EXPECT_THROW(mann_whitney({1, std::nan("")}, {1, 2}), std::invalid_argument);
}

// Sorted: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 =
// 0.04 raised to 0.06 to stay monotone; returned in the input's order.
TEST(Stats, HolmHandWorked) {
  const std::vector<double> adjusted = holm({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adjusted.size(), 4u);
  EXPECT_DOUBLE_EQ(adjusted[0], 0.03);
  EXPECT_DOUBLE_EQ(adjusted[1], 0.06);
  EXPECT_DOUBLE_EQ(adjusted[2], 0.06);
  EXPECT_DOUBLE_EQ(adjusted[3], 0.02);
}

// 0.02 x 3 = 0.06, 0.6 x 2 = 1.2 capped at 1, 0.7 x 1 raised to 1; equal
// p-values: 0.01 x 2 = 0.02, 0.01 x 1 raised to 0.02.
TEST(Stats, HolmCapsAtOneAndStaysMonotone) {
  const std::vector<double> capped = holm({0.6, 0.02, 0.7});
  ASSERT_EQ(capped.size(), 3u);
  EXPECT_EQ(capped[0], 1.0);
  EXPECT_DOUBLE_EQ(capped[1], 0.06);
  EXPECT_EQ(capped[2], 1.0);
  EXPECT_EQ(holm({0.01, 0.01}), (std::vector<double>{0.02, 0.02}));
  EXPECT_EQ(holm({0.3}), (std::vector<double>{0.3}));
  EXPECT_TRUE(holm({}).empty());
}

TEST(Stats, HolmRefusesPValuesOutsideZeroOne) {
  EXPECT_THROW(holm({0.5, 1.5}), std::invalid_argument);
  EXPECT_THROW(holm({-0.1}), std::invalid_argument);
  EXPECT_THROW(holm({std::nan("")}), std::invalid_argument);
}

}  // namespace
