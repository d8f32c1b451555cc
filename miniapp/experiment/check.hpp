// Verification against an independent host reference computed in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace portalab {

struct Check {
  bool pass = false;
  double rel_error = 0.0;  // the largest relative error found
  double tolerance = 0.0;  // the largest that passes
  std::string detail;      // where the worst element is, or why the check failed
};

// Tolerance for an element computed with `ops` correctly rounded operations
// in T from exact inputs: each may add half an ulp; a factor 2 of slack.
template <class T>
constexpr double elementwise_tolerance(int ops) {
  if constexpr (std::is_floating_point_v<T>)
    return ops * static_cast<double>(std::numeric_limits<T>::epsilon());
  else
    return 0.0;  // integers must be exact
}

// Compares got[i] with reference(i) for i < n. The error of an element is
// relative to max(|reference|, floor) so that values near zero do not turn
// rounding into huge relative errors; NaN or Inf in `got` fails.
template <class T, class Reference>
Check compare_elementwise(const T* got, std::int64_t n, Reference&& reference, double tolerance,
                          double floor = std::numeric_limits<double>::min()) {
  double worst = 0.0;
  std::int64_t worst_index = -1;
  std::int64_t non_finite = 0;
#if defined(_OPENMP)
#pragma omp parallel
#endif
  {
    double my_worst = 0.0;
    std::int64_t my_index = -1, my_non_finite = 0;
#if defined(_OPENMP)
#pragma omp for nowait
#endif
    for (std::int64_t i = 0; i < n; ++i) {
      const double g = static_cast<double>(got[i]);
      if (!std::isfinite(g)) {
        ++my_non_finite;
        continue;
      }
      const double r = reference(i);
      const double e = std::abs(g - r) / std::max(std::abs(r), floor);
      if (my_index < 0 || e > my_worst) {
        my_worst = e;
        my_index = i;
      }
    }
#if defined(_OPENMP)
#pragma omp critical
#endif
    {
      non_finite += my_non_finite;
      if (my_index >= 0 && (worst_index < 0 || my_worst > worst)) {
        worst = my_worst;
        worst_index = my_index;
      }
    }
  }
  Check c;
  c.tolerance = tolerance;
  if (non_finite > 0) {
    c.pass = false;
    c.rel_error = std::numeric_limits<double>::infinity();
    c.detail = std::to_string(non_finite) + " non-finite element(s)";
    return c;
  }
  c.rel_error = worst;
  c.pass = worst <= tolerance;
  if (!c.pass && worst_index >= 0)
    c.detail = "worst element " + std::to_string(worst_index) + ": got " +
               std::to_string(static_cast<double>(got[worst_index])) + ", expected " +
               std::to_string(reference(worst_index));
  return c;
}

}  // namespace portalab
