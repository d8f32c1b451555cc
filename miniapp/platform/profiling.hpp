// Names for profilers: ranges "portalab/<experiment>/<space>/<phase>" that
// Nsight Systems shows as NVTX ranges (directly, no Kokkos Tools needed) and
// Kokkos Tools as regions; and the CUDA profiler switched on only around the
// measured repetitions (nsys --capture-range=cudaProfilerApi).
#pragma once

#include <string>

namespace portalab {

class ScopedRange {
 public:
  explicit ScopedRange(const std::string& name);
  ~ScopedRange();
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
};

// Around the measured repetitions of an entry; no-ops without CUDA.
void profiler_start();
void profiler_stop();

}  // namespace portalab
