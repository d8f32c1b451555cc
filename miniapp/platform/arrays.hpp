// The arrays experiments and the calibration allocate: uninitialised (the
// fill is their first touch, by the threads that will use them), and on the
// host advised onto transparent huge pages before that touch (memory.hpp).
#pragma once

#include "platform/memory.hpp"

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>
#include <utility>

namespace portalab {

// A View of `args` (extents or a layout), not initialised.
template <class View, class... Args>
View allocate_view(const std::string& label, Args&&... args) {
  View v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), std::forward<Args>(args)...);
  if constexpr (std::is_same_v<typename View::memory_space, Kokkos::HostSpace>)
    advise_huge_pages(v.data(), v.span() * sizeof(typename View::value_type));
  return v;
}

}  // namespace portalab
