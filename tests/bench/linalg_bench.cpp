// Google Benchmark entries for issue 3's targets, in every enabled space:
// Kokkos Kernels' gemm against the vendor BLAS called directly and the tiled
// Kokkos kernel; dot at 1e8; the LU and QR paths against bare vendor calls
// (on Cuda: cuSOLVER with a workspace allocated once, no portalab layer).
// Manual time: each iteration ends with a fence on the instance that ran it.
//   portalab_bench --benchmark_filter='gemm.*/Cuda'   (see README)
#include "fenced.hpp"
#include "kernels/dot.hpp"
#include "kernels/factorization.hpp"
#include "kernels/gemm.hpp"
#include "libraries/kokkos_kernels_gemm.hpp"
#include "libraries/lapack.hpp"
#include "libraries/vendor_blas.hpp"
#include "platform/spaces.hpp"

#include <KokkosBlas1_dot.hpp>
#include <KokkosLapack_gesv.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>
#include <benchmark/benchmark.h>

#include <string>

namespace {

// Timed as kernels_bench.cpp's entries, with GFLOP/s from the declared FLOPs.
template <class Space, class F>
void fenced(benchmark::State& state, const Space& exec, double flops, double bytes, F&& call) {
  portalab::bench::fenced(state, exec, bytes, call);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9 * state.iterations(),
                                                 benchmark::Counter::kIsRate);
}

template <class Space, class T>
using Matrix = portalab::libraries::GemmMatrix<Space, T>;

template <class Space, class T>
Matrix<Space, T> random_matrix(const Space& exec, std::int64_t n, std::uint64_t seed) {
  Matrix<Space, T> a(Kokkos::view_alloc(exec, "A"), n, n);
  Kokkos::Random_XorShift64_Pool<Space> pool(seed);
  Kokkos::fill_random(exec, a, pool, T(-1), T(1));
  return a;
}

#if defined(KOKKOS_ENABLE_CUDA)
// A cuSOLVER handle of the benchmarks' own, apart from portalab's and Kokkos
// Kernels'; left to the process's end.
cusolverDnHandle_t bare_handle() {
  static cusolverDnHandle_t h = [] {
    cusolverDnHandle_t made{};
    cusolverDnCreate(&made);
    return made;
  }();
  return h;
}
#endif

