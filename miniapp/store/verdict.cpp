#include "store/verdict.hpp"

#include "support/stats.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <tuple>

namespace portalab::store {

// nth_element, not a sort: the noise of a large history is the median of
// hundreds of thousands of pairs.
double median_of(std::vector<double> xs) {
  const std::size_t n = xs.size();
  if (n == 0) return 0;
  const auto mid = xs.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(xs.begin(), mid, xs.end());
  if (n % 2) return *mid;
  return (*std::max_element(xs.begin(), mid) + *mid) / 2;
}

bool lower_is_better(const std::string& unit) { return unit == "us" || unit == "ms"; }

namespace {

std::optional<int> decade(double ms) {
  if (!(ms > 0)) return std::nullopt;
  return static_cast<int>(std::floor(std::log10(ms)));
}

// Relative standard error of the median, from the repetitions.
double median_se(const Measure& m) {
  if (!m.std_ms || !m.ms || !m.reps || *m.ms <= 0 || *m.std_ms == 0 || *m.reps == 0) return 0.0;
  return 1.2533 * *m.std_ms / *m.ms / std::sqrt(*m.reps);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

double robust_sigma(std::vector<double> xs) {
  const double med = median_of(xs);
  for (double& x : xs) x = std::abs(x - med);
  return 1.4826 * median_of(xs);
}

Noise::Noise(const std::vector<std::pair<double, double>>& pairs, double floor) : m_floor(floor) {
  std::map<int, std::vector<double>> by_decade;
  std::vector<double> every;
  for (const auto& [b, n] : pairs) {
    if (!(b > 0) || !(n > 0) || !std::isfinite(n / b) || n / b <= 0) continue;
    const double x = std::log(n / b);
    every.push_back(x);
    by_decade[*decade(b)].push_back(x);
  }
  m_pooled = every.size() >= 2 ? robust_sigma(every) : 0.0;
  m_count = static_cast<int>(every.size());
  for (const auto& [d, xs] : by_decade)
    if (static_cast<int>(xs.size()) >= min_group) m_by_decade[d] = robust_sigma(xs);
}

double Noise::raw(double base_ms) const {
  const auto d = decade(base_ms);
  if (!d || m_by_decade.empty()) return m_pooled;
  if (const auto it = m_by_decade.find(*d); it != m_by_decade.end()) return it->second;
  int near = std::numeric_limits<int>::max();
  for (const auto& [k, s] : m_by_decade) near = std::min(near, std::abs(k - *d));
  double s = 0;
  for (const auto& [k, v] : m_by_decade)
    if (std::abs(k - *d) == near) s = std::max(s, v);
  return s;
}

double Noise::sigma(double base_ms) const {
  double s = raw(base_ms);
  if (m_within) s = std::min(s, m_ratio * m_within->raw(base_ms));
  return std::max(m_floor, s);
}

void Noise::cap(const Noise& within, double ratio) {
  m_within = std::make_shared<const Noise>(within);
  m_ratio = ratio;
}

bool Noise::capped(double base_ms) const {
  return m_within && sigma(base_ms) < std::max(m_floor, raw(base_ms));
}

std::pair<std::string, std::optional<double>> classify(const Measure& base, const Measure& now,
                                                       std::optional<double> noise_sigma,
                                                       double sigmas) {
  if (base.check == "PASS" && now.check != "PASS") return {"broken", std::nullopt};
  if (base.check != "PASS" || now.check != "PASS") return {lower(now.check), std::nullopt};
  if (!base.ms || !now.ms) return {"same", std::nullopt};
  const double b = *base.ms, n = *now.ms;
  std::optional<double> change;
  if (b > 0 && std::isfinite((n - b) / b)) change = (n - b) / b;
  double ranges[4] = {b, b, n, n};
  if (base.min_ms && base.max_ms && now.min_ms && now.max_ms) {
    ranges[0] = *base.min_ms;
    ranges[1] = *base.max_ms;
    ranges[2] = *now.min_ms;
    ranges[3] = *now.max_ms;
  }
  std::string verdict;
  if (ranges[3] < ranges[0])
    verdict = "faster";
  else if (ranges[2] > ranges[1])
    verdict = "slower";
  else
    return {"same", change};
  if (noise_sigma && b > 0 && n > 0 && std::isfinite(n / b)) {
    const double spread = std::sqrt(*noise_sigma * *noise_sigma +
                                    median_se(base) * median_se(base) +
                                    median_se(now) * median_se(now));
    if (std::abs(std::log(n / b)) <= sigmas * spread) return {"same", change};
  }
  return {verdict, change};
}

std::vector<TestedVerdict> verdicts_by_test(const std::vector<RepeatedPair>& pairs, double alpha,
                                            double tolerance) {
  std::vector<TestedVerdict> out(pairs.size());
  std::vector<std::size_t> tested;
  std::vector<double> ps;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const RepeatedPair& pair = pairs[i];
    TestedVerdict& v = out[i];
    if (pair.base_check == "PASS" && pair.now_check != "PASS") {
      v.verdict = "broken";
      continue;
    }
    if (pair.base_check != "PASS" || pair.now_check != "PASS") {
      v.verdict = lower(pair.now_check);
      continue;
    }
    auto finite = [](const std::vector<double>& xs) {
      return !xs.empty() &&
             std::all_of(xs.begin(), xs.end(), [](double x) { return std::isfinite(x); });
    };
    if (!finite(pair.base_ms) || !finite(pair.now_ms)) {
      v.verdict = "untested";
      continue;
    }
    // Too few repetitions for the test ever to reject at alpha: the least
    // two-sided p of m against k values is 2 / C(m + k, m) (two of three
    // apart: 0.33). Such pairs are left to the older rule.
    const double m = static_cast<double>(pair.base_ms.size()),
                 k = static_cast<double>(pair.now_ms.size());
    if (std::log(2.0) - (std::lgamma(m + k + 1) - std::lgamma(m + 1) - std::lgamma(k + 1)) >
        std::log(alpha)) {
      v.verdict = "untested";
      continue;
    }
    const double b = median_of(pair.base_ms), n = median_of(pair.now_ms);
    if (b > 0 && std::isfinite((n - b) / b)) v.change = (n - b) / b;
    v.p = stats::mann_whitney(pair.base_ms, pair.now_ms).p;
    tested.push_back(i);
    ps.push_back(*v.p);
  }
  const std::vector<double> adjusted = stats::holm(ps);
  for (std::size_t k = 0; k < tested.size(); ++k) {
    TestedVerdict& v = out[tested[k]];
    v.p_adjusted = adjusted[k];
    const bool differs = v.change &&
                         std::abs(*v.change) > std::max(tolerance, pairs[tested[k]].min_change);
    v.verdict = adjusted[k] <= alpha && differs ? (*v.change > 0 ? "slower" : "faster") : "same";
  }
  return out;
}

std::optional<double> runs_sigma(const std::vector<double>& base_runs,
                                 const std::vector<double>& now_runs) {
  double squares = 0, degrees = 0, inverse_counts = 0;
  for (const auto* runs : {&base_runs, &now_runs}) {
    std::vector<double> logs;
    for (const double ms : *runs)
      if (ms > 0 && std::isfinite(ms)) logs.push_back(std::log(ms));
    inverse_counts += 1.0 / std::max<std::size_t>(logs.size(), 1);
    if (logs.size() < 2) continue;
    const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / logs.size();
    for (const double x : logs) squares += (x - mean) * (x - mean);
    degrees += logs.size() - 1;
  }
  if (degrees == 0) return std::nullopt;
  return std::sqrt(squares / degrees * inverse_counts);
}

std::vector<Judgement> judge_pairs(const std::vector<JudgedPair>& pairs, const Noise& noise,
                                   double alpha, double tolerance, double sigmas) {
  const auto noise_at = [&](const JudgedPair& p) {
    return std::max(noise.sigma(*p.base.ms), p.run_noise.value_or(0.0));
  };
  // The entry's own noise, the larger of its history's and its runs'.
  const auto own_of = [](const JudgedPair& p) {
    std::optional<double> own = p.own_noise;
    if (const auto runs = runs_sigma(p.base_runs, p.now_runs))
      own = std::max(own.value_or(0), *runs);
    return own;
  };
  std::vector<RepeatedPair> repeated;
  repeated.reserve(pairs.size());
  for (const JudgedPair& p : pairs) {
    repeated.push_back({p.base.check, p.now.check, p.base_ms, p.now_ms});
    double& min_change = repeated.back().min_change;
    if (p.base.ms && *p.base.ms > 0) min_change = std::expm1(sigmas * noise_at(p));
    if (const auto own = own_of(p)) min_change = std::max(min_change, std::expm1(sigmas * *own));
  }
  const std::vector<TestedVerdict> tested = verdicts_by_test(repeated, alpha, tolerance);
  std::vector<Judgement> out(pairs.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    Judgement& j = out[i];
    static_cast<TestedVerdict&>(j) = tested[i];
    j.min_change = std::max(tolerance, repeated[i].min_change);
    j.rule = j.p ? "test" : "check";
    if (j.verdict != "untested") continue;
    const JudgedPair& p = pairs[i];
    if (p.base.ms) {
      j.noise = noise_at(p);
      if (const auto own = own_of(p)) j.noise = std::max(*j.noise, *own);
    }
    std::tie(j.verdict, j.change) = classify(p.base, p.now, j.noise, sigmas);
    j.rule = "spread";
  }
  return out;
}

}  // namespace portalab::store
