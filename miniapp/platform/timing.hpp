// Timing that ends with a fence, so a measured time is the time the work took
// to complete, not the time it took to be queued.
#pragma once

#include <chrono>
#include <vector>

namespace portalab {

// Runs f, fences `fenceable` (an execution-space instance, or a Case), and
// returns the milliseconds the two took.
template <class Fenceable, class F>
double fenced_ms(Fenceable& fenceable, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  fenceable.fence();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// `warmups` untimed calls, then the times of `reps` fenced calls.
template <class Fenceable, class F>
std::vector<double> sample_ms(Fenceable& fenceable, int warmups, int reps, F&& f) {
  for (int i = 0; i < warmups; ++i) fenced_ms(fenceable, f);
  std::vector<double> out;
  for (int i = 0; i < reps; ++i) out.push_back(fenced_ms(fenceable, f));
  return out;
}

}  // namespace portalab
