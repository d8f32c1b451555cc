// Conclusions drawn from a run's results, the labs' lessons measured: the
// smallest size at which a GPU beats the best host space, how many times
// faster a space runs than its reference, what fusion gains and what 64-bit
// types cost against 32-bit ones. Computed here once: results.json's summary
// carries them (analysis_json), and the scripts read them, never recompute.
#pragma once

#include "results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

// Device against host at one way of counting time.
struct Pays {
  bool measured = false;                  // the device ran at some size the host ran too
  std::optional<std::size_t> smallest_n;  // the smallest size where the device is faster
  bool holds_above = false;               // ... and it stays faster at every larger size
};

// For one experiment, variant, type and device (non-host) space, over the
// sizes both it and some host space ran and passed their checks. The host's
// time at a size is the best of its spaces (host copies are no-ops).
struct Crossover {
  std::string experiment, variant, dtype, device;
  std::vector<std::size_t> sizes;
  Pays with_copies;  // the device's best total over pageable and pinned copies
  Pays with_pageable_copies, with_pinned_copies;  // its total in each copy mode apart
  Pays without_copies;                            // the device's best kernel time alone
  int ranks = 1;                                  // host and device rows of as many ranks each
  // The same in joules per repetition: the device's GPU energy (the whole
  // repetition, or its kernel phase alone) against the host spaces' CPU
  // energy, where both were measured (energy.hpp). Not measured: no energy.
  std::vector<std::size_t> energy_sizes;
  Pays energy_with_copies, energy_without_copies;
};

// k ranks against one, for one experiment, variant, space and type: where
// the group's rate (speedup_over_1_rank) passes 1.
struct RankCrossover {
  std::string experiment, variant, space, dtype;
  CopyMode copies = CopyMode::none;
  int ranks = 2;
  std::vector<std::size_t> sizes;
  Pays pays;
};

// float64 kernel time / float32 kernel time, where both passed.
struct DtypeRatio {
  std::string experiment, variant, space;
  CopyMode copies = CopyMode::none;
  std::size_t n = 0;
  double ratio = 0.0;
};

// How many times faster a space ran than its reference, for one experiment,
// variant, type and rank count, at each size both ran (passed rows): a
// device space against the best host space at that size, a parallel host
// space against Serial (the same lesson on the host's cores): the summary's
// speedup_over_host.
struct Speedup {
  std::string experiment, variant, dtype, space;
  int ranks = 1;
  std::vector<std::string> against;  // the reference spaces: the best of them at each size
  struct At {
    std::size_t n = 0;
    // The reference's best total / this space's best total with copies (a
    // host space: any row; a device: pageable or pinned); none where either
    // lacks one.
    std::optional<double> total;
    std::optional<double> kernel;  // the same of the kernel phase alone, any copy mode
  };
  std::vector<At> sizes;  // increasing n
};

// unfused kernel time / fused kernel time (the best over the copy modes),
// for an experiment with variants "fused" and "unfused" that both passed.
struct FusionRatio {
  std::string experiment, space, dtype;
  int ranks = 1;
  std::size_t n = 0;
  double ratio = 0.0;
};

// Hockney's model of a kernel's time against its size, t(n) = (n + n_half) /
// r_inf, fitted to the best kernel medians (over the copy modes) of one
// experiment, variant, parameters, space, type and rank count at three sizes
// or more: r_inf is the rate as n grows, n_half the size at which half of it
// is reached. Only where the declared work is the same per element at every
// size (the vectors' experiments, not gemm's n^3): the model is a vector's.
struct HockneyFit {
  std::string experiment, variant;
  Parameters parameters;
  std::string space, dtype;
  int ranks = 1;
  std::vector<std::size_t> sizes;  // increasing
  double r_inf = 0.0;              // elements per second
  double r_inf_gbps = 0.0;         // the same in declared bytes; 0: none declared
  double r_inf_gflops = 0.0;       // ... and in declared FLOPs
  double n_half = 0.0;             // elements; 0 where the fit's intercept would be negative
  // The fit's error: the root mean square, over the sizes, of the model's
  // time less the median, over the median.
  double rms_error = 0.0;
};

std::vector<Crossover> find_crossovers(const std::vector<Result>& results);
std::vector<DtypeRatio> find_dtype_ratios(const std::vector<Result>& results);
std::vector<RankCrossover> find_rank_crossovers(const std::vector<Result>& results);
nlohmann::json rank_crossover_json(const std::vector<RankCrossover>& found);

nlohmann::json gpu_crossover_json(const std::vector<Crossover>& found);
nlohmann::json dtype_ratios_json(const std::vector<DtypeRatio>& found);

std::vector<Speedup> find_speedups(const std::vector<Result>& results);
nlohmann::json speedups_json(const std::vector<Speedup>& found);
std::vector<FusionRatio> find_fusion_ratios(const std::vector<Result>& results);
nlohmann::json fusion_json(const std::vector<FusionRatio>& found);
std::vector<HockneyFit> fit_hockney(const std::vector<Result>& results);
nlohmann::json hockney_json(const std::vector<HockneyFit>& found);

// All of the above as results.json's summary holds them (its keys
// gpu_crossover, multi_rank_crossover, float64_over_float32, speedup_over_host, fusion,
// hockney).
nlohmann::json analysis_json(const std::vector<Result>& results);

// The console summary printed after a run: both of the above.
std::string format_analysis(const std::vector<Result>& results);

}  // namespace portalab
