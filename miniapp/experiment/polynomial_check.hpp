// The check of kernels::horner's outputs against the closed form.
#pragma once

#include "experiment/check.hpp"
#include "kernels/polynomial.hpp"

#include <cstdint>

namespace portalab {

// y[i] = 1 + x[i] + … + x[i]^degree for inputs |x| <= 1/2. Horner's rounding
// errors shrink by |x| at each later step: a few eps of T whatever the degree.
template <class T>
Check check_geometric_sum(const T* x, const T* y, std::int64_t n, std::int64_t degree) {
  return compare_elementwise(
      y, n,
      [&](std::int64_t i) { return kernels::geometric_sum(static_cast<double>(x[i]), degree); },
      elementwise_tolerance<T>(8));
}

}  // namespace portalab