template <class Space, class T>
void register_for(const std::vector<std::int64_t>& gemm_sizes, std::int64_t dot_size,
                  const std::vector<std::int64_t>& lapack_sizes) {
  const std::string suffix = std::string("/") + Space::name() + "/" +
                             (sizeof(T) == 8 ? "float64" : "float32");
  auto gemm = [&](const char* name, auto call) {
    auto* b = benchmark::RegisterBenchmark(
        (std::string("gemm_") + name + suffix).c_str(), [=](benchmark::State& s) {
          const Space exec;
          const auto n = s.range(0);
          auto a = random_matrix<Space, T>(exec, n, 1);
          auto b = random_matrix<Space, T>(exec, n, 2);
          Matrix<Space, T> c("C", n, n);
          fenced(s, exec, 2.0 * n * n * n, 3.0 * sizeof(T) * n * n, [&] { call(exec, a, b, c); });
        });
    for (auto n : gemm_sizes) b->Arg(n);
    b->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  gemm("kokkos_kernels", [](const Space& e, const auto& a, const auto& b, const auto& c) {
    portalab::libraries::kokkos_kernels_gemm<Space, T>(e, a, b, c);
  });
  gemm("vendor", [](const Space& e, const auto& a, const auto& b, const auto& c) {
    portalab::libraries::vendor_gemm(e, a, b, c);
  });
  gemm("native", [](const Space& e, const auto& a, const auto& b, const auto& c) {
    portalab::kernels::gemm_tiled(e, a, b, c);
  });
#if defined(KOKKOS_ENABLE_CUDA)
  // Other shapes of the tiled gemm for float64 on the GPU, beside the one
  // GemmTiling picks: the evidence for that choice (gemm_native_shape/...).
  if constexpr (!portalab::kernels::is_host_exec_v<Space> && sizeof(T) == 8) {
    using portalab::kernels::GemmShape;
    auto shape = [&](const char* label, auto tiling) {
      gemm((std::string("native_shape/") + label).c_str(),
           [=](const Space& e, const auto& a, const auto& b, const auto& c) {
             portalab::kernels::gemm_tiled(e, a, b, c, tiling);
           });
    };
    shape("128x128_k8_256t", GemmShape<16, 16, 8, 8, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 1>{});
    shape("64x128_k8_256t", GemmShape<16, 16, 4, 8, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 2>{});
    shape("128x64_k8_256t", GemmShape<16, 16, 8, 4, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 2>{});
    shape("64x64_k16_256t", GemmShape<16, 16, 4, 4, 16, 2, 2, 1, 1, 0, 0, 2, true, true, 2>{});
    shape("64x64_k8_256t", GemmShape<16, 16, 4, 4, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 3>{});
    shape("128x64_k8_128t", GemmShape<16, 8, 8, 8, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 2>{});
    shape("64x128_k8_128t", GemmShape<8, 16, 8, 8, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 2>{});
    shape("128x64_k8_128t_3blocks",
          GemmShape<16, 8, 8, 8, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 3>{});
    shape("64x64_k8_64t", GemmShape<8, 8, 8, 8, 8, 2, 2, 1, 1, 0, 0, 2, true, true, 4>{});
    shape("128x64_k4_128t", GemmShape<16, 8, 8, 8, 4, 2, 2, 1, 1, 0, 0, 2, true, true, 2>{});
  }
#endif

  auto dot = [&](const char* name, auto call) {
    benchmark::RegisterBenchmark((std::string("dot_") + name + suffix).c_str(),
                                 [=](benchmark::State& s) {
                                   const Space exec;
                                   using V = Kokkos::View<T*, typename Space::memory_space>;
                                   V x("x", dot_size), y("y", dot_size);
                                   Kokkos::deep_copy(x, T(0.5));
                                   Kokkos::deep_copy(y, T(0.25));
                                   Kokkos::View<T, typename Space::memory_space> r("r");
                                   Kokkos::View<double, typename Space::memory_space> r64("r64");
                                   fenced(s, exec, 2.0 * dot_size, 2.0 * sizeof(T) * dot_size,
                                          [&] { call(exec, x, y, r, r64); });
                                 })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  dot("kokkos_kernels", [](const Space& e, const auto& x, const auto& y, const auto& r,
                           const auto&) { KokkosBlas::dot(e, r, x, y); });
  dot("vendor", [](const Space& e, const auto& x, const auto& y, const auto& r, const auto&) {
    portalab::libraries::vendor_dot(e, x, y, r);
  });
  // portalab's dot on the plain paths (vector sums: no calibration).
  dot("native", [](const Space& e, const auto& x, const auto& y, const auto& r, const auto&) {
    portalab::kernels::Paths paths;
    portalab::kernels::dot_reduce(e, paths, x, y, r);
  });
  dot("native_acc64", [](const Space& e, const auto& x, const auto& y, const auto&, const auto& r) {
    portalab::kernels::Paths paths;
    portalab::kernels::dot_reduce(e, paths, x, y, r);
  });
  benchmark::RegisterBenchmark(("stream_copy_1e8" + suffix).c_str(),
                               [=](benchmark::State& s) {
                                 const Space exec;
                                 Kokkos::View<T*, typename Space::memory_space> x("x", dot_size),
                                     z("z", dot_size);
                                 fenced(s, exec, 0.0, 2.0 * sizeof(T) * dot_size,
                                        [&] { Kokkos::deep_copy(exec, z, x); });
                               })
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);

  // LU as det runs it (copy, factor, summary) through Kokkos Kernels' gesv
  // and portalab's getrf; QR through libraries/lapack.hpp.
  auto lapack = [&](const char* name, double flops_per_n3, auto call) {
    auto* b = benchmark::RegisterBenchmark(
        (std::string(name) + suffix).c_str(), [=](benchmark::State& s) {
          const Space exec;
          const auto n = s.range(0);
          auto a = random_matrix<Space, T>(exec, n, 3);
          Matrix<Space, T> work("work", n, n), rhs("rhs", n, 1);
          Kokkos::View<int*, Kokkos::LayoutLeft,
                       Kokkos::Device<Space, typename Space::memory_space>>
              ipiv("ipiv", n);
          Kokkos::View<T*, Kokkos::Device<Space, typename Space::memory_space>> tau("tau", n);
          Kokkos::View<double*, Kokkos::Device<Space, typename Space::memory_space>> summary("s",
                                                                                             3);
          portalab::libraries::LapackWorkspace<Space, T> ws;
          fenced(s, exec, flops_per_n3 * n * n * n, 3.0 * sizeof(T) * n * n, [&] {
            Kokkos::deep_copy(exec, work, a);
            call(exec, work, rhs, ipiv, tau, summary, ws);
          });
        });
    for (auto n : lapack_sizes) b->Arg(n);
    b->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  lapack("det_kokkos_kernels", 2.0 / 3.0,
         [](const Space& e, auto& w, auto& rhs, auto& ipiv, auto&, auto& summary, auto&) {
           Kokkos::deep_copy(e, rhs, T(1));
           KokkosLapack::gesv(e, w, rhs, ipiv);
           portalab::kernels::lu_summary(e, w, ipiv, summary);
         });
  lapack("det_vendor", 2.0 / 3.0,
         [](const Space& e, auto& w, auto&, auto& ipiv, auto&, auto& summary, auto& ws) {
           portalab::libraries::getrf(e, w, ipiv, ws);
           portalab::kernels::lu_summary(e, w, ipiv, summary);
         });
  lapack("qr_vendor", 4.0 / 3.0,
         [](const Space& e, auto& w, auto&, auto&, auto& tau, auto&, auto& ws) {
           portalab::libraries::geqrf(e, w, tau, ws);
           portalab::libraries::orgqr(e, w, tau, ws);
         });
#if defined(KOKKOS_ENABLE_CUDA)
  // The same calls on a bare cuSOLVER handle with its workspace allocated
  // once: the floor the wrappers above are measured against.
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    lapack("det_bare_cusolver", 2.0 / 3.0,
           [](const Space& e, auto& w, auto&, auto& ipiv, auto&, auto&, auto& ws) {
             cusolverDnHandle_t h = bare_handle();
             cusolverDnSetStream(h, e.cuda_stream());
             const int n = static_cast<int>(w.extent(0));
             int lwork = 0;
             if constexpr (std::is_same_v<T, float>) {
               cusolverDnSgetrf_bufferSize(h, n, n, w.data(), n, &lwork);
               ws.reserve(e, lwork);
               cusolverDnSgetrf(h, n, n, w.data(), n, ws.work.data(), ipiv.data(), ws.info.data());
             } else {
               cusolverDnDgetrf_bufferSize(h, n, n, w.data(), n, &lwork);
               ws.reserve(e, lwork);
               cusolverDnDgetrf(h, n, n, w.data(), n, ws.work.data(), ipiv.data(), ws.info.data());
             }
           });
    lapack(
        "qr_bare_cusolver", 4.0 / 3.0,
        [](const Space& e, auto& w, auto&, auto&, auto& tau, auto&, auto& ws) {
          cusolverDnHandle_t h = bare_handle();
          cusolverDnSetStream(h, e.cuda_stream());
          const int n = static_cast<int>(w.extent(0));
          int lq = 0, lo = 0;
          if constexpr (std::is_same_v<T, float>) {
            cusolverDnSgeqrf_bufferSize(h, n, n, w.data(), n, &lq);
            cusolverDnSorgqr_bufferSize(h, n, n, n, w.data(), n, tau.data(), &lo);
            ws.reserve(e, std::max(lq, lo));
            cusolverDnSgeqrf(h, n, n, w.data(), n, tau.data(), ws.work.data(), lq, ws.info.data());
            cusolverDnSorgqr(h, n, n, n, w.data(), n, tau.data(), ws.work.data(), lo,
                             ws.info.data());
          } else {
            cusolverDnDgeqrf_bufferSize(h, n, n, w.data(), n, &lq);
            cusolverDnDorgqr_bufferSize(h, n, n, n, w.data(), n, tau.data(), &lo);
            ws.reserve(e, std::max(lq, lo));
            cusolverDnDgeqrf(h, n, n, w.data(), n, tau.data(), ws.work.data(), lq, ws.info.data());
            cusolverDnDorgqr(h, n, n, n, w.data(), n, tau.data(), ws.work.data(), lo,
                             ws.info.data());
          }
        });
  }
#endif
}

[[maybe_unused]] const bool registered = [] {
  portalab::for_each_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    if constexpr (portalab::is_host_space_v<Space>) {
      // Host: the BLAS comparison at sizes a CPU does in well under a second.
      register_for<Space, float>({1024, 2048}, 100'000'000, {512, 2048});
      register_for<Space, double>({1024, 2048}, 100'000'000, {512, 2048});
    } else {
      register_for<Space, float>({4096, 7000}, 100'000'000, {512, 2048, 6000});
      register_for<Space, double>({4096, 8192}, 100'000'000, {512, 2048});
    }
  });
  return true;
}();

}  // namespace
