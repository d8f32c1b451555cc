// The kernels of kernels/ in every enabled space, against plain host loops.
#include "kernels/dot.hpp"
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

// check(paths) with plain stores, then with every host loop and copy
// streaming its stores past the caches (HostPolicy; portalab streams only
// arrays beyond the last-level cache, too large for a test): each path of
// kernels/range.hpp's stream_store, heads and tails included, computes the
// same elements.
template <class Check>
void with_either_store(const Check& check) {
  for (const std::int64_t bytes : {std::int64_t(-1), std::int64_t(0)}) {
    SCOPED_TRACE(bytes < 0 ? "plain stores" : "streaming stores");
    portalab::kernels::HostPolicy policy;
    policy.streaming_from = policy.copy_streaming_from = bytes;
    portalab::kernels::Paths paths(policy);
    check(paths);
  }
}

template <class Space>
class Kernels : public ::testing::Test {
 protected:
  using View = Kokkos::View<double*, typename Space::memory_space>;

  // Sizes that are no multiple of any vector width or block, and n = 1;
  // one host block (kernels::host_block) exactly, and one more element.
  static constexpr std::array<std::size_t, 6> sizes{1, 7, 1000, 2048, 2049, 100003};

  static auto host(const View& v) {
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  }

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
  with_either_store([&](portalab::kernels::Paths& paths) {
    using Space = TypeParam;
    using View = typename TestFixture::View;
    const double a = 3.5, b = 2.8, c = 10.0;
    for (std::size_t n : TestFixture::sizes) {
      auto x = TestFixture::filled("x", n, 2.0);
      auto y = TestFixture::filled("y", n, -3.0);
      View fused("fused", n), unfused("unfused", n), t1("t1", n), t2("t2", n);
      Space exec;
      portalab::kernels::vector_poly_fused(exec, paths, a, b, c, x, y, fused);
      portalab::kernels::vector_poly_unfused(exec, paths, a, b, c, x, y, t1, t2, unfused);
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
  });
}

// Both copies, in both element sizes, at sizes no chunk or item divides;
// also subviews that start one element in (misaligned: the fallback path)
// and strided ones.
template <class Space, class T>
void check_copies(portalab::kernels::Paths& paths) {
  using View = Kokkos::View<T*, typename Space::memory_space>;
  for (std::size_t n : {1, 2, 3, 5, 7, 16, 17, 63, 1000, 100003}) {
    View x("x", n + 1), z("z", n + 1), naive("naive", n + 1);
    auto hx = Kokkos::create_mirror_view(x);
    for (std::size_t i = 0; i <= n; ++i) hx(i) = static_cast<T>(i + 1);
    Kokkos::deep_copy(x, hx);
    Space exec;
    const auto whole = std::pair<std::size_t, std::size_t>(0, n);
    const auto shifted = std::pair<std::size_t, std::size_t>(1, n + 1);
    for (auto [from, to] :
         {std::pair{whole, whole}, std::pair{shifted, shifted}, std::pair{whole, shifted}}) {
      Kokkos::deep_copy(z, T(-7));
      Kokkos::deep_copy(naive, T(-7));
      portalab::kernels::stream_copy(exec, paths, Kokkos::subview(x, from), Kokkos::subview(z, to));
      portalab::kernels::stream_copy_naive(exec, paths, Kokkos::subview(x, from),
                                           Kokkos::subview(naive, to));
      exec.fence();
      auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
      auto hn = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), naive);
      for (std::size_t i = 0; i <= n; ++i) {
        const bool copied = i >= to.first && i < to.second;
        const T want = copied ? hx(i - to.first + from.first) : T(-7);
        ASSERT_EQ(hz(i), want) << "n=" << n << " i=" << i << " from " << from.first;
        ASSERT_EQ(hn(i), want) << "naive n=" << n << " i=" << i << " from " << from.first;
      }
    }
    // Every other element: not contiguous.
    Kokkos::View<T*, Kokkos::LayoutStride, typename Space::memory_space> odd(
        x.data(), Kokkos::LayoutStride(n / 2 + 1, 2));
    View got("got", n / 2 + 1);
    portalab::kernels::stream_copy(exec, paths, odd, got);
    exec.fence();
    auto hg = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
    for (std::size_t i = 0; i < hg.extent(0); ++i) ASSERT_EQ(hg(i), hx(2 * i)) << "strided n=" << n;
  }
}

