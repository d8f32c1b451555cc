// One measured entry of a run, its statistics, and the files and tables made
// from a list of them.
#pragma once

#include "deck/catalog.hpp"
#include "experiment/check.hpp"
#include "experiment/metrics.hpp"
#include "deck/copy_mode.hpp"
#include "energy/energy.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace portalab {

// Milliseconds over the timed repetitions.
struct PhaseStats {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double stddev = 0.0;  // sample standard deviation
};
PhaseStats summarize(std::vector<double> samples_ms);

// not_applicable: the space cannot run the variant at all (an OpenMP with 2
// threads cannot be split into 8 instances), said instead of failing.
enum class Status { pass, fail, skipped, error, not_applicable };
std::string_view to_string(Status s);

// The limit a row's rate is held to: which one (its bound), its value (GB/s
// or GFLOP/s) and, for transfers, the copy mode it was measured with.
struct Limit {
  Bound bound = Bound::memory;
  double value = 0.0;  // 0: not calibrated
  CopyMode copies = CopyMode::pageable;
  // A memory or read limit, and the row's bytes leave the last-level cache
  // as STREAM has it (SpaceLimits::beyond_cache): above 100% means the
  // limit reads low, not that a cache served the row.
  bool beyond_cache = false;
  // The level of the space's bandwidth ladder the row's working set lives in
  // ("L1", "L2", "L3", "memory", "HBM"), whose bandwidth a memory or read
  // limit is; empty where the calibration has no ladder or the limit is a link's.
  std::string level;
  // Why the row, above 105% of this limit, makes the limit suspect; empty
  // when it is not.
  std::string suspect;
  // The bound the experiment declared (a memory row whose level's roof is
  // above the gemm rate at its FLOPs per byte is held to the gemm rate).
  Bound declared = Bound::memory;

  bool known() const { return value > 0; }
  // "memory 4105 GB/s", "L2 180 GB/s", "L2 read 210 GB/s",
  // "gemm 51000 GFLOP/s", "duplex pinned copies 110 GB/s"
  std::string text() const;
  std::string_view kind() const;  // the first word of text()
  std::string_view unit() const;  // "GB/s" or "GFLOP/s"
  // As the files hold it: {name, value, unit} (and copies, for a transfer);
  // null when not calibrated.
  nlohmann::json to_json() const;
};

// "chunks=16 degree=2000": an experiment's parameters as rows print them.
// Given the experiment, a parameter of named choices prints the name, as a
// deck gives it ("scaling=strong", not its number).
std::string to_string(const Parameters& p, std::string_view experiment = {});
// The same as the files hold them: numbers, and names for named choices.
nlohmann::json parameters_json(const Parameters& p, std::string_view experiment);

