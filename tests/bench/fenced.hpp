// Manual timing for Google Benchmark: each iteration ends with a fence on the
// instance that ran it; bytes per second from the declared traffic.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

namespace portalab::bench {

template <class Space, class F>
void fenced(benchmark::State& state, const Space& exec, double bytes_per_iteration, F&& kernel) {
  kernel();  // first call outside the timing: module loading, first touch, handles
  exec.fence();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    kernel();
    exec.fence("portalab_bench");
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes_per_iteration * state.iterations()));
}

}  // namespace portalab::bench
