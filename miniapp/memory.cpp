#include "memory.hpp"

#include "spaces.hpp"

#include <fstream>
#include <cstdint>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace portalab {

std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

std::size_t space_free_bytes(std::string_view space) {
  std::size_t free = host_available_bytes();
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (space != Space::name() || is_host_space_v<Space>) return;
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
      std::size_t f = 0, total = 0;
      if (cudaMemGetInfo(&f, &total) == cudaSuccess) free = f;
      return;
    }
#endif
    free = SIZE_MAX;  // a backend we cannot ask: a failed allocation is still caught
  });
  return free;
}

}  // namespace portalab
