#pragma once

// What a space's name says without Kokkos (the deck layer has none).

#include <string_view>

namespace portalab {

// Kokkos' host execution spaces by name (Serial, OpenMP, Threads, HPX),
// compiled or not: a deck or a result file may name a space this build lacks.
inline bool is_host_space_name(std::string_view space) {
  return space == "Serial" || space == "OpenMP" || space == "Threads" || space == "HPX";
}

}  // namespace portalab
