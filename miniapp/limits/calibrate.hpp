// The machine's limits, measured per execution space: memory bandwidth,
// host<->device bandwidth, the vendor library's gemm rate, launch latency.
// Every result row is then reported as a fraction of the limit that bounds it.
#pragma once

#include "kernels/paths.hpp"
#include "limits/ladder.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  std::string limit;  // "triad_gbps", "launch_us", "gemm_gflops", "h2d_pinned_gbps", ...
  double fastest = 0.0, slowest = 0.0;
  int repetitions = 0;
  std::string dtype;              // gemm_gflops: the type measured
  std::size_t bytes = 0;          // a transfer: the size of the copy measured
  std::string_view unit() const;  // of limit: "GB/s", "GFLOP/s" or "us"
  std::string text() const;       // "gemm_gflops float32", "h2d_pinned_gbps at 1048576 bytes"
};

// The memory bandwidths of a space measured again during a run, after a row
// beyond the cache ran above the limit they gave (recheck_bandwidth).
struct Recheck {
  std::string after;          // the row: "dot native float64 n=300000000"
  double row_pct = 0.0;       // its share of the limit before
  double limit_before = 0.0;  // that limit (GB/s), and which: "memory" or "read"
  std::string limit;
  // Re-measured, the fastest repetition of each; the space keeps the higher
  // of these and what it had.
  double copy_kernel_gbps = 0.0, copy_deep_copy_gbps = 0.0, triad_gbps = 0.0, read_gbps = 0.0;
  double seconds = 0.0;  // the measurement's own
};

struct SpaceLimits {
  std::string space;
  bool host = true;
  // Bytes read plus bytes written per second within the space's memory, from
  // the fastest repetition (as STREAM reports).
  double copy_kernel_gbps = 0.0;     // a parallel_for copy
  double copy_deep_copy_gbps = 0.0;  // Kokkos::deep_copy (memcpy / cudaMemcpy)
  double triad_gbps = 0.0;           // a = b + s*c
  // Bytes read per second by a kernel that writes nothing (a dot of two
  // arrays): the limit of read-only kernels, which move no written lines
  // (a copy's stores also read each line they write, unless streamed).
  // 0 in files written before it was measured.
  double read_gbps = 0.0;
  std::size_t stream_bytes = 0;  // size of each array of those: beyond the last cache
  std::size_t cache_bytes = 0;   // host spaces: the last-level cache; 0 unknown
  // Host<->device, device spaces only: sizes swept, and the best of each.
  std::map<std::string, std::vector<TransferPoint>> transfers;  // "h2d_pinned", ...
  // Vendor gemm, GFLOP/s by dtype, with the library that ran (from its region name).
  std::map<std::string, double> gemm_gflops;
  std::map<std::string, std::string> gemm_library;
  // Host spaces: the BLAS and the kernels it chose, and a warning where they
  // are narrower than the CPU's vectors (host_blas.hpp).
  std::string gemm_kernels, gemm_kernels_warning;
  std::size_t gemm_n = 0;
  double launch_us = 0.0;  // an empty kernel: launch and fence, median
  // Host spaces: the stores the space's loops use once their arrays outgrow
  // the last-level cache (kernels/range.hpp), "streaming" or "plain", and
  // why: a triad measured both ways on arrays beyond the cache, the faster
  // kept; or PORTALAB_STREAMING_STORES; or a CPU without such stores.
  std::string stores, stores_why;
  double triad_plain_gbps = 0.0, triad_streaming_gbps = 0.0;  // 0: not measured
  std::size_t stores_probe_bytes = 0;  // the three arrays of that triad together
  // The same for the space's copies (stream_copy, the copy limit), measured
  // apart: "plain" (memcpy) or "streaming"; from the copy of two of those arrays.
  std::string copy_stores;
  double copy_plain_gbps = 0.0, copy_streaming_gbps = 0.0;
  // The float64 dot's loop once its arrays outgrow the last-level cache
  // (kernels/dot.hpp): "vectors" (four vector sums) or "chain" (one), the
  // faster of a dot measured both ways on two of those arrays; empty: not
  // measured (vector sums).
  std::string dot_reads;
  double dot_vectors_gbps = 0.0, dot_chain_gbps = 0.0;
  std::vector<Unsteady> unsteady;  // limits not to be trusted
  std::vector<Recheck> rechecks;   // during a run, in order (raised the limits above)
  // The bandwidth of each level, from L1 to memory, measured by a sweep of
  // the working set (ladder.hpp); empty in files written before it was
  // measured (every row is then held to memory_gbps()).
  Ladder ladder;

  // The memory-bandwidth limit: the best of copy, memcpy and triad.
  double memory_gbps() const;
  // The limit of read-only kernels: read_gbps, or memory_gbps() where it was
  // not measured (an older calibration file).
  double read_limit_gbps() const;
  double transfer_gbps(const std::string& kind) const;  // best of a sweep, 0 if none
  // Whether a working set of `bytes` leaves the caches: held to the
  // ladder's last level (memory) and no smaller than the last-level cache
  // the system reports, where known; without a ladder, as STREAM has it
  // (two arrays, each 4x the last-level cache), false where the cache is
  // unknown.
  bool beyond_cache(double bytes) const;
  // The ladder's last level is the space's memory: its bandwidths are at
  // least those measured on the stream arrays (after a recheck too).
  void raise_memory_level();
};

class Comm;

