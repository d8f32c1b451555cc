#include "platform/memory.hpp"

#include "support/environment.hpp"
#include "platform/spaces.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace portalab {
namespace {

// A "Key: value kB" line of a /proc file, in bytes; 0 if absent.
std::size_t proc_kib(const char* path, std::string_view wanted) {
  std::ifstream in(path);
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == wanted) return kib * 1024;
  return 0;
}

// Headroom below the tightest limit of one cgroup hierarchy, walking from
// this process's cgroup up to the root (a batch job's limit usually sits on
// an ancestor of the step's cgroup).
std::size_t cgroup_headroom(const std::filesystem::path& root, const std::string& cgroup,
                            const char* limit_file, const char* usage_file) {
  std::size_t headroom = SIZE_MAX;
  for (auto p = root / std::filesystem::path(cgroup).relative_path();; p = p.parent_path()) {
    std::ifstream limit_in(p / limit_file), usage_in(p / usage_file);
    std::string limit;  // "max" when unlimited (v2)
    std::size_t usage = 0;
    if (limit_in >> limit && limit != "max" && usage_in >> usage) {
      const std::size_t bytes = std::stoull(limit);
      headroom = std::min(headroom, bytes > usage ? bytes - usage : 0);
    }
    if (p == root || p == p.parent_path()) break;
  }
  return headroom;
}

// Slurm confines a job with cgroups, v2 or v1 (memory controller).
std::size_t cgroup_headroom() {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::size_t headroom = SIZE_MAX;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0)
      headroom = std::min(headroom, cgroup_headroom("/sys/fs/cgroup", line.substr(3), "memory.max",
                                                    "memory.current"));
    else if (const auto at = line.find(":memory:"); at != std::string::npos)
      headroom = std::min(headroom,
                          cgroup_headroom("/sys/fs/cgroup/memory", line.substr(at + 8),
                                          "memory.limit_in_bytes", "memory.usage_in_bytes"));
  }
  return headroom;
}

// Headroom below RLIMIT_AS, measured against the process's current size.
std::size_t address_space_headroom() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  const std::size_t used = proc_kib("/proc/self/status", "VmSize:");
  return limit.rlim_cur > used ? limit.rlim_cur - used : 0;
}

}  // namespace

std::size_t host_available_bytes() {
  const std::size_t available = proc_kib("/proc/meminfo", "MemAvailable:");
  if (available == 0) return 0;
  return std::min({available, cgroup_headroom(), address_space_headroom()});
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

bool is_allocation_failure(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return true;
  // The wording of Kokkos::Impl::throw_bad_alloc (Kokkos_Error.cpp, 4.x).
  return std::strstr(e.what(), "failed to allocate") != nullptr;
}

bool huge_pages_advised() {
  static const bool advised = [] { return env_switch("PORTALAB_HUGE_PAGES").value_or(true); }();
  return advised;
}

void advise_huge_pages(void* data, std::size_t bytes) {
  // NumPy's threshold and rounding (numpy/_core/src/multiarray/alloc.c).
  if (!huge_pages_advised() || data == nullptr || bytes < (std::size_t(1) << 22)) return;
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t end = (begin + bytes) / page * page;
  // Advice only: a kernel without THP (EINVAL) leaves the pages as they are.
  if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
}

std::string transparent_huge_pages_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string word;
  while (in >> word)
    if (word.size() > 2 && word.front() == '[' && word.back() == ']')
      return word.substr(1, word.size() - 2);
  return {};
}

std::size_t last_level_cache_bytes() {
  std::size_t largest = 0;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE})
    largest = std::max<std::size_t>(largest, std::max(0L, sysconf(name)));
  for (int i = 0; i < 8; ++i) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::size_t value = 0;
    char unit = 0;
    if (!(in >> value)) continue;
    in >> unit;
    const std::size_t scale = unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
    largest = std::max(largest, value * scale);
  }
  return largest;
}

}  // namespace portalab
