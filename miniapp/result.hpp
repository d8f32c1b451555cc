// One measured entry of a run, its statistics, and the files and tables made
// from a list of them.
#pragma once

#include "check.hpp"
#include "copy_mode.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
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

struct Result {
  std::string experiment, variant, space, dtype;
  std::string library;  // what served the kernel: cuBLAS, OpenBLAS, cuSOLVER, native, ...
  // The space's concurrency, and the host library's thread count when a
  // library call ran with another: "2", "2 (library 1)" (threads_text).
  std::string threads;
  std::size_t n = 0;
  std::string parameters;  // the experiment's own settings, "chunks=16 degree=2000"
  CopyMode copies = CopyMode::pageable;
  int reps = 0, warmups = 0;
  Status status = Status::error;
  PhaseStats h2d, kernel, d2h, total;  // total: of h2d + kernel + d2h per repetition
  double cold_ms = 0.0;            // the entry's first call, before any warm-up
  bool first_in_process = false;   // ... and the first of this kernel in the process
  bool copies_alias = false;       // host space: the mirror is the data, copies are 0
  double bytes = 0.0, flops = 0.0;  // declared per repetition
  double gbps = 0.0, gflops = 0.0;  // from the kernel phase's median
  double h2d_gbps = 0.0, d2h_gbps = 0.0;  // bytes of the inputs / outputs per copy
  double launches = 0.0;       // declared per repetition, where launches are measured
  double us_per_launch = 0.0;  // kernel phase's median / launches
  // Against the machine's limits, when calibrated: the kernel's rate as a
  // fraction of the limit that bounds it, and each copy's against the best
  // transfer of its kind (0 when not known).
  std::string limit;  // e.g. "copy 4105 GB/s"
  double pct_of_limit = 0.0, h2d_pct_of_limit = 0.0, d2h_pct_of_limit = 0.0;
  double speedup = 0.0;             // baseline space's total / this total; 0: none
  std::string baseline;             // the space speedup is relative to
  // How the kernel phase was timed: one fence on the case's instance, or
  // the experiment's own fences on each instance it ran on.
  std::string timed_by = "instance fence";
  // Figures the experiment measured beside the phases (median over the
  // repetitions), and those relating it to the case's other variants.
  std::vector<std::pair<std::string, double>> metrics;
  Check check;
  std::string note;

  double metric(std::string_view name, double absent = 0.0) const;
  void set_metric(const std::string& name, double value);
};

// A row's `threads`: the space's concurrency, followed by the host library's
// count when it differs. library_threads: 0 no host library was called, -1
// one was but its count cannot be read or set (not OpenBLAS, MKL or BLIS).
std::string threads_text(int space_threads, int library_threads);

// The row of `variant` among rows, if its check passed; else nullptr.
const Result* passing_row(std::span<const Result> rows, std::string_view variant);

// Fills speedup and baseline: the first host space that ran the same
// experiment, variant, type, size and copy mode is the baseline.
void assign_speedups(std::vector<Result>& results);

nlohmann::json to_json(const Result& r);
std::vector<std::string> csv_header();
std::vector<std::string> csv_row(const Result& r);

// Writes results.csv and results.json into dir, each through a temporary
// file and a rename so a reader never sees a half-written file.
void write_results(const std::string& dir, const std::vector<Result>& results,
                   const nlohmann::json& provenance, const nlohmann::json& summary);

// A console table of the results of one experiment, as the labs print them.
std::string format_table(const std::vector<Result>& results, const std::string& experiment);

}  // namespace portalab
