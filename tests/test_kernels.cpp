// The kernels of kernels/ in every enabled space, against plain host loops.
#include "kernels/stream.hpp"
#include "kernels/vector_poly.hpp"
#include "spaces_types.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cmath>

namespace {

template <class Space>
class Kernels : public ::testing::Test {
 protected:
  using View = Kokkos::View<double*, typename Space::memory_space>;

  // Sizes that are no multiple of any vector width or block, and n = 1.
  static constexpr std::array<std::size_t, 4> sizes{1, 7, 1000, 100003};

  static View filled(const char* label, std::size_t n, double scale) {
    View v(std::string(label), n);
    auto h = Kokkos::create_mirror_view(v);
    for (std::size_t i = 0; i < n; ++i) h(i) = scale * std::sin(0.1 * static_cast<double>(i));
    Kokkos::deep_copy(v, h);
    return v;
  }
};
TYPED_TEST_SUITE(Kernels, portalab::testing::EnabledSpaceTypes, portalab::testing::SpaceName);

TYPED_TEST(Kernels, VectorPolyFusedAndUnfusedMatchTheFormula) {
  using Space = TypeParam;
  using View = typename TestFixture::View;
  const double a = 3.5, b = 2.8, c = 10.0;
  for (std::size_t n : TestFixture::sizes) {
    auto x = TestFixture::filled("x", n, 2.0);
    auto y = TestFixture::filled("y", n, -3.0);
    View fused("fused", n), unfused("unfused", n), t1("t1", n), t2("t2", n);
    Space exec;
    portalab::kernels::vector_poly_fused(exec, a, b, c, x, y, fused);
    portalab::kernels::vector_poly_unfused(exec, a, b, c, x, y, t1, t2, unfused);
    exec.fence();
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    auto hy = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), fused);
    auto hu = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), unfused);
    for (std::size_t i = 0; i < n; ++i) {
      const double expected = a * hx(i) * hx(i) + b * hy(i) + c;
      ASSERT_NEAR(hf(i), expected, 1e-13 * std::abs(expected)) << "n=" << n << " i=" << i;
      ASSERT_NEAR(hu(i), expected, 1e-13 * std::abs(expected)) << "n=" << n << " i=" << i;
    }
  }
}

TYPED_TEST(Kernels, StreamCopyCopiesEveryElement) {
  using Space = TypeParam;
  using View = typename TestFixture::View;
  for (std::size_t n : TestFixture::sizes) {
    auto x = TestFixture::filled("x", n, 1.0);
    View z("z", n);
    Kokkos::deep_copy(z, -7.0);
    Space exec;
    portalab::kernels::stream_copy(exec, x, z);
    exec.fence();
    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hz(i), hx(i)) << "n=" << n << " i=" << i;
  }
}

}  // namespace
