// Host references for the dense linear-algebra experiments, in double, by
// plain loops: matrices are column-major (LayoutLeft) n×n host arrays. Up to
// 1024 every column is checked; above, a sample of columns costing about as
// much as 2^28 multiply-adds, so no check takes longer than the run it checks.
// Residual tests follow LAPACK's own (xGET01, xGET03, xQRT01): a norm of the
// residual over n·eps·‖A‖ below 30 whatever the condition number.
#pragma once

#include "experiment/check.hpp"
#include "experiment/mirrored.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace portalab {

// LAPACK's threshold for its residual ratios.
inline constexpr double lapack_residual_threshold = 30.0;

// The columns a check recomputes: all when n ≤ 1024, else a deterministic
// random sample (first and last included), sorted.
inline std::vector<std::int64_t> check_columns(std::int64_t n) {
  std::vector<std::int64_t> cols;
  if (n <= 1024) {
    for (std::int64_t j = 0; j < n; ++j) cols.push_back(j);
    return cols;
  }
  const double budget = 268435456.0 / (static_cast<double>(n) * static_cast<double>(n));
  const std::int64_t samples = std::clamp<std::int64_t>(static_cast<std::int64_t>(budget), 4, 64);
  cols = {0, n - 1};
  for (std::int64_t s = 0; static_cast<std::int64_t>(cols.size()) < samples; ++s) {
    const auto j = static_cast<std::int64_t>(hash_uniform(0xC0FFEEull, s) * n);
    if (std::find(cols.begin(), cols.end(), j) == cols.end()) cols.push_back(j);
  }
  std::sort(cols.begin(), cols.end());
  return cols;
}

// Summation of n products in T whose rounding errors behave as random (zero-
// mean data): the error grows as √n·eps (Higham and Mary's probabilistic
// bound, with a margin that makes failure by chance negligible), relative to
// Σ|x_i·y_i|. A missing term is still far above it.
template <class T>
double summation_tolerance(std::int64_t n) {
  const double eps = std::numeric_limits<T>::epsilon();
  return 4.0 * std::sqrt(static_cast<double>(std::max<std::int64_t>(n, 1))) * eps + 2.0 * eps;
}

// out = M·v and abs_out = |M|·|v| in double, M n×n column-major.
template <class TM, class TV>
void matvec(const TM* m, std::int64_t n, const TV* v, std::vector<double>& out,
            std::vector<double>* abs_out = nullptr) {
  out.assign(n, 0.0);
  if (abs_out) abs_out->assign(n, 0.0);
  for (std::int64_t k = 0; k < n; ++k) {
    const double vk = static_cast<double>(v[k]);
    if (vk == 0.0) continue;
    const TM* col = m + k * n;
    for (std::int64_t i = 0; i < n; ++i) out[i] += static_cast<double>(col[i]) * vk;
    if (abs_out)
      for (std::int64_t i = 0; i < n; ++i)
        (*abs_out)[i] += std::abs(static_cast<double>(col[i]) * vk);
  }
}

// max_j Σ_i |M(i,j)| over all columns.
template <class T>
double norm1(const T* m, std::int64_t n) {
  double worst = 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    double s = 0.0;
    for (std::int64_t i = 0; i < n; ++i) s += std::abs(static_cast<double>(m[j * n + i]));
    worst = std::max(worst, s);
  }
  return worst;
}

// Runs column(j, residual_1norm&) over the check's columns in parallel and
// returns the largest residual; a non-finite one wins (and fails).
template <class Column>
double worst_column(std::int64_t n, Column&& column) {
  const auto cols = check_columns(n);
  double worst = 0.0;
#if defined(_OPENMP)
#pragma omp parallel for schedule(dynamic) reduction(max : worst)
#endif
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const double r = column(cols[c]);
    worst = std::max(worst, std::isfinite(r) ? r : std::numeric_limits<double>::infinity());
  }
  return worst;
}

// A residual ratio as a Check: rel_error = residual / scale, passing below
// 30·n·eps of T (LAPACK's threshold, as a plain relative figure).
template <class T>
Check residual_check(double residual, double scale, std::int64_t n, const std::string& what) {
  Check c;
  c.tolerance = lapack_residual_threshold * static_cast<double>(n) *
                std::numeric_limits<T>::epsilon();
  c.rel_error = scale > 0 ? residual / scale : residual;
  c.pass = std::isfinite(c.rel_error) && c.rel_error <= c.tolerance;
  if (!c.pass) c.detail = what + " residual too large";
  return c;
}

// X = A⁻¹ checked as LAPACK's xGET03 does: ‖A·X − I‖₁ / (‖A‖₁·‖X‖₁) within
// 30·n·eps. `zero_pivots` (from lu_summary) > 0 means A is singular: no inverse.
template <class T>
Check inverse_check(const T* a, const T* x, std::int64_t n, double zero_pivots) {
  if (!(zero_pivots == 0.0)) {
    Check singular;
    singular.rel_error = std::numeric_limits<double>::infinity();
    singular.detail = fmt::format("singular matrix: {} zero pivot(s) in U, no inverse",
                                  zero_pivots);
    return singular;
  }
  const double residual = worst_column(n, [&](std::int64_t j) {
    std::vector<double> ax;
    matvec(a, n, x + j * n, ax);
    double r = 0.0;
    for (std::int64_t i = 0; i < n; ++i) r += std::abs(ax[i] - (i == j ? 1.0 : 0.0));
    return r;
  });
  return residual_check<T>(residual, norm1(a, n) * norm1(x, n), n, "A·A⁻¹ − I");
}

}  // namespace portalab
