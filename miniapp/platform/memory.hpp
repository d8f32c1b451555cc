// Free memory, asked before allocating so an entry that cannot fit is skipped
// with the figures instead of failing mid-run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
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

// Host arrays ask the kernel for transparent huge pages, as NumPy does for
// every array of 4 MiB or more: the seeds' Numba and NumPy code runs on such
// arrays, and where THP is "madvise" (Debian's and Ubuntu's default) a
// streaming kernel over 4 KB pages walks the page tables 512 times as often.
// PORTALAB_HUGE_PAGES=0 turns the advice off (provenance records both).
bool huge_pages_advised();
// madvise(MADV_HUGEPAGE) on the whole pages of [data, data + bytes), for
// bytes >= 4 MiB, before anything touches them; nothing otherwise.
void advise_huge_pages(void* data, std::size_t bytes);
// The system's THP mode, the bracketed word of
// /sys/kernel/mm/transparent_hugepage/enabled ("always", "madvise",
// "never"); empty where the file is absent.
std::string transparent_huge_pages_mode();

// The largest CPU cache, from sysfs, else from the C library (cpuid): a
// server's L3 can hold 300 MB, and arrays that fit in it measure the cache,
// not the memory. Some virtual machines show no cache in sysfs. 0 unknown.
std::size_t last_level_cache_bytes();

}  // namespace portalab
