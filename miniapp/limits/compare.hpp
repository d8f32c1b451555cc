// A row against the limits calibrated for its space: the fraction of its
// limit it reached (pct_of_limit), and of the copy limits its copies reached.
#pragma once

#include "limits/calibrate.hpp"
#include "results/result.hpp"

namespace portalab {

// The row's rates as fractions of the limits calibrated for its space; with
// several ranks, of as many times the limit (each rank has its own), and
// between ranks, of the links calibrated among them.
void compare_with_limits(Result& r, const SpaceLimits& lim, const Calibration& cal, Bound bound);

// r's limit and pct_of_limit again, from the limit of its kind (r.limit.bound)
// in cal, as it now is (after a recheck_bandwidth). Rows that did not run are left.
void hold_to_limits(Result& r, const Calibration& cal);

}  // namespace portalab