struct Result {
  std::string experiment, variant, space, dtype;
  std::string library;  // what served the kernel: cuBLAS, OpenBLAS, cuSOLVER, native, ...
  // The code path the kernel phase took (row_path): "loops",
  // "streaming-stores", "memcpy", "dot-vectors", "dot-chain" (joined by '+'
  // where its kernels took several), "library", or "" for a variant of one
  // path. The vocabulary: docs/result-files.md.
  std::string path;
  // The space's concurrency (Serial 1, OpenMP or Threads its threads, a
  // device's resident threads), and the threads the host BLAS/LAPACK ran
  // with: 0 no host library call, -1 a count the library does not tell
  // (null in the files).
  int threads = 0;
  int library_threads = 0;
  std::size_t n = 0;
  Parameters parameters;  // the experiment's own settings
  CopyMode copies = CopyMode::pageable;
  int reps = 0, warmups = 0;  // reps: the timed repetitions run
  Status status = Status::error;
  PhaseStats h2d, kernel, d2h, total;  // total: of h2d + kernel + d2h per repetition
  // Each timed repetition's kernel phase and total, in the order run: what a
  // test of a difference between two runs compares (compare).
  std::vector<double> kernel_reps_ms, total_reps_ms;
  // The kernel and total medians of each pass (AdaptiveReps::passes), where
  // there were several: how far the row moves between two cases' arrays at
  // two times, which the verdicts hold a change to.
  std::vector<double> pass_kernel_ms, pass_total_ms;
  // The 95% confidence interval of the kernel median from order statistics,
  // and its larger half over the median (infinite where fewer than 6
  // repetitions cannot bound it: support/stats.hpp).
  double median_ci_low_ms = 0.0, median_ci_high_ms = 0.0;
  double rel_ci95 = 0.0;
  // Repetitions until steady: the target rel_ci95 (0: a fixed count), and
  // why they stopped: "reps" (the fixed count), "noise" (the target met),
  // "max_reps" or "max_time" (the budget ran out first: the row is noisy).
  double noise_target = 0.0;
  std::string stopped_by;
  bool noisy() const { return stopped_by == "max_reps" || stopped_by == "max_time"; }
  double cold_ms = 0.0;                   // the entry's first call, before any warm-up
  bool first_in_process = false;          // ... and the first of this kernel in the process
  bool copies_alias = false;              // host space: the mirror is the data, copies are 0
  double bytes = 0.0, flops = 0.0;        // declared per repetition
  double footprint = 0.0;                 // bytes its case allocates (all ranks' cases)
  double resident_bytes = 0.0;            // Work::resident_bytes (all ranks'); 0: the footprint
  double gbps = 0.0, gflops = 0.0;        // from the kernel phase's median
  double h2d_gbps = 0.0, d2h_gbps = 0.0;  // bytes of the inputs / outputs per copy
  double launches = 0.0;                  // declared per repetition, where launches are measured
  double us_per_launch = 0.0;             // kernel phase's median / launches
  // Against the machine's limits, when calibrated: the kernel's rate as a
  // fraction of the limit that bounds it, and each copy's against the best
  // transfer of its kind (0 when not known).
  Limit limit;
  double pct_of_limit = 0.0, h2d_pct_of_limit = 0.0, d2h_pct_of_limit = 0.0;
  double speedup_over_baseline = 0.0;  // the baseline space's total / this total; 0: none
  std::string baseline;                // the space speedup_over_baseline is against
  // How the kernel phase was timed: one fence on the case's instance, or
  // the experiment's own fences on each instance it ran on.
  std::string timed_by = "instance fence";
  // Figures the experiment measured beside the phases (median over the
  // repetitions), and those relating it to the case's other variants.
  Metrics metrics;
  Check check;
  std::string note;
  std::string shown;  // the outputs as the lab prints them (console only)
  // Ranks that ran the entry together (Entry::ranks). With more than one, the
  // phases are the slowest rank's at each repetition, the work is all
  // ranks' together, and these say how the ranks differed: the least and
  // largest of the ranks' own kernel medians, the imbalance (largest over
  // their mean, less 1) and each rank's figures.
  int ranks = 1;
  double rank_kernel_min_ms = 0.0, rank_kernel_max_ms = 0.0, imbalance = 0.0;
  nlohmann::json per_rank;  // [{rank, host, device, kernel_ms, total_ms, cold_ms, check, energy}]
  // The energy, clocks and power of the timed repetitions (energy.hpp);
  // empty when not measured (--energy off, or the entry did not run).
  std::optional<EntryEnergy> energy;

  double metric(std::string_view name, double absent = 0.0) const;
  void set_metric(const std::string& name, double value);
};

// A row's `threads`: the space's concurrency, followed by the host library's
// count where it differs ("2 (library 1)") or cannot be known
// ("1 (library: unknown)"); library_threads as in Result.
std::string threads_text(int space_threads, int library_threads);

// A row's path: the paths its kernels reported (kernels::Paths::names);
// else "library" where a library served the call; else "" (no choice).
std::string row_path(std::string_view kernel_paths, std::string_view library);

// Rows as files and tables print them, all from one table of fields
// (result.cpp): JSON, CSV and the console table cannot disagree.
nlohmann::json to_json(const Result& r);
std::vector<std::string> csv_header();
std::vector<std::string> csv_row(const Result& r);
std::string csv_line(const Result& r);  // csv_row joined, with its newline

// A console table of the results of one experiment, as the labs print them.
std::string format_table(std::span<const Result> results, const std::string& experiment);

}  // namespace portalab