TYPED_TEST(Kernels, StreamCopyCopiesEveryElement) {
  with_either_store([&](portalab::kernels::Paths& paths) {
    check_copies<TypeParam, double>(paths);
    check_copies<TypeParam, float>(paths);
  });
}

// Every pass reads every element once per n items: with x(i) = i + 1, the
// sum is passes * (items / n) * n(n+1)/2 where n divides items, whatever the
// step; one element, more items than elements, and one pass too.
TYPED_TEST(Kernels, RepeatedReadReadsEveryElementOnEveryPass) {
  using Space = TypeParam;
  const Space exec;
  for (const std::int64_t n : {1, 2, 7, 1000, 4099})
    for (const std::int64_t copies : {1, 3})
      for (const int passes : {1, 5}) {
        Kokkos::View<double*, typename Space::memory_space> x("x", n);
        auto hx = Kokkos::create_mirror_view(x);
        for (std::int64_t i = 0; i < n; ++i) hx(i) = static_cast<double>(i + 1);
        Kokkos::deep_copy(x, hx);
        Kokkos::View<double, typename Space::memory_space> sum("sum");
        portalab::kernels::repeated_read(exec, x, copies * n, passes, sum);
        double got = 0;
        Kokkos::deep_copy(got, sum);
        EXPECT_EQ(got, static_cast<double>(passes * copies) * n * (n + 1) / 2)
            << "n=" << n << " items=" << copies * n << " passes=" << passes;
      }
}

TYPED_TEST(Kernels, ElementwiseLabKernelsMatchTheirFormulas) {
  with_either_store([&](portalab::kernels::Paths& paths) {
    using Space = TypeParam;
    using View = typename TestFixture::View;
    for (std::size_t n : TestFixture::sizes) {
      auto x = TestFixture::filled("x", n, 2.0);
      auto y = TestFixture::filled("y", n, -3.0);
      View fused("fused", n), unfused("unfused", n), t1("t1", n), t2("t2", n), cube("cube", n),
          pdf("pdf", n), distance("distance", n);
      Space exec;
      portalab::kernels::squared_diff_fused(exec, paths, x, y, fused);
      portalab::kernels::squared_diff_unfused(exec, paths, x, y, t1, t2, unfused);
      portalab::kernels::cube_product(exec, paths, x, y, cube);
      portalab::kernels::gaussian_pdf(exec, paths, 0.5, 1.5, x, pdf);
      portalab::kernels::polar_distance(exec, paths, x, y, y, x, distance);
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
  });
}

// Row and column broadcasts in both layouts at shapes no chunk or run
// divides (1, primes, one row, one column, rows < a chunk), and a subview
// that starts at an odd element (contiguous, misaligned).
template <class Space, class Layout>
void check_broadcast(portalab::kernels::Paths& paths, int rows, int cols, int offset) {
  using Matrix = Kokkos::View<std::int64_t**, Layout, typename Space::memory_space>;
  using Vector = Kokkos::View<std::int64_t*, typename Space::memory_space>;
  // offset > 0: m and z are the last rows·cols elements of a longer buffer.
  Kokkos::View<std::int64_t*, typename Space::memory_space> mbuf("mbuf", rows * cols + offset),
      rbuf("rbuf", rows * cols + offset), cbuf("cbuf", rows * cols + offset);
  Matrix m(mbuf.data() + offset, rows, cols), by_row(rbuf.data() + offset, rows, cols),
      by_column(cbuf.data() + offset, rows, cols);
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
  portalab::kernels::broadcast_add_row(exec, paths, m, row, by_row);
  portalab::kernels::broadcast_add_column(exec, paths, m, column, by_column);
  exec.fence();
  auto got_row = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_row);
  auto got_column = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), by_column);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      ASSERT_EQ(got_row(i, j), hm(i, j) + hr(j)) << rows << "x" << cols << " +" << offset;
      ASSERT_EQ(got_column(i, j), hm(i, j) + hc(i)) << rows << "x" << cols << " +" << offset;
    }
}

