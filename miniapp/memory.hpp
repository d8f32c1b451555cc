// Free memory, asked before allocating so an entry that cannot fit is skipped
// with the figures instead of failing mid-run.
#pragma once

#include <cstddef>
#include <exception>
#include <string_view>

namespace portalab {

// Bytes this process can still get on the host: MemAvailable, lowered by
// the memory limit of its cgroup (Slurm's --mem) and by an address-space
// rlimit (ulimit -v); 0 if unknown.
std::size_t host_available_bytes();
// Bytes free in the memory of the named execution space; host spaces answer
// host_available_bytes(); SIZE_MAX when the backend cannot be asked.
// Needs Kokkos initialised.
std::size_t space_free_bytes(std::string_view space);

// True for a failed allocation: std::bad_alloc, or Kokkos' own report of
// one, which is a std::runtime_error (Kokkos::Impl::throw_bad_alloc).
bool is_allocation_failure(const std::exception& e);

}  // namespace portalab
