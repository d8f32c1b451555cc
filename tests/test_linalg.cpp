// The dense linear-algebra kernels (kernels/gemm.hpp, dot.hpp, factorization.hpp;
// the vendor calls of libraries/vendor_blas.hpp, lapack.hpp) in every enabled
// space against host loops in double, at sizes that are multiples of no tile;
// singular matrices; what the runner does with the experiments (library
// field, memory check, bad decks).
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "kernels/dot.hpp"
#include "kernels/factorization.hpp"
#include "kernels/gemm.hpp"
#include "libraries/lapack.hpp"
#include "libraries/vendor_blas.hpp"
#include "libraries/library_probe.hpp"
#include "experiment/matrix_check.hpp"
#include "engine/runner.hpp"
#include "inline_deck.hpp"
#include "spaces_types.hpp"

#include <KokkosLapack_gesv.hpp>
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using portalab::testing::run_inline;

namespace {

template <class Space>
class Linalg : public ::testing::Test {
 protected:
  using Device = Kokkos::Device<Space, typename Space::memory_space>;
  template <class T>
  using Matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Device>;
  using Pivots = Kokkos::View<int*, Kokkos::LayoutLeft, Device>;

  // A matrix in the space from values given column by column.
  template <class T>
  static Matrix<T> matrix(std::size_t m, std::size_t n, const std::vector<double>& values) {
    Matrix<T> a("a", m, n);
    auto h = Kokkos::create_mirror_view(a);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < m; ++i) h(i, j) = static_cast<T>(values[j * m + i]);
    Kokkos::deep_copy(a, h);
    return a;
  }
  template <class T>
  static Matrix<T> random(std::size_t m, std::size_t n, std::uint64_t seed) {
    std::vector<double> v(m * n);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 2 * portalab::hash_uniform(seed, i) - 1;
    return matrix<T>(m, n, v);
  }
  static std::vector<double> summary_of(const Kokkos::View<double*, Device>& s) {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s);
    return {h(0), h(1), h(2)};
  }
};
TYPED_TEST_SUITE(Linalg, portalab::testing::EnabledSpaceTypes, portalab::testing::SpaceName);

// Both gemm paths against a host product, at shapes no tile divides: 1,
// primes, thin, and several tiles of the GPU's (128) and the host's (64)
// with a ragged edge.
TYPED_TEST(Linalg, GemmTiledAndVendorMatchTheProductAtAwkwardShapes) {
  using Space = TypeParam;
  using Fixture = TestFixture;
  // A lambda in the test body: it may call the fixture's protected helpers.
  auto check = [](auto zero) {
    using T = decltype(zero);
    struct Shape {
      std::size_t m, n, k;
    };
    for (const Shape s : {Shape{1, 1, 1}, Shape{7, 13, 5}, Shape{130, 67, 129}, Shape{3, 200, 17},
                          Shape{257, 131, 263}, Shape{1, 97, 300}, Shape{193, 1, 2}}) {
      auto a = Fixture::template random<T>(s.m, s.k, 1);
      auto b = Fixture::template random<T>(s.k, s.n, 2);
      typename Fixture::template Matrix<T> tiled("tiled", s.m, s.n), vendor("vendor", s.m, s.n);
      Kokkos::deep_copy(tiled, T(-99));  // every element must be written
      Space exec;
      portalab::kernels::gemm_tiled(exec, a, b, tiled);
      portalab::libraries::vendor_gemm(exec, a, b, vendor);
      exec.fence();
      auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
      auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
      auto ht = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), tiled);
      auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), vendor);
      const double tol = portalab::summation_tolerance<T>(static_cast<std::int64_t>(s.k));
      for (std::size_t j = 0; j < s.n; ++j)
        for (std::size_t i = 0; i < s.m; ++i) {
          double c = 0, scale = 0;
          for (std::size_t k = 0; k < s.k; ++k) {
            c += double(ha(i, k)) * hb(k, j);
            scale += std::abs(double(ha(i, k)) * hb(k, j));
          }
          ASSERT_LE(std::abs(ht(i, j) - c), tol * scale)
              << "tiled " << sizeof(T) << "-byte " << s.m << "x" << s.n << "x" << s.k << " at " << i
              << "," << j;
          ASSERT_LE(std::abs(hv(i, j) - c), tol * scale) << "vendor at " << i << "," << j;
        }
    }
  };
  check(0.0f);
  check(0.0);
}

// No K: C = 0.
TYPED_TEST(Linalg, GemmTiledOfAnEmptyInnerDimensionIsZero) {
  using Space = TypeParam;
  typename TestFixture::template Matrix<double> a("a", 5, 0), b("b", 0, 3), c("c", 5, 3);
  Kokkos::deep_copy(c, 1.0);
  Space exec;
  portalab::kernels::gemm_tiled(exec, a, b, c);
  exec.fence();
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i) ASSERT_EQ(hc(i, j), 0.0) << i << "," << j;
}

