// The kernels of kernels/ in every enabled space, against plain host loops.
#include "kernels/elementwise.hpp"
#include "kernels/launch.hpp"
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

  static auto host(const View& v) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v); }

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

TYPED_TEST(Kernels, ElementwiseLabKernelsMatchTheirFormulas) {
  using Space = TypeParam;
  using View = typename TestFixture::View;
  for (std::size_t n : TestFixture::sizes) {
    auto x = TestFixture::filled("x", n, 2.0);
    auto y = TestFixture::filled("y", n, -3.0);
    View fused("fused", n), unfused("unfused", n), t1("t1", n), t2("t2", n), cube("cube", n),
        pdf("pdf", n), distance("distance", n);
    Space exec;
    portalab::kernels::squared_diff_fused(exec, x, y, fused);
    portalab::kernels::squared_diff_unfused(exec, x, y, t1, t2, unfused);
    portalab::kernels::cube_product(exec, x, y, cube);
    portalab::kernels::gaussian_pdf(exec, 0.5, 1.5, x, pdf);
    portalab::kernels::polar_distance(exec, x, y, y, x, distance);
    exec.fence();
    const auto hx = TestFixture::host(x), hy = TestFixture::host(y);
    const auto hf = TestFixture::host(fused), hu = TestFixture::host(unfused);
    const auto hc = TestFixture::host(cube), hp = TestFixture::host(pdf);
    const auto hd = TestFixture::host(distance);
    for (std::size_t i = 0; i < n; ++i) {
      const double a = hx(i), b = hy(i);
      const double sq = (a - b) * (a - b), p = a * b;
      ASSERT_NEAR(hf(i), sq, 1e-14 * sq) << "n=" << n << " i=" << i;
      ASSERT_NEAR(hu(i), sq, 1e-14 * sq) << "n=" << n << " i=" << i;
      ASSERT_NEAR(hc(i), p * p * p, 1e-14 * std::abs(p * p * p)) << "n=" << n << " i=" << i;
      const double u = (a - 0.5) / 1.5, g = std::exp(-0.5 * u * u) / (1.5 * std::sqrt(2 * M_PI));
      ASSERT_NEAR(hp(i), g, 1e-14 * g) << "n=" << n << " i=" << i;
      // (a, b) and (b, a) in polar form, as rho and theta.
      const double dx = a * std::cos(b) - b * std::cos(a), dy = a * std::sin(b) - b * std::sin(a);
      ASSERT_NEAR(hd(i), std::sqrt(dx * dx + dy * dy), 1e-13) << "n=" << n << " i=" << i;
    }
  }
}

TYPED_TEST(Kernels, BroadcastAddsARowToEveryRowAndAColumnToEveryColumn) {
  using Space = TypeParam;
  using Matrix = Kokkos::View<std::int64_t**, typename Space::memory_space>;
  using Vector = Kokkos::View<std::int64_t*, typename Space::memory_space>;
  for (auto [rows, cols] : {std::pair{1, 1}, {7, 3}, {33, 129}}) {
    Matrix m("m", rows, cols), by_row("by_row", rows, cols), by_column("by_column", rows, cols);
    Vector row("row", cols), column("column", rows);
    auto hm = Kokkos::create_mirror_view(m);
    auto hr = Kokkos::create_mirror_view(row);
    auto hc = Kokkos::create_mirror_view(column);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) hm(i, j) = 1000 * i + j;
    for (int j = 0; j < cols; ++j) hr(j) = -7 * j;
    for (int i = 0; i < rows; ++i) hc(i) = 100000 * i;
    Kokkos::deep_copy(m, hm);
    Kokkos::deep_copy(row, hr);
    Kokkos::deep_copy(column, hc);
    Space exec;
    portalab::kernels::broadcast_add_row(exec, m, row, by_row);
    portalab::kernels::broadcast_add_column(exec, m, column, by_column);
    exec.fence();
    auto got_row = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_row);
    auto got_column = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_column);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        ASSERT_EQ(got_row(i, j), hm(i, j) + hr(j)) << rows << "x" << cols;
        ASSERT_EQ(got_column(i, j), hm(i, j) + hc(i)) << rows << "x" << cols;
      }
  }
}

TYPED_TEST(Kernels, EveryLaunchAndEveryGraphNodeWritesItsElement) {
  using Space = TypeParam;
  using Vector = Kokkos::View<std::int64_t*, typename Space::memory_space>;
  for (std::int64_t n : {1, 7, 100}) {
    Vector launched("launched", n), replayed("replayed", n);
    Space exec;
    for (std::int64_t k = 0; k < n; ++k) portalab::kernels::write_index(exec, launched, k);
    auto graph = portalab::kernels::write_index_graph(exec, replayed);
    graph.submit(exec);
    exec.fence();
    auto hl = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), launched);
    auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), replayed);
    for (std::int64_t k = 0; k < n; ++k) {
      ASSERT_EQ(hl(k), k + 1) << "n=" << n;
      ASSERT_EQ(hr(k), k + 1) << "n=" << n;
    }
  }
}

}  // namespace
