#include "platform/spaces.hpp"

#include "platform/space_names.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace portalab {

std::vector<std::string> enabled_space_names() {
  std::vector<std::string> names;
  for_each_space([&](auto tag) { names.emplace_back(decltype(tag)::type::name()); });
  return names;
}

bool is_host_space(std::string_view name) {
  bool compiled = false;
  bool host = false;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (name != Space::name()) return;
    compiled = true;
    host = is_host_space_v<Space>;
  });
  return compiled ? host : is_host_space_name(name);
}

int visible_device_count() {
#if defined(KOKKOS_ENABLE_CUDA)
  int count = 0;
  // No device, no driver: 0, and any --kokkos-device-id is refused.
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
#else
  return -1;
#endif
}

int space_concurrency(std::string_view name) {
  int threads = 0;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (name == Space::name()) threads = Space().concurrency();
  });
  return threads;
}

}  // namespace portalab
