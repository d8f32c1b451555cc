// The machine's limits, measured per execution space: memory bandwidth,
// host<->device bandwidth, the vendor library's gemm rate, launch latency.
// Every result row is then reported as a fraction of the limit that bounds it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

struct TransferPoint {
  std::size_t bytes = 0;
  double gbps = 0.0;
};

// A limit whose repeated measurements disagree: the slowest repetition took
// more than unsteady_ratio times the fastest (a busy machine, a clock that
// changed). Its values, in the limit's unit: from the fastest and slowest.
constexpr double unsteady_ratio = 1.5;
struct Unsteady {
  std::string limit;  // "triad_gbps", "launch_us", ...
  double fastest = 0.0, slowest = 0.0;
  int repetitions = 0;
};

struct SpaceLimits {
  std::string space;
  bool host = true;
  // Bytes read plus bytes written per second within the space's memory.
  double copy_kernel_gbps = 0.0;     // a parallel_for copy
  double copy_deep_copy_gbps = 0.0;  // Kokkos::deep_copy (memcpy / cudaMemcpy)
  double triad_gbps = 0.0;           // a = b + s*c
  std::size_t stream_bytes = 0;      // size of each array of those: beyond the last cache
  // Host<->device, device spaces only: sizes swept, and the best of each.
  std::map<std::string, std::vector<TransferPoint>> transfers;  // "h2d_pinned", ...
  // Vendor gemm, GFLOP/s by dtype, with the library that ran (from its region name).
  std::map<std::string, double> gemm_gflops;
  std::map<std::string, std::string> gemm_library;
  std::size_t gemm_n = 0;
  double launch_us = 0.0;  // an empty kernel: launch and fence, median
  std::vector<Unsteady> unsteady;  // limits not to be trusted

  // The memory-bandwidth limit: the best of copy, memcpy and triad.
  double memory_gbps() const;
  double transfer_gbps(const std::string& kind) const;  // best of a sweep, 0 if none
};

struct Calibration {
  std::string mode;  // "quick" or "full"
  double seconds = 0.0;
  std::vector<SpaceLimits> spaces;
  const SpaceLimits* find(const std::string& space) const;
};

struct CalibrationOptions {
  bool quick = false;              // smaller sizes and fewer repetitions
  std::ostream* progress = nullptr;  // one line per measurement
};

// Measures the named spaces (all compiled ones if empty). Needs Kokkos initialised.
Calibration calibrate(const std::vector<std::string>& spaces, const CalibrationOptions& options);

nlohmann::json to_json(const Calibration& c);
// Reads what to_json wrote; throws InputError naming the file when a field is missing.
Calibration calibration_from_json(const nlohmann::json& j, const std::string& path);
std::string format_calibration(const Calibration& c);

}  // namespace portalab