// The GPU's thread layout (several threads per team, each owning strided rows
// and columns) on whatever team size the space allows: 2×1 and 1×2 threads
// with register blocks no tile size divides.
template <int tx, int ty>
using SmallTeamTiling = portalab::kernels::GemmShape<tx, ty, 3, 5, 4>;
// The GPU shapes' path on two threads: register prefetch into two scratch
// buffers, runs of two doubles read as one 16-byte chunk, padded B rows.
using PrefetchTiling = portalab::kernels::GemmShape<2, 1, 4, 4, 4, 2, 2, 1, 1, 0, 0, 2, true>;

TYPED_TEST(Linalg, GemmTiledWithSeveralThreadsPerTeam) {
  using Space = TypeParam;
  if (Space().concurrency() < 2) GTEST_SKIP() << Space::name() << " runs teams of one thread";
  const std::size_t m = 31, n = 17, k = 23;
  auto a = TestFixture::template random<double>(m, k, 4);
  auto b = TestFixture::template random<double>(k, n, 5);
  typename TestFixture::template Matrix<double> c21("c21", m, n), c12("c12", m, n), cp("cp", m, n);
  Space exec;
  portalab::kernels::gemm_tiled(exec, a, b, c21, SmallTeamTiling<2, 1>{});
  portalab::kernels::gemm_tiled(exec, a, b, c12, SmallTeamTiling<1, 2>{});
  portalab::kernels::gemm_tiled(exec, a, b, cp, PrefetchTiling{});
  exec.fence();
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), cp);
  auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
  auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
  auto h21 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c21);
  auto h12 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c12);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < m; ++i) {
      double c = 0;
      for (std::size_t l = 0; l < k; ++l) c += ha(i, l) * hb(l, j);
      ASSERT_NEAR(h21(i, j), c, 1e-13) << i << "," << j;
      ASSERT_NEAR(h12(i, j), c, 1e-13) << i << "," << j;
      ASSERT_NEAR(hp(i, j), c, 1e-13) << "prefetch " << i << "," << j;
    }
}

// A float32 sum of 1e6 same-sign terms loses digits a float64 accumulator keeps.
TYPED_TEST(Linalg, DotAccumulatesInTheResultsType) {
  using Space = TypeParam;
  const std::size_t n = 1'000'003;
  Kokkos::View<float*, typename Space::memory_space> x("x", n), y("y", n);
  Kokkos::deep_copy(x, 0.1f);
  Kokkos::deep_copy(y, 3.0f);
  Kokkos::View<float, typename Space::memory_space> in_float("f"), vendor("v");
  Kokkos::View<double, typename Space::memory_space> in_double("d");
  Space exec;
  portalab::kernels::Paths paths;
  portalab::kernels::dot_reduce(exec, paths, x, y, in_float);
  portalab::kernels::dot_reduce(exec, paths, x, y, in_double);
  portalab::libraries::vendor_dot(exec, x, y, vendor);
  exec.fence();
  float f = 0, v = 0;
  double d = 0;
  Kokkos::deep_copy(f, in_float);
  Kokkos::deep_copy(d, in_double);
  Kokkos::deep_copy(v, vendor);
  const double exact = double(0.1f) * 3.0 * n;
  EXPECT_NEAR(d, exact, 1e-9 * exact);
  EXPECT_NEAR(v, exact, 0.1 * exact);
  EXPECT_NEAR(f, exact, 0.1 * exact);  // a float sum drifts by percents here
}