// Between GPUs and among ranks: the limits of the distributed experiments.
struct Links {
  // Copy-engine bandwidth between the GPUs this process sees, GB/s, by
  // device: [i][j] one way from i to j, and i<->j both at once (the sum).
  // Measured by rank 0 alone (cudaMemcpyPeerAsync); empty with fewer than
  // two GPUs visible, with why in peer_note.
  std::vector<std::vector<double>> peer_one_way, peer_both_ways;
  std::size_t peer_bytes = 0;
  std::string peer_note;
  // Allreduce bus bandwidth among the run's ranks (nccl-tests' busbw).
  struct Allreduce {
    std::string space, path;  // path: "nccl" or "mpi_host"
    int ranks = 0;
    std::size_t bytes = 0;
    double busbw_gbps = 0.0;
  };
  std::vector<Allreduce> allreduce;

  // The slowest link among the first `ranks` GPUs (0 when not measured).
  double peer_gbps(int ranks, bool both_ways) const;
  double allreduce_busbw(const std::string& space, int ranks) const;
  bool empty() const { return peer_one_way.empty() && allreduce.empty(); }
};

struct Calibration {
  std::string mode;  // "quick" or "full"
  double seconds = 0.0;
  std::vector<SpaceLimits> spaces;
  Links links;
  const SpaceLimits* find(const std::string& space) const;
};

struct CalibrationOptions {
  bool quick = false;                // smaller sizes and fewer repetitions
  std::ostream* progress = nullptr;  // one line per measurement
  std::string* step = nullptr;       // set to each measurement as it starts
};

// What each step of a space's calibration may take, in seconds. A step
// repeats its measurement while one more repetition ends within its share
// (at least once), and sizes what has a choice (the vendor gemm's n) from
// the rates measured before it; each step is due by the sum of the shares
// up to it, and of the first touch of the arrays allocated so far, so that
// the whole calibration ends within their sum, which it says first ("at
// most N s") (docs/limits.md, "What calibration costs").
struct CalibrationShares {
  double stores = 0, dot_reads = 0;  // host spaces
  double stream = 0;                 // copy, memcpy, triad, read
  double ladder = 0;                 // the sweep of working sets, after the stream
  double transfers = 0;              // device spaces: host<->device
  double gemm = 0;                   // each of float32 and float64
  double launch = 0;
  double total() const {
    return stores + dot_reads + stream + ladder + transfers + 2 * gemm + launch;
  }
};
CalibrationShares calibration_shares(bool host, bool quick);

// Measures the named spaces (all compiled ones if empty). Needs Kokkos
// initialised. A signal (support/interrupt.hpp) stops it between
// measurements: Interrupted, nothing kept.
Calibration calibrate(const std::vector<std::string>& spaces, const CalibrationOptions& options);

// The links among the ranks of `world` and the GPUs rank 0 sees: collective
// (every rank calls it at the same point). Needs Kokkos initialised.
Links calibrate_links(const Comm& world, const std::vector<std::string>& spaces,
                      const CalibrationOptions& options);
nlohmann::json to_json(const Links& links);
Links links_from_json(const nlohmann::json& j);
std::string format_links(const Links& links);

// PORTALAB_STREAMING_STORES: "1" streaming stores beyond the cache, "0"
// plain ones, unset: calibration measures both. Throws InputError naming the
// variable for any other value.
std::optional<bool> host_stores_forced();
// A host space's policy for the kernels that have a choice
// (kernels/paths.hpp), from its calibrated choices (s: null when not
// calibrated) and PORTALAB_STREAMING_STORES, which overrides the stores.
kernels::HostPolicy host_policy_of(const SpaceLimits* s);

// Each host space's kernel policy, as data the run state passes to the
// kernels (RunOptions::host_policies), and what provenance's "host_stores"
// says of it: by host space, the stores, the bytes from which they stream
// (null: never), why, and the dot's reads.
struct HostPolicies {
  std::map<std::string, kernels::HostPolicy, std::less<>> by_space;
  nlohmann::json described;
  // The space's policy; the plain paths for a space not listed (a device's).
  kernels::HostPolicy of(std::string_view space) const;
};
// From `c` (this run's calibration or a file), or PORTALAB_STREAMING_STORES,
// else the plain paths (the kernels' default).
HostPolicies host_policies(const Calibration* c);

// Re-measures `space`'s copy, memcpy, triad and read bandwidths as its
// calibration did (arrays of its stream_bytes, as many repetitions) and keeps
// the higher of each: a row beyond the cache (`after`, at `row_pct` of its
// `limit`, "memory" or "read") outran a limit taken in a slower moment of
// the machine. Records the Recheck and returns it. Throws InputError when the
// space is not compiled, runtime_error when the arrays do not fit now or a
// check fails. Needs Kokkos initialised.
const Recheck& recheck_bandwidth(Calibration& c, const std::string& space, const std::string& after,
                                 double row_pct, const std::string& limit);

// "Serial read limit re-measured after ... : 15.9 -> 17.3 GB/s (...)"
std::string format_recheck(const SpaceLimits& s, const Recheck& r);

nlohmann::json to_json(const Recheck& r);
nlohmann::json to_json(const Calibration& c);
// Reads what to_json wrote; throws InputError naming the file when a field is missing.
Calibration calibration_from_json(const nlohmann::json& j, const std::string& path);
std::string format_calibration(const Calibration& c);

}  // namespace portalab
