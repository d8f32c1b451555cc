// Statistics of repeated measurements that make no assumption on the shape of
// their distribution: how far a median can be trusted, whether two sets of
// samples differ, and p-values corrected for testing many rows at once. No
// Kokkos: part of portalab_base.
#pragma once

#include <vector>

namespace portalab::stats {

// A median and its distribution-free confidence interval: the order
// statistics x(l) and x(n+1-l) of the n sorted samples, l the largest rank
// whose interval still covers the true median with the confidence asked.
struct MedianInterval {
  double median;     // the middle sample, or the mean of the middle two
  double low, high;  // x(l) and x(n+1-l); the smallest and largest when !bounded
  double coverage;   // P(l <= B <= n-l), B ~ Binomial(n, 1/2): what the interval achieves
  bool bounded;      // false where even min..max covers less than asked (n <= 5 at 0.95)
};

// The median of `samples` and its interval at `confidence` (0 < confidence <
// 1). Throws std::invalid_argument on no samples, a NaN or a confidence
// outside (0, 1).
MedianInterval median_interval(std::vector<double> samples, double confidence = 0.95);

// The interval's larger half-width relative to the median (a row's rel_ci95);
// +infinity when it is not bounded or the median is not positive.
double relative_halfwidth(const MedianInterval& interval);

// A two-sided Mann-Whitney U test of whether x and y come from one
// distribution.
struct UTest {
  double u;    // U of x: its rank sum (midranks for ties) less n_x(n_x+1)/2
  double p;    // two-sided p-value
  bool exact;  // p from U's exact null distribution, not the normal approximation
};

// As scipy.stats.mannwhitneyu(x, y) of SciPy 1.10 computes it: exact where
// a sample has at most 8 values and x and y together hold no tie (p is twice
// the smaller tail at U, at most 1), else the normal approximation with the
// tie correction of the variance and the continuity correction. Throws
// std::invalid_argument on an empty sample or a NaN.
UTest mann_whitney(const std::vector<double>& x, const std::vector<double>& y);

// Holm-Bonferroni step-down adjusted p-values, in the order of `p`: the
// family-wise error rate is held at alpha by rejecting where adjusted <=
// alpha. Throws std::invalid_argument on a p-value outside [0, 1].
std::vector<double> holm(const std::vector<double>& p);

}  // namespace portalab::stats