// Every term counted once at sizes no chunk or item divides, from aligned,
// misaligned (one element in) and strided views: integer-valued terms, so
// the sums are exact in either type.
template <class Space, class T>
void check_dot_sizes(const portalab::kernels::HostPolicy& policy = {}) {
  portalab::kernels::Paths paths(policy);
  using V = Kokkos::View<T*, typename Space::memory_space>;
  for (std::size_t n : {1, 2, 3, 5, 7, 16, 17, 31, 64, 65, 1000, 100003}) {
    V x("x", 2 * n + 1), y("y", 2 * n + 1);
    auto hx = Kokkos::create_mirror_view(x);
    auto hy = Kokkos::create_mirror_view(y);
    for (std::size_t i = 0; i <= 2 * n; ++i) {
      hx(i) = static_cast<T>(i % 7) - 3;
      hy(i) = static_cast<T>(i % 5) + 1;
    }
    Kokkos::deep_copy(x, hx);
    Kokkos::deep_copy(y, hy);
    auto expect = [&](std::size_t first, std::size_t step) {
      double sum = 0;
      for (std::size_t i = 0; i < n; ++i)
        sum += double(hx(first + step * i)) * hy(first + step * i);
      return sum;
    };
    Kokkos::View<T, typename Space::memory_space> r("r");
    Kokkos::View<double, typename Space::memory_space> r64("r64");
    Space exec;
    for (std::size_t first : {0, 1}) {
      const auto range = std::pair<std::size_t, std::size_t>(first, first + n);
      const auto sx = Kokkos::subview(x, range), sy = Kokkos::subview(y, range);
      portalab::kernels::dot_reduce(exec, paths, sx, sy, r);
      portalab::kernels::dot_reduce(exec, paths, sx, sy, r64);
      exec.fence();
      T got = 0;
      double got64 = 0;
      Kokkos::deep_copy(got, r);
      Kokkos::deep_copy(got64, r64);
      ASSERT_EQ(double(got), expect(first, 1)) << sizeof(T) << "-byte n=" << n << " from " << first;
      ASSERT_EQ(got64, expect(first, 1)) << "acc64 n=" << n << " from " << first;
    }
    using Strided = Kokkos::View<T*, Kokkos::LayoutStride, typename Space::memory_space>;
    const Strided sx(x.data(), Kokkos::LayoutStride(n, 2));
    const Strided sy(y.data(), Kokkos::LayoutStride(n, 2));
    portalab::kernels::dot_reduce(exec, paths, sx, sy, r64);
    exec.fence();
    double got64 = 0;
    Kokkos::deep_copy(got64, r64);
    ASSERT_EQ(got64, expect(0, 2)) << "strided n=" << n;
  }
}

TYPED_TEST(Linalg, DotCountsEveryTermOnceAtAwkwardSizesAndAlignments) {
  check_dot_sizes<TypeParam, float>();
  check_dot_sizes<TypeParam, double>();
}

// The host's float64 dot in one chain (calibration's choice beyond the
// cache where it reads faster), here from the first byte: the same terms.
TYPED_TEST(Linalg, DotInOneChainCountsEveryTermOnce) {
  using Space = TypeParam;
  if constexpr (!portalab::kernels::is_host_exec_v<Space>) {
    GTEST_SKIP() << "a host loop";
  } else {
    portalab::kernels::HostPolicy chain;
    chain.dot_chain_from = 0;
    check_dot_sizes<Space, double>(chain);
  }
}

// det [[0, 2], [3, 4]] = −6 needs a row swap; a 3×3 cyclic permutation has det +1.
TYPED_TEST(Linalg, DeterminantSignAndLogFromPivotedLu) {
  using Space = TypeParam;
  struct Case {
    std::size_t n;
    std::vector<double> columns;
    double sign, log_abs;
  };
  for (const auto& c :
       {Case{2, {0, 3, 2, 4}, -1, std::log(6.0)}, Case{3, {0, 1, 0, 0, 0, 1, 1, 0, 0}, 1, 0.0},
        Case{1, {-0.5}, -1, std::log(0.5)}}) {
    auto a = TestFixture::template matrix<double>(c.n, c.n, c.columns);
    typename TestFixture::Pivots ipiv("ipiv", c.n);
    Kokkos::View<double*, typename TestFixture::Device> summary("s", 3);
    portalab::libraries::LapackWorkspace<Space, double> ws;
    Space exec;
    portalab::libraries::getrf(exec, a, ipiv, ws);
    portalab::kernels::lu_summary(exec, a, ipiv, summary);
    exec.fence();
    const auto s = TestFixture::summary_of(summary);
    EXPECT_EQ(s[0], c.sign) << "n=" << c.n;
    EXPECT_NEAR(s[1], c.log_abs, 1e-14) << "n=" << c.n;
    EXPECT_EQ(s[2], 0.0) << "n=" << c.n;
  }
}

// A singular matrix is reported as sign 0, log|det| = −inf and a zero pivot,
// through the vendor getrf (whose info says so too) and through gesv.
TYPED_TEST(Linalg, SingularMatrixIsReportedNotNaN) {
  using Space = TypeParam;
  // Column 2 is twice column 1 (exact in binary) and column 3 is zero.
  const std::vector<double> columns{1, 2, 3, 0.5, 2, 4, 6, 1, 0, 0, 0, 0, 7, 1, 2, 3};
  for (bool through_gesv : {false, true}) {
    auto a = TestFixture::template matrix<float>(4, 4, columns);
    typename TestFixture::Pivots ipiv("ipiv", 4);
    Kokkos::View<double*, typename TestFixture::Device> summary("s", 3);
    portalab::libraries::LapackWorkspace<Space, float> ws;
    Space exec;
    if (through_gesv) {
      typename TestFixture::template Matrix<float> b("b", 4, 1);
      Kokkos::deep_copy(b, 1.0f);
      KokkosLapack::gesv(exec, a, b, ipiv);
    } else {
      portalab::libraries::getrf(exec, a, ipiv, ws);
    }
    portalab::kernels::lu_summary(exec, a, ipiv, summary);
    exec.fence();
    const auto s = TestFixture::summary_of(summary);
    EXPECT_EQ(s[0], 0.0) << "gesv " << through_gesv;
    EXPECT_EQ(s[1], -std::numeric_limits<double>::infinity()) << "gesv " << through_gesv;
    EXPECT_GE(s[2], 1.0) << "gesv " << through_gesv;
    if (!through_gesv) {
      int info = 0;
      Kokkos::deep_copy(info, ws.info);
      EXPECT_GT(info, 0);  // LAPACK: U(info, info) is exactly zero
    }
  }
}