TYPED_TEST(Kernels, BroadcastAddsARowToEveryRowAndAColumnToEveryColumn) {
  using Space = TypeParam;
  with_either_store([&](portalab::kernels::Paths& paths) {
    for (auto [rows, cols] : {std::pair{1, 1},
                              {1, 9},
                              {9, 1},
                              {7, 3},
                              {3, 7},
                              {33, 129},
                              {131, 257},
                              {1, 300},
                              {300, 1}})
      for (int offset : {0, 1}) {
        check_broadcast<Space, Kokkos::LayoutLeft>(paths, rows, cols, offset);
        check_broadcast<Space, Kokkos::LayoutRight>(paths, rows, cols, offset);
      }
  });
  // A column range of a LayoutRight matrix: not contiguous, the 2-D path.
  using Matrix = Kokkos::View<std::int64_t**, Kokkos::LayoutRight, typename Space::memory_space>;
  Matrix m("m", 5, 8), z("z", 5, 3);
  Kokkos::deep_copy(m, 4);
  Kokkos::View<std::int64_t*, typename Space::memory_space> row("row", 3);
  Kokkos::deep_copy(row, 3);
  Space exec;
  portalab::kernels::Paths paths;
  portalab::kernels::broadcast_add_row(exec, paths,
                                       Kokkos::subview(m, Kokkos::ALL, std::pair(2, 5)), row, z);
  exec.fence();
  auto hz = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), z);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) ASSERT_EQ(hz(i, j), 7) << i << "," << j;
}

// The paths kernels report, as rows record them: a device's own loops; on a
// host, the policy's choice where the views are contiguous, and the general
// loop where they are not.
TYPED_TEST(Kernels, EachKernelSaysThePathItTook) {
  using Space = TypeParam;
  using View = typename TestFixture::View;
  namespace k = portalab::kernels;
  constexpr bool host = k::is_host_exec_v<Space>;
  const bool streams = host && k::streaming_stores_compiled;
  const std::size_t n = 1000;
  const auto x = TestFixture::filled("x", n, 2.0), y = TestFixture::filled("y", n, -3.0);
  View z("z", n), t1("t1", n), t2("t2", n);
  Kokkos::View<double, typename Space::memory_space> dot("dot");
  Space exec;
  auto taken = [&](const k::HostPolicy& policy, auto&& call) {
    k::Paths paths(policy);
    call(paths);
    exec.fence();
    return paths.names();
  };
  k::HostPolicy plain, always, beyond;
  always.streaming_from = always.copy_streaming_from = always.dot_chain_from = 0;
  // One byte more than any of these calls' arrays together.
  beyond.streaming_from = beyond.copy_streaming_from = beyond.dot_chain_from =
      std::int64_t(3 * n * sizeof(double)) + 1;
  auto copy = [&](k::Paths& p) { k::stream_copy(exec, p, x, z); };
  auto fused = [&](k::Paths& p) { k::squared_diff_fused(exec, p, x, y, z); };
  auto unfused = [&](k::Paths& p) {
    k::vector_poly_unfused(exec, p, 1.0, 2.0, 3.0, x, y, t1, t2, z);
  };
  auto reduce = [&](k::Paths& p) { k::dot_reduce(exec, p, x, y, dot); };
  EXPECT_EQ(taken(plain, copy), host ? "memcpy" : "loops");
  EXPECT_EQ(taken(always, copy), streams ? "streaming-stores" : host ? "memcpy" : "loops");
  EXPECT_EQ(taken(beyond, copy), host ? "memcpy" : "loops");
  EXPECT_EQ(taken(plain, fused), "loops");
  EXPECT_EQ(taken(always, fused), streams ? "streaming-stores" : "loops");
  EXPECT_EQ(taken(beyond, fused), "loops");
  // NumPy's way: its operators in place (t1 = a·t1) have read what they
  // write and never stream.
  EXPECT_EQ(taken(always, unfused), streams ? "loops+streaming-stores" : "loops");
  EXPECT_EQ(taken(plain, reduce), host ? "dot-vectors" : "loops");
  EXPECT_EQ(taken(always, reduce), host ? "dot-chain" : "loops");
  EXPECT_EQ(taken(beyond, reduce), host ? "dot-vectors" : "loops");
  // Every other element: the general loop, whatever the policy.
  Kokkos::View<double*, Kokkos::LayoutStride, typename Space::memory_space> odd(
      x.data(), Kokkos::LayoutStride(n / 2, 2));
  View half("half", n / 2);
  EXPECT_EQ(taken(always, [&](k::Paths& p) { k::stream_copy(exec, p, odd, half); }), "loops");
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
