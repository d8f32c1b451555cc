// Free memory, asked before allocating so an entry that cannot fit is skipped
// with the figures instead of failing mid-run.
#pragma once

#include <cstddef>
#include <string_view>

namespace portalab {

// Bytes the host can still give (MemAvailable), 0 if unknown.
std::size_t host_available_bytes();
// Bytes free in the memory of the named execution space; host spaces answer
// host_available_bytes(); SIZE_MAX when the backend cannot be asked.
// Needs Kokkos initialised.
std::size_t space_free_bytes(std::string_view space);

}  // namespace portalab