// QR of a tall-ish awkward size: Q orthogonal, Q·R = A, R upper triangular.
TYPED_TEST(Linalg, QrFactorsReproduceTheMatrix) {
  using Space = TypeParam;
  for (std::size_t n : {1, 5, 67}) {
    auto a = TestFixture::template random<double>(n, n, 3);
    typename TestFixture::template Matrix<double> q("q", n, n), r("r", n, n);
    Kokkos::View<double*, typename TestFixture::Device> tau("tau", n);
    portalab::libraries::LapackWorkspace<Space, double> ws;
    Space exec;
    Kokkos::deep_copy(exec, q, a);
    portalab::libraries::geqrf(exec, q, tau, ws);
    portalab::kernels::upper_triangle(exec, q, r);
    portalab::libraries::orgqr(exec, q, tau, ws);
    exec.fence();
    auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
    auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), q);
    auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r);
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < n; ++i) {
        double qr = 0, qtq = 0;
        for (std::size_t k = 0; k < n; ++k) {
          qr += hq(i, k) * hr(k, j);
          qtq += hq(k, i) * hq(k, j);
        }
        EXPECT_NEAR(qr, ha(i, j), 1e-13) << "n=" << n;
        EXPECT_NEAR(qtq, i == j ? 1.0 : 0.0, 1e-13) << "n=" << n;
        if (i > j) EXPECT_EQ(hr(i, j), 0.0);
      }
  }
}

// Each row names the library that ran: Kokkos Kernels' gemm reports the BLAS
// behind its TPL region (here the host's, by its shared object), the tiled
// kernel "native".
TEST(LinalgRuns, EveryRowRecordsTheLibraryThatRan) {
  const auto summary = run_inline(
      "calibrate = \"none\"\nreps = 1\nwarmups = 0\ncopies = \"none\"\nspaces = [\"Serial\"]\n"
      "[gemm]\nsizes = [20]\n[qr]\nsizes = [9]\n");
  ASSERT_EQ(summary.failed + summary.errors, 0);
  for (const auto& r : summary.results) {
    if (r.variant == "native") EXPECT_EQ(r.library, "native");
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
    if (r.experiment == "gemm" && r.variant == "kokkos_kernels")
      EXPECT_EQ(r.library, portalab::vendor_library("BLAS"));
#endif
    if (r.variant == "vendor") {
      EXPECT_NE(r.library, "native") << r.experiment;
      EXPECT_FALSE(r.library.empty()) << r.experiment;
    }
  }
}

// A size that cannot fit is skipped with the bytes needed and free; the run goes on.
TEST(LinalgRuns, MatrixBeyondMemoryIsSkippedWithTheFigures) {
  const auto summary = run_inline(
      "calibrate = \"none\"\nreps = 1\nwarmups = 0\ncopies = \"none\"\nspaces = [\"Serial\"]\n"
      "[inverse]\nsizes = [10_000_000, 8]\nvariants = [\"vendor\"]\n");
  ASSERT_EQ(summary.results.size(), 2u);
  EXPECT_EQ(summary.results[0].status, portalab::Status::skipped);
  EXPECT_NE(summary.results[0].note.find("needs"), std::string::npos) << summary.results[0].note;
  EXPECT_NE(summary.results[0].note.find("free"), std::string::npos) << summary.results[0].note;
  EXPECT_EQ(summary.results[1].status, portalab::Status::pass);
}

// The name for the direct cuBLAS variant is not one of gemm's: the
// deck says where, and what it could be.
TEST(LinalgRuns, UnknownVariantNamesFileLineColumnAndTheChoices) {
  try {
    portalab::parse_deck("[gemm]\nsizes = [64]\nvariants = [\"cublas\"]\n", "bad.toml",
                         portalab::catalog());
    FAIL() << "accepted an unknown variant";
  } catch (const portalab::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.toml:3:"), std::string::npos) << what;
    EXPECT_NE(what.find("vendor"), std::string::npos) << what;
  }
}

}  // namespace
