// The cost of writing N entries' results through ResultFiles (journal plus
// throttled full files), per entry, at N = 200 and N = 2000: a linear total
// cost keeps the two alike. result_files/ratio reports per-entry cost at
// 2000 over that at 200 (about 1 when linear; the files once rewritten after
// every entry gave about 10). Reported, never asserted: timings are not
// pass/fail.
//   build/host/tests/portalab_bench --benchmark_filter=result_files
#include "results/result_files.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

portalab::Result entry(std::size_t i) {
  portalab::Result r;
  r.experiment = "vector_poly";
  r.variant = i % 2 ? "fused" : "unfused";
  r.library = "native";
  r.space = i % 3 ? "OpenMP" : "Serial";
  r.dtype = "float64";
  r.n = 1000 + i;
  r.reps = 10;
  r.warmups = 2;
  r.status = portalab::Status::pass;
  r.total = r.kernel = {0.5, 0.4, 0.7, 0.05};
  r.bytes = 24e3;
  r.flops = 5e3;
  r.gbps = 48.0;
  r.limit = {portalab::Bound::memory, 60.0};
  r.pct_of_limit = 0.8;
  r.note = "inputs created in the space: kernel alone";
  r.metrics = {{"kernels_per_ms", 12.5}, {"first_instance_done_ms", 0.3}};
  return r;
}

// A provenance of the size a real one has (a few kB).
nlohmann::json provenance() {
  nlohmann::json p;
  for (int i = 0; i < 60; ++i) p["field_" + std::to_string(i)] = std::string(60, 'p');
  return p;
}

// Seconds to write n entries, one update each, then finish.
double write_entries(std::size_t n, const fs::path& dir) {
  fs::remove_all(dir);
  std::vector<portalab::Result> rows;
  rows.reserve(n);
  const auto start = std::chrono::steady_clock::now();
  {
    portalab::ResultFiles files(dir.string(), provenance());
    for (std::size_t i = 0; i < n; ++i) {
      rows.push_back(entry(i));
      files.append(std::span(rows).last(1), {{"entries", rows.size()}});
    }
    files.finish({{"entries", rows.size()}});
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fs::remove_all(dir);
  return s;
}

const fs::path bench_dir = fs::temp_directory_path() / "portalab_bench_result_files";

void per_entry(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  double seconds = 0;
  for (auto _ : state) {
    seconds = write_entries(n, bench_dir);
    state.SetIterationTime(seconds);
  }
  state.counters["us_per_entry"] = 1e6 * seconds / static_cast<double>(n);
}
BENCHMARK(per_entry)
    ->Name("result_files/per_entry")
    ->Arg(200)
    ->Arg(2000)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

void ratio(benchmark::State& state) {
  double r = 0;
  for (auto _ : state) {
    const double small = write_entries(200, bench_dir) / 200;
    const double large = write_entries(2000, bench_dir) / 2000;
    r = large / small;
  }
  state.counters["per_entry_2000_over_200"] = r;
}
BENCHMARK(ratio)->Name("result_files/ratio")->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
