// Host arrays on transparent huge pages (arrays.hpp, memory.hpp): the advice
// the kernel recorded for the mapping, read back from /proc/self/smaps.
#include "platform/arrays.hpp"
#include "platform/memory.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace portalab {
namespace {

// The VmFlags line of the mapping that holds address p ("" if none).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(':') > line.find(' ')) {
      inside = lo <= a && a < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return {};
}

bool advised_huge(const void* p) { return vm_flags_at(p).find(" hg") != std::string::npos; }

TEST(HugePages, TheSystemsModeIsOneOfTheKernelsWords) {
  const std::string mode = transparent_huge_pages_mode();
  if (mode.empty()) GTEST_SKIP() << "no /sys/kernel/mm/transparent_hugepage/enabled";
  EXPECT_TRUE(mode == "always" || mode == "madvise" || mode == "never") << mode;
}

TEST(HugePages, AHostArrayOfFourMiBOrMoreIsAdvisedBeforeItsFirstTouch) {
  if (transparent_huge_pages_mode().empty()) GTEST_SKIP() << "a kernel without THP";
  if (!huge_pages_advised()) GTEST_SKIP() << "PORTALAB_HUGE_PAGES=0";
  using View = Kokkos::View<double*, Kokkos::HostSpace>;
  const View big = allocate_view<View>("big", std::size_t(1) << 20);  // 8 MiB
  // Its last whole page: the first may share a page with the allocator's header.
  EXPECT_TRUE(advised_huge(big.data() + big.size() - 4096 / sizeof(double)))
      << vm_flags_at(big.data() + big.size() - 512);
  using Matrix = Kokkos::View<float**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  const Matrix square = allocate_view<Matrix>("square", 2048, 2048);  // 16 MiB
  EXPECT_TRUE(advised_huge(square.data() + square.size() / 2));
}

TEST(HugePages, ASmallerArrayIsLeftAsItIs) {
  if (transparent_huge_pages_mode().empty()) GTEST_SKIP() << "a kernel without THP";
  using View = Kokkos::View<double*, Kokkos::HostSpace>;
  const View small = allocate_view<View>("small", (std::size_t(1) << 19) - 1);  // < 4 MiB
  EXPECT_FALSE(advised_huge(small.data() + small.size() / 2)) << vm_flags_at(small.data());
}

}  // namespace
}  // namespace portalab
