// Google Benchmark microbenchmarks of the kernels in every enabled space.
// Manual time: each iteration ends with a fence on the instance that ran it;
// bytes_per_second comes from each kernel's declared traffic.
//   build/host/tests/portalab_bench --benchmark_filter=OpenMP
// The labs' streaming kernels run at n = 1e8 only, the size of the GPU targets:
//   portalab_bench --benchmark_filter='(stream_copy|lab/).*/Cuda/.*/100000000'
#include "kernels/elementwise.hpp"
#include "fenced.hpp"
#include "kernels/stream.hpp"
#include "kernels/vector_poly.hpp"
#include "platform/spaces.hpp"

#include <Kokkos_Core.hpp>
#include <benchmark/benchmark.h>

#include <string>

namespace {

using portalab::bench::fenced;

template <class Space, class T>
void register_for() {
  using View = Kokkos::View<T*, typename Space::memory_space>;
  const std::string suffix = std::string("/") + Space::name() + "/" +
                             (sizeof(T) == 8 ? "float64" : "float32");
  auto arrays = [](std::int64_t n) {
    View x("x", n), y("y", n), z("z", n), t1("t1", n), t2("t2", n);
    Kokkos::deep_copy(x, T(0.5));
    Kokkos::deep_copy(y, T(0.25));
    return std::array<View, 5>{x, y, z, t1, t2};
  };
  benchmark::RegisterBenchmark(("vector_poly_fused" + suffix).c_str(),
                               [=](benchmark::State& s) {
                                 auto [x, y, z, t1, t2] = arrays(s.range(0));
                                 Space exec;
                                 portalab::kernels::Paths paths;  // plain paths: no calibration
                                 fenced(s, exec, 3.0 * sizeof(T) * s.range(0), [&] {
                                   portalab::kernels::vector_poly_fused(exec, paths, T(3.5), T(2.8),
                                                                        T(10), x, y, z);
                                 });
                               })
      ->RangeMultiplier(100)
      ->Range(10'000, 100'000'000)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("vector_poly_unfused" + suffix).c_str(),
                               [=](benchmark::State& s) {
                                 auto [x, y, z, t1, t2] = arrays(s.range(0));
                                 Space exec;
                                 portalab::kernels::Paths paths;  // plain paths: no calibration
                                 fenced(s, exec, 11.0 * sizeof(T) * s.range(0), [&] {
                                   portalab::kernels::vector_poly_unfused(
                                       exec, paths, T(3.5), T(2.8), T(10), x, y, t1, t2, z);
                                 });
                               })
      ->RangeMultiplier(100)
      ->Range(10'000, 100'000'000)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("stream_copy" + suffix).c_str(),
                               [=](benchmark::State& s) {
                                 auto [x, y, z, t1, t2] = arrays(s.range(0));
                                 Space exec;
                                 portalab::kernels::Paths paths;  // plain paths: no calibration
                                 fenced(s, exec, 2.0 * sizeof(T) * s.range(0),
                                        [&] { portalab::kernels::stream_copy(exec, paths, x, z); });
                               })
      ->RangeMultiplier(100)
      ->Range(10'000, 100'000'000)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("stream_copy_naive" + suffix).c_str(),
                               [=](benchmark::State& s) {
                                 auto [x, y, z, t1, t2] = arrays(s.range(0));
                                 Space exec;
                                 portalab::kernels::Paths paths;  // plain paths: no calibration
                                 fenced(s, exec, 2.0 * sizeof(T) * s.range(0), [&] {
                                   portalab::kernels::stream_copy_naive(exec, paths, x, z);
                                 });
                               })
      ->RangeMultiplier(100)
      ->Range(10'000, 100'000'000)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  // The labs' streaming kernels at 1e8, against stream_copy/<space>/<type>/100000000.
  auto lab = [&](const char* name, portalab::kernels::PerElement w, auto kernel) {
    benchmark::RegisterBenchmark((std::string("lab/") + name + suffix).c_str(),
                                 [=](benchmark::State& s) {
                                   auto views = arrays(s.range(0));
                                   Space exec;
                                   portalab::kernels::Paths paths;  // plain paths: no calibration
                                   fenced(s, exec, w.arrays * sizeof(T) * s.range(0),
                                          [&] { kernel(exec, paths, views); });
                                 })
        ->Arg(100'000'000)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  };
  namespace k = portalab::kernels;
  lab("squared_diff_fused", k::squared_diff_fused_work,
      [](const Space& e, k::Paths& p, const auto& v) {
        k::squared_diff_fused(e, p, v[0], v[1], v[2]);
      });
  lab("squared_diff_unfused", k::squared_diff_unfused_work,
      [](const Space& e, k::Paths& p, const auto& v) {
        k::squared_diff_unfused(e, p, v[0], v[1], v[3], v[4], v[2]);
      });
  lab("cube_product", k::cube_product_work,
      [](const Space& e, k::Paths& p, const auto& v) { k::cube_product(e, p, v[0], v[1], v[2]); });
  lab("gaussian_pdf", k::gaussian_pdf_work, [](const Space& e, k::Paths& p, const auto& v) {
    k::gaussian_pdf(e, p, T(0), T(1), v[0], v[2]);
  });
  lab("polar_distance", k::polar_distance_work, [](const Space& e, k::Paths& p, const auto& v) {
    k::polar_distance(e, p, v[0], v[1], v[3], v[4], v[2]);
  });
}

// broadcast_add's two kernels on an int64 n×n matrix (lab 004), in the
// space's layout: 10000² on a GPU (issue 13's size), 4000² on a host.
template <class Space>
void register_broadcast() {
  using Matrix = Kokkos::View<std::int64_t**, typename Space::memory_space>;
  using Vector = Kokkos::View<std::int64_t*, typename Space::memory_space>;
  const std::int64_t n = portalab::is_host_space_v<Space> ? 4000 : 10000;
  for (bool by_row : {true, false}) {
    benchmark::RegisterBenchmark(
        (std::string("broadcast_add_") + (by_row ? "row/" : "column/") + Space::name() + "/int64")
            .c_str(),
        [=](benchmark::State& s) {
          const std::int64_t side = s.range(0);
          Matrix m("m", side, side), z("z", side, side);
          Vector v("v", side);
          Kokkos::deep_copy(m, 3);
          Kokkos::deep_copy(v, 4);
          Space exec;
          portalab::kernels::Paths paths;  // plain paths: no calibration
          fenced(s, exec, (2.0 * side * side + side) * sizeof(std::int64_t), [&] {
            if (by_row)
              portalab::kernels::broadcast_add_row(exec, paths, m, v, z);
            else
              portalab::kernels::broadcast_add_column(exec, paths, m, v, z);
          });
        })
        ->Arg(n)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  portalab::for_each_space([](auto tag) {
    using Space = typename decltype(tag)::type;
    register_for<Space, double>();
    register_for<Space, float>();
    register_broadcast<Space>();
  });
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
