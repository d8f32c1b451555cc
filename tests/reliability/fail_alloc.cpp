// LD_PRELOAD library: aligned nothrow operator new -- how Kokkos' HostSpace
// allocates -- fails for requests of PORTALAB_FAIL_ALLOC_BYTES or more, so a
// test can make a real allocation fail after the free-memory check passed.
#include <cstdlib>
#include <new>

namespace {
std::size_t threshold() {
  static const std::size_t bytes = [] {
    const char* s = std::getenv("PORTALAB_FAIL_ALLOC_BYTES");
    return s ? std::strtoull(s, nullptr, 10) : 0;
  }();
  return bytes;
}
}  // namespace

// libstdc++ frees aligned allocations with free(): posix_memalign matches.
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  if (threshold() != 0 && size >= threshold()) return nullptr;
  void* p = nullptr;
  const std::size_t align = static_cast<std::size_t>(alignment);
  return posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, size) == 0 ? p : nullptr;
}
