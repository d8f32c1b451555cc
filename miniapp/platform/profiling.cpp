#include "platform/profiling.hpp"

#include <Kokkos_Core.hpp>

#if defined(PORTALAB_HAVE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_profiler_api.h>
#endif

namespace portalab {

ScopedRange::ScopedRange(const std::string& name) {
  Kokkos::Profiling::pushRegion(name);
#if defined(PORTALAB_HAVE_NVTX)
  nvtxRangePushA(name.c_str());
#endif
}

ScopedRange::~ScopedRange() {
#if defined(PORTALAB_HAVE_NVTX)
  nvtxRangePop();
#endif
  Kokkos::Profiling::popRegion();
}

void profiler_start() {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaProfilerStart();
#endif
}

void profiler_stop() {
#if defined(KOKKOS_ENABLE_CUDA)
  cudaProfilerStop();
#endif
}

}  // namespace portalab
