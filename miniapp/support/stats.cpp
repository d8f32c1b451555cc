#include "support/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace portalab::stats {

namespace {

void require_no_nan(const std::vector<double>& samples, const char* what) {
  if (std::any_of(samples.begin(), samples.end(), [](double s) { return std::isnan(s); }))
    throw std::invalid_argument(std::string(what) + ": a sample is NaN");
}

// P(B <= k) for k = 0 .. n/2, B ~ Binomial(n, 1/2). Built as weights
// relative to the likeliest count (neighbours in the ratio w(k-1) = w(k)
// k / (n-k+1)) and divided by their sum: no 2^-n to underflow nor binomial
// coefficient to overflow, whatever n; weights too small for a double are
// too small to matter.
std::vector<double> binomial_half_cdf(std::size_t n) {
  const std::size_t half = n / 2;
  std::vector<double> cdf(half + 1);  // the weights w(k) first, then their running sums
  cdf[half] = 1.0;
  for (std::size_t k = half; k > 0; --k)
    cdf[k - 1] = cdf[k] * static_cast<double>(k) / static_cast<double>(n - k + 1);
  // w(n-k) = w(k): the lower half twice, the middle once where n is even.
  const double lower = std::accumulate(cdf.begin(), cdf.end(), 0.0);
  const double total = 2 * lower - (n % 2 == 0 ? cdf[half] : 0.0);
  double sum = 0;
  for (double& c : cdf) {
    sum += c;
    c = sum / total;
  }
  return cdf;
}

// x's rank sum in x and y together (ties given the mean of their ranks), and
// the sum of t^3 - t over the groups of t tied values.
struct Ranks {
  double x_sum = 0;
  double tie_term = 0;
};

Ranks rank(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<std::pair<double, bool>> all;  // a value, and whether it is x's
  all.reserve(x.size() + y.size());
  for (double v : x) all.emplace_back(v, true);
  for (double v : y) all.emplace_back(v, false);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Ranks r;
  for (std::size_t i = 0, j = 0; i < all.size(); i = j) {
    std::size_t from_x = 0;
    for (j = i; j < all.size() && all[j].first == all[i].first; ++j) from_x += all[j].second;
    const double t = static_cast<double>(j - i);
    r.x_sum += static_cast<double>(from_x) * static_cast<double>(i + 1 + j) / 2;  // ranks i+1..j
    r.tie_term += t * t * t - t;
  }
  return r;
}

// P(U <= k) under the null for samples of m and n values, in O(m k). U's
// generating function, the closed form of the counting recurrence f(m, n, k)
// = f(m-1, n, k-n) + f(m, n-1, k), is the Gaussian binomial prod_{i=1..m}
// (1 - q^(n+i)) / (1 - q^i); it is built a factor at a time, each scaled by
// i / (n+i) so that coefficients stay probabilities (counts pass 2^53).
// Coefficients above k are never read by those below, so they are not kept.
double u_cdf(std::size_t m, std::size_t n, std::size_t k) {
  std::vector<double> p(k + 1, 0.0);
  p[0] = 1;
  for (std::size_t i = 1; i <= m; ++i) {
    for (std::size_t j = k + 1; j-- > n + i;) p[j] -= p[j - n - i];  // * (1 - q^(n+i))
    for (std::size_t j = i; j <= k; ++j) p[j] += p[j - i];           // / (1 - q^i)
    const double scale = static_cast<double>(i) / static_cast<double>(n + i);
    for (double& v : p) v *= scale;
  }
  return std::accumulate(p.begin(), p.end(), 0.0);
}

}  // namespace

MedianInterval median_interval(std::vector<double> samples, double confidence) {
  if (samples.empty()) throw std::invalid_argument("median_interval: no samples");
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("median_interval: the confidence is not within (0, 1)");
  require_no_nan(samples, "median_interval");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  MedianInterval r{};
  r.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  // x(l)..x(n+1-l) misses the median when l or more samples fall on one side of it.
  const std::vector<double> cdf = binomial_half_cdf(n);
  const auto coverage = [&](std::size_t l) { return 1 - 2 * cdf[l - 1]; };
  std::size_t l = 1;
  while (2 * (l + 1) <= n + 1 && coverage(l + 1) >= confidence) ++l;
  r.low = samples[l - 1];
  r.high = samples[n - l];
  r.coverage = coverage(l);
  r.bounded = r.coverage >= confidence;
  return r;
}

double relative_halfwidth(const MedianInterval& interval) {
  if (!interval.bounded || !(interval.median > 0)) return std::numeric_limits<double>::infinity();
  return std::max(interval.median - interval.low, interval.high - interval.median) /
         interval.median;
}

UTest mann_whitney(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.empty() || y.empty()) throw std::invalid_argument("mann_whitney: an empty sample");
  require_no_nan(x, "mann_whitney");
  require_no_nan(y, "mann_whitney");
  const double n1 = static_cast<double>(x.size());
  const double n2 = static_cast<double>(y.size());
  const Ranks ranks = rank(x, y);
  UTest t{};
  t.u = ranks.x_sum - n1 * (n1 + 1) / 2;
  const double u_larger = std::max(t.u, n1 * n2 - t.u);
  // SciPy 1.10 goes exact unless both samples exceed 8 (its documentation
  // says fewer than 8; its code decides).
  t.exact = (x.size() <= 8 || y.size() <= 8) && ranks.tie_term == 0;
  if (t.exact) {
    const auto u_smaller = static_cast<std::size_t>(std::llround(n1 * n2 - u_larger));
    t.p = std::min(1.0, 2 * u_cdf(std::min(x.size(), y.size()), std::max(x.size(), y.size()),
                                  u_smaller));
    return t;
  }
  const double n = n1 + n2;
  const double variance = n1 * n2 / 12 * ((n + 1) - ranks.tie_term / (n * (n - 1)));
  // All values tied: no spread, and U at its mean.
  if (!(variance > 0)) {
    t.p = 1;
    return t;
  }
  // The continuity correction moves U by 0.5 towards its mean.
  const double z = (u_larger - n1 * n2 / 2 - 0.5) / std::sqrt(variance);
  t.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));  // twice the normal's upper tail
  return t;
}

std::vector<double> holm(const std::vector<double>& p) {
  if (std::any_of(p.begin(), p.end(), [](double v) { return !(v >= 0 && v <= 1); }))
    throw std::invalid_argument("holm: a p-value is not within [0, 1]");
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  // The r-th smallest (from 0) is multiplied by m - r; a running maximum
  // keeps the adjusted values in the order of the p-values.
  std::vector<double> adjusted(m);
  double running = 0;
  for (std::size_t r = 0; r < m; ++r) {
    running = std::max(running, std::min(1.0, static_cast<double>(m - r) * p[order[r]]));
    adjusted[order[r]] = running;
  }
  return adjusted;
}

}  // namespace portalab::stats
