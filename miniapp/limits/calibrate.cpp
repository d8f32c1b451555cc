#include "limits/calibrate.hpp"

#include "platform/arrays.hpp"
#include "deck/deck.hpp"
#include "experiment/dtype.hpp"
#include "libraries/host_blas.hpp"
#include "libraries/kokkos_kernels_gemm.hpp"
#include "kernels/dot.hpp"
#include "libraries/library_threads.hpp"
#include "kernels/stream.hpp"
#include "libraries/library_probe.hpp"
#include "platform/memory.hpp"
#include "support/text.hpp"
#include "results/result.hpp"
#include "platform/spaces.hpp"
#include "platform/timing.hpp"
#include "support/interrupt.hpp"

#include <Kokkos_Core.hpp>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <fstream>
#include <cstdlib>
#include <ostream>
#include <string_view>
#include <cstring>
#include <thread>

#include <unistd.h>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace portalab {

double SpaceLimits::memory_gbps() const {
  return std::max({copy_kernel_gbps, copy_deep_copy_gbps, triad_gbps});
}

double SpaceLimits::read_limit_gbps() const { return read_gbps > 0 ? read_gbps : memory_gbps(); }

bool SpaceLimits::beyond_cache(double bytes) const {
  // The sweep's last level may begin inside the last-level cache the system
  // reports, where one thread reads that cache no faster than memory: a
  // working set within it is not beyond the cache.
  if (!ladder.empty())
    return ladder.is_last(ladder.level_for(bytes)) &&
           (cache_bytes == 0 || bytes >= static_cast<double>(cache_bytes));
  return cache_bytes > 0 && bytes >= 8.0 * static_cast<double>(cache_bytes);
}

void SpaceLimits::raise_memory_level() {
  if (ladder.empty()) return;
  Level& memory = ladder.levels.back();
  memory.read_gbps = std::max(memory.read_gbps, read_limit_gbps());
  memory.copy_gbps = std::max({memory.copy_gbps, copy_kernel_gbps, copy_deep_copy_gbps});
  memory.triad_gbps = std::max(memory.triad_gbps, triad_gbps);
}

double SpaceLimits::transfer_gbps(const std::string& kind) const {
  const auto it = transfers.find(kind);
  double best = 0.0;
  if (it != transfers.end())
    for (const auto& p : it->second) best = std::max(best, p.gbps);
  return best;
}

std::string_view Unsteady::unit() const {
  auto ends = [&](std::string_view suffix) {
    return limit.size() >= suffix.size() &&
           limit.compare(limit.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends("_gflops") ? "GFLOP/s" : ends("_us") ? "us" : "GB/s";
}

std::string Unsteady::text() const {
  if (!dtype.empty()) return fmt::format("{} {}", limit, dtype);
  if (bytes > 0) return fmt::format("{} at {} bytes", limit, bytes);
  return limit;
}

const SpaceLimits* Calibration::find(const std::string& space) const {
  for (const auto& s : spaces)
    if (s.space == space) return &s;
  return nullptr;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The calibration's clock: each step is due by the sum of the shares of the
// steps up to it (calibration_shares), counted from the start, so that a
// step that ran over leaves the next ones less time, down to their least
// repetitions, and the whole ends within the sum: the bound printed.
class Schedule {
 public:
  void step(double share) { m_due += share; }
  double left() const { return m_due - seconds_since(m_start); }
  // "within 1.2 s", or how far the steps before ran past their shares: a
  // negative "within" read as a fault.
  std::string within() const {
    const double l = left();
    return l >= 0 ? fmt::format("within {:.1f} s", l)
                  : fmt::format("{:.1f} s behind the schedule", -l);
  }

 private:
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  double m_due = 0;
};

struct Sizes {
  std::size_t stream_elements;  // doubles per array
  std::vector<std::size_t> transfer_bytes;
  std::size_t gemm_n;            // the most: measure_gemm sizes it to its share
  int reps;                      // the most: a scheduled step stops sooner
  Schedule* schedule = nullptr;  // nullptr: reps repetitions, however long
  // Scheduled: the stream arrays may stop at least_elements (0: never
  // shrink) where their first touch leaves the step under measure_s.
  std::size_t least_elements = 0;
  double measure_s = 0;
};

// sample_ms within the step's time: `warmups` untimed calls, then timed ones
// while one as long as the longest so far still ends within `part` of the
// time the step has left (at least one; at most z.reps). A signal stops it.
template <class Space, class F>
std::vector<double> sample_scheduled(Space& e, int warmups, const Sizes& z, double part, F&& f) {
  const auto start = std::chrono::steady_clock::now();
  const double budget = z.schedule ? part * std::max(0.0, z.schedule->left())
                                   : std::numeric_limits<double>::infinity();
  double longest_s = 0;
  for (int i = 0; i < warmups; ++i) {
    throw_if_interrupted();
    longest_s = std::max(longest_s, fenced_ms(e, f) / 1e3);
  }
  std::vector<double> out;
  while (static_cast<int>(out.size()) < z.reps) {
    throw_if_interrupted();
    if (!out.empty() && seconds_since(start) + longest_s > budget) break;
    out.push_back(fenced_ms(e, f));
    longest_s = std::max(longest_s, out.back() / 1e3);
  }
  return out;
}

// Large enough to leave the caches and reach the plateau (host arrays at
// least 4x the last-level cache and, in a full calibration, STREAM's default
// 2^25 doubles, as BabelStream runs; a GPU's L2 is tens of MB), small enough that calibration
// takes seconds (quick) or well under 30 s (full). The host gemm at a size
// where the BLAS runs at its peak: 512 gave OpenBLAS a third of it on 16
// cores; 2048 is near it on a few cores, 4096 on many.
Sizes sizes_for(bool host, bool quick, int host_threads, std::size_t device_free_bytes = 0) {
  if (host) {
    const std::size_t beyond_cache = 4 * last_level_cache_bytes() / sizeof(double);
    // Three arrays: keep them within a quarter of the memory available.
    const std::size_t fits = host_available_bytes() / 4 / 3 / sizeof(double);
    // Quick, a run's default: 64 MB arrays, seconds on any machine. First
    // touch is dear on a virtual machine, and a VM may claim its host's
    // whole L3. Quick limits may so sit partly in a large server's cache
    // (well above its memory's bandwidth), which the limits table says:
    // limits to report come from a full calibration (arrays up to 2 GB).
    const std::size_t n = quick ? std::min(std::size_t{1} << 23, fits)
                                : std::min({std::max<std::size_t>(1u << 25, beyond_cache),
                                            std::size_t{1} << 28, fits});
    const std::size_t gemm_n = quick ? 1024 : host_threads > 4 ? 4096 : 2048;
    // Full: the best of 20, as BabelStream takes the best of its runs (a
    // node's bandwidth wanders between windows a minute apart).
    return quick ? Sizes{n, {}, gemm_n, 3} : Sizes{n, {}, gemm_n, 20};
  }
  // A GPU's bandwidths from 2 GiB arrays, in either mode (a few ms each): on
  // smaller arrays a kernel's fixed cost takes a visible share off the read,
  // and rows of larger sizes then read above the limit; larger arrays gave
  // the same limits. Three arrays within a quarter of the free memory.
  const std::size_t device_n = std::min<std::size_t>(
      std::size_t{1} << 28,
      std::max<std::size_t>(device_free_bytes / 4 / 3 / sizeof(double), 1u << 20));
  // The vendor gemm at 8192 in either mode (milliseconds a product): at 4096
  // cuBLAS runs below its rate at 8192, where the decks' gemm rows run.
  return quick ? Sizes{device_n, {1u << 20, 1u << 26}, 8192, 5}
               : Sizes{device_n, {1u << 20, 1u << 24, 1u << 28, 1u << 30}, 8192, 10};
}

double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

// Which limit a measurement is: its name, and the type or size measured.
Unsteady named(std::string limit, std::string dtype = {}, std::size_t bytes = 0) {
  Unsteady u;
  u.limit = std::move(limit);
  u.dtype = std::move(dtype);
  u.bytes = bytes;
  return u;
}

// A limit whose repetitions disagree is noted (what: the limit's name, and
// its type or size; value: a time turned into the limit's unit).
template <class Value>
void note_unsteady(SpaceLimits& s, Unsteady what, const std::vector<double>& ms, Value value) {
  if (ms.size() >= 2) {
    const auto [fast, slow] = std::minmax_element(ms.begin(), ms.end());
    if (*fast > 0 && *slow > unsteady_ratio * *fast) {
      what.fastest = value(*fast);
      what.slowest = value(*slow);
      what.repetitions = static_cast<int>(ms.size());
      s.unsteady.push_back(std::move(what));
    }
  }
}
// The median of repeated times (gemm, launch).
template <class Value>
double steady_median(SpaceLimits& s, Unsteady what, const std::vector<double>& ms, Value value) {
  note_unsteady(s, std::move(what), ms, value);
  return value(summarize(ms).median);
}
// The fastest repetition, as STREAM and BabelStream report bandwidth: what the
// memory can move. Rows are medians, so a busy machine's rows sit below
// their limit instead of above a limit measured in a slow moment.
template <class Value>
double steady_best(SpaceLimits& s, Unsteady what, const std::vector<double>& ms, Value value) {
  note_unsteady(s, std::move(what), ms, value);
  return value(summarize(ms).min);
}

// A GPU's read limit, raised to what its memory reads past a kernel's fixed
// cost. The dot over floats can read faster than over doubles of the same
// bytes, and a kernel's fixed cost (launch, ramp, the reduction's last
// block) lowers a limit taken as bytes over time, so that a large row read
// above it. So: b and c read as floats too, and each type's rate is the
// marginal one, between half and all of the arrays (a row's rate, its own
// fixed cost included, stays below it). Figures: docs/performance.md,
// "Work per GPU thread".
template <class Space, class View>
void device_read(const Space& exec, SpaceLimits& s, const Sizes& z, const View& b, const View& c) {
  kernels::Paths paths;  // a device's kernels have no choice
  using Memory = typename Space::memory_space;
  Space e = exec;
  const std::size_t bytes = sizeof(double) * z.stream_elements;  // per array
  auto best_ms = [&](auto tag, std::size_t count) {
    using T = decltype(tag);
    using Read = Kokkos::View<const T*, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const Read x(reinterpret_cast<const T*>(b.data()), count),
        y(reinterpret_cast<const T*>(c.data()), count);
    Kokkos::View<T, Memory> result("dot");
    // Four dots after the stream's: each a quarter of what is left.
    const std::vector<double> ms = sample_scheduled(e, 2, z, 1.0 / 4, [&] {
      kernels::dot_reduce(exec, paths, x, y, result);
    });
    note_unsteady(s, named("read_gbps", std::string(dtype_name<T>()), count * sizeof(T)), ms,
                  [&](double t) { return gbps(2.0 * count * sizeof(T), t); });
    // b = 1.0 and c = 2.0 everywhere: as floats (little-endian) the pairs
    // (0, 0) and (1.875, 2), 3.75 a double.
    T product{};
    Kokkos::deep_copy(product, result);
    const double expected = std::is_same_v<T, double> ? 2.0 * count : 3.75 * (count / 2);
    if (std::abs(static_cast<double>(product) - expected) > 1e-3 * expected)
      throw std::runtime_error(
          fmt::format("calibration of {}: read ({} dot) check failed: {} for {}", Space::name(),
                      dtype_name<T>(), product, expected));
    return summarize(ms).min;
  };
  auto marginal = [&](auto tag) {
    using T = decltype(tag);
    const std::size_t count = bytes / sizeof(T);
    const double half = best_ms(T{}, count / 2), all = best_ms(T{}, count);
    return all > half ? gbps(2.0 * sizeof(T) * (count - count / 2), all - half)
                      : gbps(2.0 * bytes, all);
  };
  s.read_gbps = std::max({s.read_gbps, marginal(double{}), marginal(float{})});
}

// The ladder's sweep: working sets from 4 kB to two whole stream arrays,
// `per_octave` points each time the working set doubles; at each, every
// kernel called in batches of at least `batch_ms` (a small working set
// takes a fraction of a microsecond, less than a fence), the fastest of
// `reps` batches; within `share_s`, its own step of the schedule.
struct SweepPlan {
  int per_octave;
  double batch_ms;
  int reps;
  double share_s;
};
SweepPlan sweep_plan(bool quick, double share_s) {
  return quick ? SweepPlan{1, 0.2, 3, share_s} : SweepPlan{2, 1.0, 5, share_s};
}

// The caches a device reports: a GPU's L2.
std::vector<ReportedCache> reported_device_caches([[maybe_unused]] const std::string& space) {
#if defined(KOKKOS_ENABLE_CUDA)
  int device = 0;
  cudaDeviceProp prop{};
  if (space == "Cuda" && cudaGetDevice(&device) == cudaSuccess &&
      cudaGetDeviceProperties(&prop, device) == cudaSuccess && prop.l2CacheSize > 0)
    return {{2, static_cast<double>(prop.l2CacheSize), 1, "cudaDeviceProp::l2CacheSize"}};
#endif
  return {};
}

// The bandwidth ladder (ladder.hpp) on prefixes of the stream arrays (their
// pages touched already): a read (b.c), a copy (b to a) and a triad
// (a = b + 3c) at each working set, bytes read + written; the levels from
// its knees, the memory level at least what the stream arrays measured.
template <class Space, class View>
void measure_ladder(const Space& exec, SpaceLimits& s, const SweepPlan& plan, kernels::Paths& paths,
                    const View& a, const View& b, const View& c, const Schedule* schedule) {
  Space e = exec;
  const auto start = std::chrono::steady_clock::now();
  const double budget = schedule ? std::max(0.0, schedule->left())
                                 : std::numeric_limits<double>::infinity();
  Kokkos::View<double, typename Space::memory_space> dot("ladder_dot");
  auto fastest_ms = [&](auto&& call) {
    fenced_ms(e, call);  // the working set into its level
    const double one = fenced_ms(e, call);
    const int batch = std::clamp(static_cast<int>(plan.batch_ms / std::max(one, 1e-6)), 1, 100000);
    double best = one;
    for (int r = 0; r < plan.reps; ++r)
      best = std::min(best, fenced_ms(e, [&] {
                              for (int i = 0; i < batch; ++i) call();
                            }) / batch);
    return best;
  };
  auto prefix = [](const View& v, std::size_t m) {
    return Kokkos::subview(v, std::make_pair(std::size_t{0}, m));
  };
  const double largest = 2.0 * sizeof(double) * static_cast<double>(a.extent(0));
  auto point = [&](double want) {
    // Two arrays of `half` doubles (read, copy), three of `third` (triad).
    const auto half = std::max<std::size_t>(1, static_cast<std::size_t>(want / 16));
    const auto third = std::max<std::size_t>(1, static_cast<std::size_t>(want / 24));
    SweepPoint p;
    p.bytes = 16.0 * half;
    const auto x = prefix(b, half), y = prefix(c, half), z = prefix(a, half);
    double expected = 2.0 * static_cast<double>(half);
    if constexpr (is_host_space_v<Space>) {
      p.read_gbps = gbps(16.0 * half,
                         fastest_ms([&] { kernels::dot_reduce(exec, paths, x, y, dot); }));
    } else {
      // A device reads a working set in its caches faster than it launches
      // a kernel: each call reads it over and over in one launch, at least
      // 2^25 elements (256 MB) with at least 2^20 items (every SM busy).
      // b (all ones) holds the point's two arrays' worth but at the last
      // point, two whole arrays: there the read takes all of b, a working
      // set far past any cache still.
      const auto w = prefix(b, std::min(2 * half, b.extent(0)));
      const auto items = std::max<std::int64_t>(static_cast<std::int64_t>(w.extent(0)), 1 << 20);
      const int passes = static_cast<int>(
          std::max<std::int64_t>(1, (std::int64_t{1} << 25) / items));
      p.read_gbps = gbps(8.0 * static_cast<double>(items) * passes,
                         fastest_ms([&] { kernels::repeated_read(exec, w, items, passes, dot); }));
      expected = static_cast<double>(items) * passes;
    }
    double product = 0;
    Kokkos::deep_copy(product, dot);
    if (product != expected)
      throw std::runtime_error(
          fmt::format("calibration of {}: ladder read check failed", Space::name()));
    p.copy_gbps = gbps(16.0 * half, fastest_ms([&] { kernels::stream_copy(exec, paths, x, z); }));
    const auto ta = prefix(a, third), tb = prefix(b, third), tc = prefix(c, third);
    p.triad_gbps = gbps(24.0 * third,
                        fastest_ms([&] { kernels::stream_triad(exec, paths, 3.0, ta, tb, tc); }));
    return p;
  };
  // The sweep ends at two whole arrays, or sooner: where its last three
  // points, all of 64 MB or more, run within 15% of what the stream arrays
  // measured (the memory plateau is reached: no slower level lies beyond),
  // or where the next point (twice the last one's time at most) would pass
  // the step's share, said in the notes.
  const double memory = std::max({s.read_limit_gbps(), s.copy_kernel_gbps, s.triad_gbps});
  auto at_memory = [&](const SweepPoint& p) {
    return p.bytes >= 64e6 && std::abs(p.best() - memory) <= 0.15 * memory;
  };
  std::vector<SweepPoint> points;
  std::string stopped;
  double last_s = 0;
  for (int step = 0;; ++step) {
    throw_if_interrupted();
    const double want = 4096.0 * std::pow(2.0, static_cast<double>(step) / plan.per_octave);
    if (want > largest * 1.0001) break;
    if (!points.empty() && seconds_since(start) + 2 * last_s > budget) {
      stopped = fmt::format("the sweep stopped at {:.0f} MB, where its time share ran out",
                            points.back().bytes / 1e6);
      break;
    }
    const auto before = std::chrono::steady_clock::now();
    points.push_back(point(want));
    last_s = seconds_since(before);
    const std::size_t k = points.size();
    if (memory > 0 && k >= 3 && at_memory(points[k - 1]) && at_memory(points[k - 2]) &&
        at_memory(points[k - 3]))
      break;
  }
  // A point a fifth below both its neighbours is a busy moment more likely
  // than a level: measured again (twice at most, while the step's share
  // lasts: no point costs more than the last), the faster of each kernel kept.
  for (std::size_t i = 1; i + 1 < points.size(); ++i)
    for (int again = 0;
         again < 2 && seconds_since(start) + last_s <= budget &&
         points[i].best() < 0.8 * std::min(points[i - 1].best(), points[i + 1].best());
         ++again) {
      const SweepPoint p = point(points[i].bytes);
      points[i].read_gbps = std::max(points[i].read_gbps, p.read_gbps);
      points[i].copy_gbps = std::max(points[i].copy_gbps, p.copy_gbps);
      points[i].triad_gbps = std::max(points[i].triad_gbps, p.triad_gbps);
    }
  s.ladder = find_levels(std::move(points),
                         s.host ? reported_host_caches(exec.concurrency())
                                : reported_device_caches(s.space),
                         s.host ? "memory" : "HBM");
  s.ladder.threads = exec.concurrency();
  if (!stopped.empty()) s.ladder.notes.push_back(stopped);
  s.raise_memory_level();
}

struct Filled {
  std::size_t elements;  // of each array
  double seconds;
};

// The stream arrays' first touch (a = 0, b = 1, c = 2) by the space's own
// threads, 64 MB of each at a time. Scheduled, with z.least_elements, it
// stops once they hold that many and the next slice would leave the step
// less than z.measure_s: a virtual machine's host may back the guest's
// pages only as they are first touched, far slower than the 64 MB the
// bound's rate came from (docs/limits.md), and no repetition count
// shortens a first touch.
template <class Space, class View>
Filled fill_stream_arrays(const Space& exec, const View& a, const View& b, const View& c,
                          const Sizes& z) {
  const std::size_t n = a.extent(0), slice = std::size_t{1} << 23;
  // For the tests: PORTALAB_FAULT=first_touch:MS makes each slice MS ms
  // slower, as a host that backs the guest's pages slowly would.
  int slow_ms = 0;
  if (const char* fault = std::getenv("PORTALAB_FAULT");
      fault && std::string_view(fault).rfind("first_touch:", 0) == 0)
    slow_ms = std::atoi(fault + std::strlen("first_touch:"));
  const auto start = std::chrono::steady_clock::now();
  std::size_t done = 0;
  double last_s = 0;
  while (done < n) {
    throw_if_interrupted();
    if (z.schedule && z.least_elements > 0 && done >= z.least_elements &&
        z.schedule->left() - last_s < z.measure_s)
      break;
    const auto before = std::chrono::steady_clock::now();
    const auto r = std::make_pair(done, std::min(n, done + slice));
    Kokkos::deep_copy(exec, Kokkos::subview(a, r), 0.0);
    Kokkos::deep_copy(exec, Kokkos::subview(b, r), 1.0);
    Kokkos::deep_copy(exec, Kokkos::subview(c, r), 2.0);
    exec.fence("portalab::calibrate::first_touch");
    if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms));
    last_s = seconds_since(before);
    done = r.second;
  }
  return {done, seconds_since(start)};
}

// With `policy`, the kernels' paths of the rows (host_policy_of): the
// limits are of the loops the rows run. With `sweep`, the ladder too.
template <class Space>
void measure_stream(const Space& exec, SpaceLimits& s, const Sizes& z,
                    const kernels::HostPolicy& policy, const SweepPlan* sweep = nullptr) {
  kernels::Paths paths(policy);
  using View = Kokkos::View<double*, typename Space::memory_space>;
  const std::size_t asked = z.stream_elements;
  // Allocated as the experiments' arrays are (arrays.hpp): the limit is of
  // the same pages the rows run on.
  View a = allocate_view<View>("a", asked), b = allocate_view<View>("b", asked),
       c = allocate_view<View>("c", asked);
  std::string shrunk;  // why the arrays are smaller than asked
  if (const Filled f = fill_stream_arrays(exec, a, b, c, z); f.elements < asked) {
    const std::size_t cache = s.host ? last_level_cache_bytes() : 0;
    shrunk = fmt::format(
        "arrays of {:.0f} MB, not the {:.0f} MB planned: their first touch ran at {:.2f} GB/s "
        "and the step's time ran out{}",
        f.elements * sizeof(double) / 1e6, asked * sizeof(double) / 1e6,
        gbps(3.0 * sizeof(double) * f.elements, 1e3 * f.seconds),
        f.elements * sizeof(double) < 4 * cache
            ? fmt::format("; under STREAM's four times the {:.0f} MB cache, the bandwidths may "
                          "be partly the cache's",
                          cache / 1e6)
            : std::string());
    const auto kept = std::make_pair(std::size_t{0}, f.elements);
    a = Kokkos::subview(a, kept), b = Kokkos::subview(b, kept), c = Kokkos::subview(c, kept);
  }
  const std::size_t n = a.extent(0);
  Space e = exec;
  const double copy_bytes = 2.0 * sizeof(double) * n;
  s.stream_bytes = sizeof(double) * n;
  auto copy_rate = [&](double ms) { return gbps(copy_bytes, ms); };
  s.copy_kernel_gbps = steady_best(
      s, named("copy_kernel_gbps"),
      sample_scheduled(e, 2, z, 1.0 / 4, [&] { kernels::stream_copy(exec, paths, b, a); }),
      copy_rate);
  s.copy_deep_copy_gbps = steady_best(
      s, named("copy_deep_copy_gbps"),
      sample_scheduled(e, 2, z, 1.0 / 3, [&] { Kokkos::deep_copy(exec, a, b); }), copy_rate);
  s.triad_gbps = steady_best(
      s, named("triad_gbps"),
      sample_scheduled(e, 2, z, 1.0 / 2, [&] { kernels::stream_triad(exec, paths, 3.0, a, b, c); }),
      [&](double ms) { return gbps(3.0 * sizeof(double) * n, ms); });
  // Sanity: a = 1 + 3*2 everywhere; a wrong kernel would fake a bandwidth.
  if (kernels::sum(exec, a) != 7.0 * static_cast<double>(n))
    throw std::runtime_error(fmt::format("calibration of {}: triad check failed", Space::name()));
  // Reading alone: b·c, two arrays read and nothing written.
  Kokkos::View<double, typename Space::memory_space> dot("dot");
  s.read_gbps = steady_best(s, named("read_gbps"),
                            sample_scheduled(e, 2, z, is_host_space_v<Space> ? 1.0 : 1.0 / 5,
                                             [&] { kernels::dot_reduce(exec, paths, b, c, dot); }),
                            [&](double ms) { return gbps(2.0 * sizeof(double) * n, ms); });
  double product = 0;
  Kokkos::deep_copy(product, dot);
  if (product != 2.0 * static_cast<double>(n))
    throw std::runtime_error(
        fmt::format("calibration of {}: read (dot) check failed", Space::name()));
  if constexpr (!is_host_space_v<Space>) device_read(exec, s, z, b, c);
  if (sweep) {
    if (z.schedule) z.schedule->step(sweep->share_s);
    measure_ladder(exec, s, *sweep, paths, a, b, c, z.schedule);
  }
  if (!shrunk.empty()) s.ladder.notes.push_back(shrunk);
}

// The bytes (a loop's arrays together) from which a space that streams its
// stores does so: the last-level cache; 32 MB where it is unknown.
std::int64_t streaming_from_bytes() {
  const std::size_t cache = last_level_cache_bytes();
  return cache > 0 ? static_cast<std::int64_t>(cache) : std::int64_t(32) << 20;
}

// Three host arrays together twice the last-level cache (or the stream
// size where it is unknown), allocated once per calibration and shared by
// its host spaces (all in HostSpace): first touch is dear on a virtual
// machine and must not be paid twice.
struct StoresProbe {
  using View = Kokkos::View<double*, Kokkos::HostSpace>;
  View a, b, c;
  std::string not_measured;  // why the probe has no arrays
  std::size_t size() const { return a.extent(0); }
};

// The elements of each of its three arrays.
std::size_t stores_probe_elements(std::size_t stream_elements) {
  const std::size_t cache = last_level_cache_bytes();
  return std::min(cache > 0 ? 2 * cache / 3 / sizeof(double) + 1 : stream_elements,
                  host_available_bytes() / 4 / 3 / sizeof(double));
}

StoresProbe make_stores_probe(std::size_t stream_elements) {
  StoresProbe p;
  const std::size_t cache = last_level_cache_bytes();
  const std::size_t n = stores_probe_elements(stream_elements);
  if (3 * n * sizeof(double) < 2 * cache) {
    p.not_measured = fmt::format(
        "not measured: three arrays twice the {:.0f} MB cache do not fit "
        "in a quarter of the memory available",
        cache / 1e6);
    return p;
  }
  p.a = allocate_view<StoresProbe::View>("stores_a", n);
  p.b = allocate_view<StoresProbe::View>("stores_b", n);
  p.c = allocate_view<StoresProbe::View>("stores_c", n);
  return p;
}

// The fastest repetition of kernel(paths) with the policy's `threshold` (a
// kernel's bytes from which it takes its other path) at never, then at
// always, in turn: {never, always}. Rounds go on while one more ends within
// `part` of the time the step has left (at least one, at most 3 to 5).
template <class Space, class Kernel>
std::pair<double, double> fastest_both_ways(const Space& exec, const Sizes& z, double part,
                                            std::int64_t kernels::HostPolicy::*threshold,
                                            Kernel kernel) {
  Space e = exec;
  kernels::HostPolicy other;
  other.*threshold = 0;
  kernels::Paths plain{kernels::HostPolicy{}}, taken(other);
  std::vector<double> never, always;
  const auto start = std::chrono::steady_clock::now();
  const double budget = z.schedule ? part * std::max(0.0, z.schedule->left())
                                   : std::numeric_limits<double>::infinity();
  for (int round = 0; round < std::clamp(z.reps, 3, 5); ++round) {
    throw_if_interrupted();
    // The first round, with its warm-ups, is the longest.
    if (round > 0 && seconds_since(start) * (round + 1) / round > budget) break;
    for (double ms : sample_ms(e, round == 0 ? 1 : 0, 1, [&] { kernel(plain); }))
      never.push_back(ms);
    for (double ms : sample_ms(e, round == 0 ? 1 : 0, 1, [&] { kernel(taken); }))
      always.push_back(ms);
  }
  return {summarize(never).min, summarize(always).min};
}

// Plain or streaming stores for the space's loops beyond the cache: a triad
// both ways, in turn, on the probe's arrays, the fastest repetition of each;
// streaming kept only when 3% faster (they bypass the cache, so a tie goes
// to plain). Non-temporal stores save a quarter of a loop's time on some
// CPUs and cost more than half on others: no rule of thumb decides it
// (docs/performance.md, "Streaming stores on the host").
// Copies stream whenever that is faster: a copy beyond the cache leaves
// nothing of use in it either way (glibc's memcpy itself writes around the
// cache above its non_temporal_threshold), so no tie is owed to memcpy, and
// a small gain over memcpy, short of a 3% margin, still counts. Sets the
// space's stores before its copy and
// triad limits are measured, so that the limits are of the loops the rows run.
template <class Space>
void measure_stores(const Space& exec, SpaceLimits& s, const Sizes& z,
                    std::optional<StoresProbe>& probe) {
  s.stores = s.copy_stores = "plain";
  if (const auto forced = host_stores_forced()) {
    s.stores = s.copy_stores = *forced ? "streaming" : "plain";
    s.stores_why = fmt::format("PORTALAB_STREAMING_STORES={}", *forced ? 1 : 0);
    return;
  }
  if (!kernels::streaming_stores_compiled) {
    s.stores_why = "this CPU architecture has no streaming stores in portalab";
    return;
  }
  if (!probe) probe = make_stores_probe(z.stream_elements);
  if (!probe->not_measured.empty()) {
    s.stores_why = probe->not_measured;
    return;
  }
  const std::size_t n = probe->size();
  Kokkos::deep_copy(exec, probe->a, 0.0);
  Kokkos::deep_copy(exec, probe->b, 1.0);
  Kokkos::deep_copy(exec, probe->c, 2.0);
  // Plain stores (the threshold never), then streaming ones (always).
  const auto [plain_ms, streaming_ms] = fastest_both_ways(
      exec, z, 1.0 / 2, &kernels::HostPolicy::streaming_from,
      [&](auto& paths) { kernels::stream_triad(exec, paths, 3.0, probe->a, probe->b, probe->c); });
  if (kernels::sum(exec, probe->a) != 7.0 * static_cast<double>(n))
    throw std::runtime_error(fmt::format("calibration of {}: stores check failed", Space::name()));
  const auto [copy_plain_ms, copy_streaming_ms] = fastest_both_ways(
      exec, z, 1.0, &kernels::HostPolicy::copy_streaming_from,
      [&](auto& paths) { kernels::stream_copy(exec, paths, probe->c, probe->a); });
  if (kernels::sum(exec, probe->a) != 2.0 * static_cast<double>(n))
    throw std::runtime_error(
        fmt::format("calibration of {}: copy stores check failed", Space::name()));
  s.stores_probe_bytes = 3 * n * sizeof(double);
  s.triad_plain_gbps = gbps(3.0 * sizeof(double) * n, plain_ms);
  s.triad_streaming_gbps = gbps(3.0 * sizeof(double) * n, streaming_ms);
  s.copy_plain_gbps = gbps(2.0 * sizeof(double) * n, copy_plain_ms);
  s.copy_streaming_gbps = gbps(2.0 * sizeof(double) * n, copy_streaming_ms);
  const bool stream = streaming_ms < 0.97 * plain_ms;
  const bool copy_stream = copy_streaming_ms < copy_plain_ms;
  s.stores = stream ? "streaming" : "plain";
  s.copy_stores = copy_stream ? "streaming" : "plain";
  s.stores_why = fmt::format(
      "beyond the cache: triad {:.1f} GB/s streaming, {:.1f} plain; "
      "copy {:.1f} streaming, {:.1f} memcpy",
      s.triad_streaming_gbps, s.triad_plain_gbps, s.copy_streaming_gbps, s.copy_plain_gbps);
}

// Four vector sums or one chain for the space's float64 dot beyond the
// cache (kernels/dot.hpp), on two of the stores probe's arrays, the fastest
// repetition of each; the chain kept only when 3% faster (in the cache the
// vector sums are three to four times as fast). Before the read limit is
// measured, so that the limit is of the loop the rows run.
template <class Space>
void measure_dot_reads(const Space& exec, SpaceLimits& s, const Sizes& z,
                       std::optional<StoresProbe>& probe) {
  if (!probe) probe = make_stores_probe(z.stream_elements);
  if (!probe->not_measured.empty()) return;  // dot_reads stays empty: vector sums
  const std::size_t n = probe->size();
  Kokkos::deep_copy(exec, probe->b, 1.0);
  Kokkos::deep_copy(exec, probe->c, 2.0);
  Kokkos::View<double, Kokkos::HostSpace> dot("dot");
  const auto [vectors_ms, chain_ms] = fastest_both_ways(
      exec, z, 1.0, &kernels::HostPolicy::dot_chain_from,
      [&](auto& paths) { kernels::dot_reduce(exec, paths, probe->b, probe->c, dot); });
  if (dot() != 2.0 * static_cast<double>(n))
    throw std::runtime_error(
        fmt::format("calibration of {}: dot reads check failed", Space::name()));
  s.dot_vectors_gbps = gbps(2.0 * sizeof(double) * n, vectors_ms);
  s.dot_chain_gbps = gbps(2.0 * sizeof(double) * n, chain_ms);
  const bool chain = chain_ms < 0.97 * vectors_ms;
  s.dot_reads = chain ? "chain" : "vectors";
}

template <class Space>
void measure_transfers(const Space& exec, SpaceLimits& s, const Sizes& z) {
  using Pinned = typename PinnedHostSpace<Space>::type;
  if constexpr (!is_host_space_v<Space> && !std::is_void_v<Pinned>) {
    int points_left = 4 * static_cast<int>(z.transfer_bytes.size()) + 1;
    for (std::size_t bytes : z.transfer_bytes) {
      const std::size_t n = bytes / sizeof(double);
      Kokkos::View<double*, typename Space::memory_space> device("device", n);
      // On huge pages where the rows' pageable mirrors are (arrays.hpp):
      // copies from them are faster so.
      auto pageable = allocate_view<Kokkos::View<double*, Kokkos::HostSpace>>("pageable", n);
      Kokkos::deep_copy(pageable, 0.0);
      Kokkos::View<double*, Pinned> pinned("pinned", n);
      Space e = exec;
      auto point = [&](const char* kind, auto&& copy) {
        s.transfers[kind].push_back(
            {bytes, steady_best(s, named(fmt::format("{}_gbps", kind), "", bytes),
                                sample_scheduled(e, 1, z, 1.0 / --points_left, copy),
                                [&](double ms) { return gbps(static_cast<double>(bytes), ms); })});
      };
      point("h2d_pageable", [&] { Kokkos::deep_copy(exec, device, pageable); });
      point("d2h_pageable", [&] { Kokkos::deep_copy(exec, pageable, device); });
      point("h2d_pinned", [&] { Kokkos::deep_copy(exec, device, pinned); });
      point("d2h_pinned", [&] { Kokkos::deep_copy(exec, pinned, device); });
    }
  }
}

// The vendor gemm's n: the largest multiple of 256, up to z.gemm_n, whose
// call takes about `call_s` at the rate of the gemm before it, from n = 256
// up (each size tried is one call, predicted within call_s): a BLAS on
// one core takes seconds a call at the largest n, a GPU milliseconds
// (docs/limits.md, "What calibration costs"). The BLAS runs below its peak
// at small n, so the rate measured there makes the next size's call
// shorter than predicted, not longer.
template <class Space, class T>
std::size_t gemm_size(const Space& exec, const Sizes& z, double call_s, double& gflops) {
  using Matrix = libraries::GemmMatrix<Space, T>;
  Space e = exec;
  std::size_t n = std::min<std::size_t>(256, z.gemm_n);
  for (bool first = true;; first = false) {
    throw_if_interrupted();
    Matrix a("A", n, n), b("B", n, n), c("C", n, n);
    auto gemm = [&] { libraries::kokkos_kernels_gemm<Space, T>(exec, a, b, c); };
    if (first) fenced_ms(e, gemm);  // a library's start (cuBLAS' handle, BLAS threads)
    const double ms = fenced_ms(e, gemm);
    gflops = 2.0 * n * n * n / (std::max(ms, 1e-3) * 1e6);
    const double fits = std::cbrt(gflops * 1e9 * call_s / 2.0);
    const std::size_t next = std::min<std::size_t>(
        z.gemm_n, std::max<std::size_t>(256, static_cast<std::size_t>(fits) / 256 * 256));
    if (next <= n) return n;
    n = next;
  }
}

// One vendor gemm type: its n sized so that a call costs about a fifth of
// the step's time (gemm_size), then an untimed call (which library ran)
// and timed calls within the step's time (the median kept).
template <class Space, class T>
void measure_gemm(const Space& exec, SpaceLimits& s, const Sizes& z, double share,
                  const std::function<void(const std::string&)>& say) {
  using Matrix = libraries::GemmMatrix<Space, T>;
  // At least its own share: where the steps before ran late, a gemm sized
  // to what is left (nothing) is a limit far below the library's, and rows
  // read as hundreds of percent of it (docs/performance.md, the node).
  const double left = z.schedule ? std::max(share, z.schedule->left()) : 0.0;
  // The host BLAS on the space's threads, as in a run (Serial: one), from
  // the sizing calls on: sized on all the node's cores, Serial's gemm took
  // ten times its share.
  const libraries::LibraryThreads threads(exec);
  double rate = 0.0;
  // Never below 512 (where the caps allow): a gemm of 256 measures the
  // library's call more than its arithmetic, and the deck's gemm rows are larger.
  const std::size_t n = z.schedule ? std::max(gemm_size<Space, T>(exec, z, left / 5, rate),
                                              std::min<std::size_t>(512, z.gemm_n))
                                   : z.gemm_n;
  if (z.schedule)
    say(
        fmt::format("{}: vendor gemm {}, n = {}: about {:.2f} s a call (a first call there: "
                    "{:.3g} GFLOP/s); {}",
                    Space::name(), dtype_name<T>(), n, 2.0 * n * n * n / (rate * 1e9), rate,
                    z.schedule->within()));
  Matrix a("A", n, n), b("B", n, n), c("C", n, n);
  Kokkos::deep_copy(exec, a, T(1));
  Kokkos::deep_copy(exec, b, T(0.5));
  auto gemm = [&] { libraries::kokkos_kernels_gemm<Space, T>(exec, a, b, c); };
  {
    // Untimed first call: which library served it, from its profiling region
    // (recording may add fences, so it stays out of the timing).
    RegionRecorder recorder;
    gemm();
    exec.fence();
    // Named as result rows name it ("OpenBLAS", not Kokkos Kernels' "BLAS").
    s.gemm_library[std::string(dtype_name<T>())] = vendor_library(recorder.library());
    if (s.host && recorder.library() == "BLAS") {
      s.gemm_kernels = host_blas_kernels().describe();
      s.gemm_kernels_warning = host_blas_kernels().warning;
    }
  }
  Space e = exec;
  s.gemm_gflops[std::string(dtype_name<T>())] = steady_median(
      s, named("gemm_gflops", std::string(dtype_name<T>())),
      sample_scheduled(e, 0, Sizes{0, {}, n, std::clamp(z.reps / 2, 3, 5), z.schedule}, 1.0, gemm),
      [&](double ms) { return 2.0 * n * n * n / (ms * 1e6); });
  T corner{};
  Kokkos::deep_copy(corner, Kokkos::subview(c, n - 1, n - 1));
  if (corner != T(0.5) * static_cast<T>(n))
    throw std::runtime_error(fmt::format("calibration of {}: gemm check failed", Space::name()));
  s.gemm_n = n;
}

template <class Space>
void measure_launch(const Space& exec, SpaceLimits& s, const Sizes& z) {
  Space e = exec;
  int launches = 10;
  auto some = [&] {
    for (int i = 0; i < launches; ++i) {
      kernels::empty_kernel(exec);
      exec.fence();
    }
  };
  // Ten to warm up and to size the repetitions: up to 200 launches each,
  // four of them within the step's time (a busy machine's fences take ms).
  const double ten_s = fenced_ms(e, some) / 1e3;
  const double left = z.schedule ? std::max(0.0, z.schedule->left()) : 1e9;
  launches = static_cast<int>(std::clamp(left / 4 / std::max(ten_s / 10, 1e-9), 10.0, 200.0));
  std::vector<double> per_launch_us;
  for (double ms : sample_scheduled(e, 0, z, 1.0, some))
    per_launch_us.push_back(1e3 * ms / launches);
  s.launch_us = steady_median(s, named("launch_us"), per_launch_us, [](double us) { return us; });
}

}  // namespace

std::optional<bool> host_stores_forced() {
  const char* v = std::getenv("PORTALAB_STREAMING_STORES");
  if (v == nullptr) return std::nullopt;
  const std::string_view value(v);
  if (value == "0" || value == "1") return value == "1";
  throw InputError(
      fmt::format("PORTALAB_STREAMING_STORES={}: expected 0 (plain stores) or 1 "
                  "(streaming stores beyond the last-level cache); unset, calibration "
                  "measures both and keeps the faster",
                  shown(value)));
}

kernels::HostPolicy host_policy_of(const SpaceLimits* s) {
  const auto forced = host_stores_forced();
  const bool compiled = kernels::streaming_stores_compiled;
  const bool stream = compiled && (forced ? *forced : s && s->stores == "streaming");
  const bool copy_stream = compiled && (forced ? *forced : s && s->copy_stores == "streaming");
  const bool chain = s && s->dot_reads == "chain";
  kernels::HostPolicy p;
  if (stream) p.streaming_from = streaming_from_bytes();
  if (copy_stream) p.copy_streaming_from = streaming_from_bytes();
  if (chain) p.dot_chain_from = streaming_from_bytes();
  return p;
}

kernels::HostPolicy HostPolicies::of(std::string_view space) const {
  const auto it = by_space.find(space);
  return it == by_space.end() ? kernels::HostPolicy{} : it->second;
}

HostPolicies host_policies(const Calibration* c) {
  const auto forced = host_stores_forced();
  HostPolicies out;
  out.described = nlohmann::json::object();
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if constexpr (is_host_space_v<Space>) {
      const SpaceLimits* s = c ? c->find(Space::name()) : nullptr;
      std::string why;
      if (forced)
        why = fmt::format("PORTALAB_STREAMING_STORES={}", *forced ? 1 : 0);
      else if (s && !s->stores.empty())
        why = s->stores_why;
      else
        why = c ? "the calibration did not measure them" : "not calibrated (calibrate = \"none\")";
      const kernels::HostPolicy p = host_policy_of(s);
      const bool stream = p.streaming_from >= 0, copy_stream = p.copy_streaming_from >= 0;
      out.by_space[Space::name()] = p;
      out.described[Space::name()] = {{"stores", stream ? "streaming" : "plain"},
                                      {"copy_stores", copy_stream ? "streaming" : "plain"},
                                      {"from_bytes", stream || copy_stream
                                                         ? nlohmann::json(streaming_from_bytes())
                                                         : nlohmann::json(nullptr)},
                                      {"why", why},
                                      {"dot_reads", p.dot_chain_from >= 0 ? "chain" : "vectors"}};
    }
  });
  return out;
}

CalibrationShares calibration_shares(bool host, bool quick) {
  CalibrationShares s;
  if (quick) {
    s.stores = host ? 0.4 : 0, s.dot_reads = host ? 0.3 : 0, s.stream = 1.2;
    s.transfers = host ? 0 : 0.8, s.gemm = 0.5, s.launch = 0.2, s.ladder = host ? 0.8 : 0.3;
  } else {
    s.stores = host ? 0.8 : 0, s.dot_reads = host ? 0.6 : 0, s.stream = 2.4;
    s.transfers = host ? 0 : 1.4, s.gemm = 0.9, s.launch = 0.3, s.ladder = host ? 1.2 : 0.8;
  }
  return s;
}

namespace {

// Bytes per second that one thread first touches (allocates and fills) on
// the host: what the arrays a step allocates cost before it can measure,
// which no repetition count shortens. From 64 MB, one thread (parallel
// fills only go faster), the allocation itself included.
double first_touch_gbps() {
  const std::size_t n = std::size_t{1} << 23;
  const auto start = std::chrono::steady_clock::now();
  // Without huge pages (the arrays ask for them): slower to touch, so the
  // bound errs long.
  Kokkos::View<double*, Kokkos::HostSpace> v(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("first_touch")), n);
  std::fill(v.data(), v.data() + n, 1.0);
  return gbps(n * sizeof(double), 1e3 * seconds_since(start));
}

// The host bytes a space's calibration first touches: its stream arrays,
// each written twice (initialised, then filled), and a device's pageable
// and pinned transfer buffers. The stores probe's, once for all host
// spaces, are counted apart (also written twice).
double touched_bytes(bool host, const Sizes& z) {
  double bytes = host ? 2.0 * 3 * sizeof(double) * z.stream_elements : 0.0;
  for (std::size_t b : z.transfer_bytes) bytes += 2.0 * b;
  return bytes;
}

}  // namespace

Calibration calibrate(const std::vector<std::string>& spaces, const CalibrationOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  Calibration cal;
  cal.mode = options.quick ? "quick" : "full";
  Schedule schedule;
  // Each step: said, named for a signal's message, and stopped at a signal.
  auto say = [&](const std::string& what) {
    throw_if_interrupted();
    if (options.step) *options.step = what;
    if (options.progress) fmt::print(*options.progress, "calibrate: {}\n", what);
  };
  auto wanted = [&](const std::string& name) {
    return spaces.empty() || std::find(spaces.begin(), spaces.end(), name) != spaces.end();
  };
  const int host_threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  auto sizes_of = [&](const std::string& name) {
    return sizes_for(is_host_space(name), options.quick, host_threads,
                     is_host_space(name) ? 0 : space_free_bytes(name));
  };
  // The bound: every step's share, and the first touch of the arrays each
  // allocates at the rate of a first one (a step is due by its own).
  const double touch_gbps = first_touch_gbps();
  auto touch_s = [&](double bytes) { return bytes / (touch_gbps * 1e9); };
  double shares_s = 0, touched = 0;
  bool any_host = false;
  for (const auto& name : enabled_space_names())
    if (wanted(name)) {
      shares_s += calibration_shares(is_host_space(name), options.quick).total();
      touched += touched_bytes(is_host_space(name), sizes_of(name));
      any_host = any_host || is_host_space(name);
    }
  if (any_host)
    touched += 6.0 * sizeof(double) * stores_probe_elements(sizes_of("Serial").stream_elements);
  // A quarter more, for what the schedule cannot see coming: the machine's
  // load changing, a last repetition, Kokkos' own allocations.
  say(
      fmt::format("at most {:.1f} s: {:.1f} s of measuring, {:.0f} MB of arrays first touched "
                  "at {:.2f} GB/s (one thread), and a quarter more",
                  1.25 * (shares_s + touch_s(touched)), shares_s, touched / 1e6, touch_gbps));
  std::optional<StoresProbe> probe;  // the host spaces' stores, allocated once
  bool probe_counted = false;        // its first touch, in the schedule
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    const std::string name = Space::name();
    if (!wanted(name)) return;
    SpaceLimits s;
    s.space = name;
    s.host = is_host_space_v<Space>;
    if (s.host) s.cache_bytes = last_level_cache_bytes();
    Sizes z = sizes_of(name);
    z.schedule = &schedule;
    const CalibrationShares share = calibration_shares(s.host, options.quick);
    const Space exec;
    if constexpr (is_host_space_v<Space>) {
      if (!probe_counted)
        schedule.step(touch_s(6.0 * sizeof(double) * stores_probe_elements(z.stream_elements)));
      probe_counted = true;
      schedule.step(share.stores);
      say(fmt::format("{}: plain or streaming stores beyond the cache; {}", name,
                      schedule.within()));
      measure_stores(exec, s, z, probe);
      schedule.step(share.dot_reads);
      say(fmt::format("{}: the float64 dot beyond the cache, vector sums or one chain; {}", name,
                      schedule.within()));
      measure_dot_reads(exec, s, z, probe);
    }
    if (s.host && !options.quick && s.triad_plain_gbps > 0) {
      // Arrays whose fill (first touch, counted twice) and least repetitions
      // of the four kernels fit the step at the rate the stores' triad
      // measured: 33 arrays' bytes in all. Never below STREAM's rule (4x the
      // last-level cache) nor a quick calibration's 64 MB.
      const double fit = share.stream * s.triad_plain_gbps * 1e9 / (33.0 * sizeof(double));
      const std::size_t least = std::max<std::size_t>(
          std::size_t{1} << 23, 4 * last_level_cache_bytes() / sizeof(double));
      z.stream_elements = std::min(z.stream_elements,
                                   std::max(least, static_cast<std::size_t>(fit) >> 20 << 20));
      // A first touch too slow for the step may stop the arrays below
      // STREAM's rule, at a quick calibration's 64 MB (said in the limits).
      z.least_elements = std::min(std::size_t{1} << 23, z.stream_elements);
      z.measure_s = share.stream;
    }
    schedule.step(share.stream + touch_s(touched_bytes(s.host, z)));
    say(fmt::format(
        "{}: copy and triad bandwidth, arrays of {:.0f} MB, then the ladder: read, copy and "
        "triad from 4 kB to {:.0f} MB; {}",
        name, z.stream_elements * sizeof(double) / 1e6, 16.0 * z.stream_elements / 1e6,
        schedule.within()));
    const SweepPlan sweep = sweep_plan(options.quick, share.ladder);
    measure_stream(exec, s, z, s.host ? host_policy_of(&s) : kernels::HostPolicy{}, &sweep);
    if (!s.host) {
      schedule.step(share.transfers);  // its buffers' first touch counted with the stream's
      say(fmt::format("{}: host<->device bandwidth, pageable and pinned; {}", name,
                      schedule.within()));
      measure_transfers(exec, s, z);
    }
    schedule.step(share.gemm);
    measure_gemm<Space, float>(exec, s, z, share.gemm, say);
    schedule.step(share.gemm);
    measure_gemm<Space, double>(exec, s, z, share.gemm, say);
    schedule.step(share.launch);
    say(fmt::format("{}: kernel launch latency; {}", name, schedule.within()));
    measure_launch(exec, s, z);
    cal.spaces.push_back(std::move(s));
  });
  cal.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return cal;
}

const Recheck& recheck_bandwidth(Calibration& c, const std::string& space, const std::string& after,
                                 double row_pct, const std::string& limit) {
  SpaceLimits* s = nullptr;
  for (auto& one : c.spaces)
    if (one.space == space) s = &one;
  if (s == nullptr || s->stream_bytes == 0)
    throw std::runtime_error(fmt::format("{}: not calibrated, nothing to re-measure", space));
  const auto start = std::chrono::steady_clock::now();
  Recheck r;
  r.after = after;
  r.row_pct = row_pct;
  r.limit = limit;
  r.limit_before = limit == "read" ? s->read_limit_gbps() : s->memory_gbps();
  bool found = false;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (Space::name() != space) return;
    found = true;
    // As the calibration measured them: its array size, its repetitions.
    Sizes z = sizes_for(s->host, c.mode == "quick",
                        Kokkos::DefaultHostExecutionSpace().concurrency());
    z.stream_elements = s->stream_bytes / sizeof(double);
    if (s->host && 3 * s->stream_bytes > host_available_bytes())
      throw std::runtime_error(fmt::format(
          "{}: three arrays of {:.0f} MB, as calibrated, do not fit in the {:.0f} MB available now",
          space, s->stream_bytes / 1e6, host_available_bytes() / 1e6));
    SpaceLimits again;
    again.space = space;
    measure_stream(Space(), again, z, s->host ? host_policy_of(s) : kernels::HostPolicy{});
    r.copy_kernel_gbps = again.copy_kernel_gbps;
    r.copy_deep_copy_gbps = again.copy_deep_copy_gbps;
    r.triad_gbps = again.triad_gbps;
    r.read_gbps = again.read_gbps;
  });
  if (!found) throw InputError(fmt::format("{}: not compiled in this portalab", space));
  s->copy_kernel_gbps = std::max(s->copy_kernel_gbps, r.copy_kernel_gbps);
  s->copy_deep_copy_gbps = std::max(s->copy_deep_copy_gbps, r.copy_deep_copy_gbps);
  s->triad_gbps = std::max(s->triad_gbps, r.triad_gbps);
  s->read_gbps = std::max(s->read_gbps, r.read_gbps);
  s->raise_memory_level();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  s->rechecks.push_back(std::move(r));
  return s->rechecks.back();
}

nlohmann::json to_json(const Recheck& r) {
  return {{"after", r.after},
          {"row_pct_of_limit", r.row_pct},
          {"limit", r.limit},
          {"limit_before_gbps", r.limit_before},
          {"copy_kernel_gbps", r.copy_kernel_gbps},
          {"copy_deep_copy_gbps", r.copy_deep_copy_gbps},
          {"triad_gbps", r.triad_gbps},
          {"read_gbps", r.read_gbps},
          {"seconds", r.seconds}};
}

nlohmann::json to_json(const Calibration& c) {
  nlohmann::json spaces = nlohmann::json::array();
  for (const auto& s : c.spaces) {
    nlohmann::json transfers = nlohmann::json::object();
    for (const auto& [kind, points] : s.transfers) {
      nlohmann::json sweep = nlohmann::json::array();
      for (const auto& p : points) sweep.push_back({{"bytes", p.bytes}, {"gbps", p.gbps}});
      transfers[kind] = {{"best_gbps", s.transfer_gbps(kind)}, {"sweep", sweep}};
    }
    nlohmann::json unsteady = nlohmann::json::array();
    for (const auto& u : s.unsteady) {
      nlohmann::json one{{"limit", u.limit},
                         {"unit", u.unit()},
                         {"fastest", u.fastest},
                         {"slowest", u.slowest},
                         {"repetitions", u.repetitions}};
      if (!u.dtype.empty()) one["dtype"] = u.dtype;
      if (u.bytes > 0) one["bytes"] = u.bytes;
      unsteady.push_back(std::move(one));
    }
    nlohmann::json rechecks = nlohmann::json::array();
    for (const auto& r : s.rechecks) rechecks.push_back(to_json(r));
    spaces.push_back({{"space", s.space},
                      {"host", s.host},
                      {"memory_gbps", s.memory_gbps()},
                      {"copy_kernel_gbps", s.copy_kernel_gbps},
                      {"copy_deep_copy_gbps", s.copy_deep_copy_gbps},
                      {"triad_gbps", s.triad_gbps},
                      {"read_gbps", s.read_gbps},
                      {"stream_bytes", s.stream_bytes},
                      {"cache_bytes", s.cache_bytes},
                      {"transfers", transfers},
                      {"gemm_gflops", s.gemm_gflops},
                      {"gemm_library", s.gemm_library},
                      {"gemm_kernels", s.gemm_kernels},
                      {"gemm_kernels_warning", s.gemm_kernels_warning},
                      {"gemm_n", s.gemm_n},
                      {"launch_us", s.launch_us},
                      {"unsteady", unsteady}});
    if (!s.rechecks.empty()) spaces.back()["rechecks"] = rechecks;
    if (!s.stores.empty())
      spaces.back()["stores"] = {{"choice", s.stores},
                                 {"copy_choice", s.copy_stores},
                                 {"why", s.stores_why},
                                 {"triad_plain_gbps", s.triad_plain_gbps},
                                 {"triad_streaming_gbps", s.triad_streaming_gbps},
                                 {"copy_plain_gbps", s.copy_plain_gbps},
                                 {"copy_streaming_gbps", s.copy_streaming_gbps},
                                 {"probe_bytes", s.stores_probe_bytes}};
    if (!s.ladder.empty()) spaces.back()["ladder"] = to_json(s.ladder);
    if (!s.dot_reads.empty())
      spaces.back()["dot_reads"] = {{"choice", s.dot_reads},
                                    {"vectors_gbps", s.dot_vectors_gbps},
                                    {"chain_gbps", s.dot_chain_gbps}};
  }
  nlohmann::json j = {{"mode", c.mode}, {"seconds", c.seconds}, {"spaces", spaces}};
  if (!c.links.empty()) j["links"] = to_json(c.links);
  return j;
}

Calibration calibration_from_json(const nlohmann::json& j, const std::string& path) {
  try {
    Calibration c;
    c.mode = j.at("mode").get<std::string>();
    c.seconds = j.at("seconds").get<double>();
    for (const auto& js : j.at("spaces")) {
      SpaceLimits s;
      s.space = js.at("space").get<std::string>();
      s.host = js.at("host").get<bool>();
      s.copy_kernel_gbps = js.at("copy_kernel_gbps").get<double>();
      s.copy_deep_copy_gbps = js.at("copy_deep_copy_gbps").get<double>();
      s.triad_gbps = js.at("triad_gbps").get<double>();
      s.read_gbps = js.value("read_gbps", 0.0);  // files before it was measured lack it
      s.stream_bytes = js.at("stream_bytes").get<std::size_t>();
      s.cache_bytes = js.value("cache_bytes", std::size_t{0});
      for (const auto& [kind, t] : js.at("transfers").items())
        for (const auto& p : t.at("sweep"))
          s.transfers[kind].push_back(
              {p.at("bytes").get<std::size_t>(), p.at("gbps").get<double>()});
      s.gemm_gflops = js.at("gemm_gflops").get<std::map<std::string, double>>();
      s.gemm_library = js.at("gemm_library").get<std::map<std::string, std::string>>();
      s.gemm_n = js.at("gemm_n").get<std::size_t>();
      s.gemm_kernels = js.value("gemm_kernels", std::string());
      s.gemm_kernels_warning = js.value("gemm_kernels_warning", std::string());
      s.launch_us = js.at("launch_us").get<double>();
      if (js.contains("stores")) {  // files written before the stores were chosen lack it
        const auto& st = js.at("stores");
        s.stores = st.at("choice").get<std::string>();
        s.copy_stores = st.at("copy_choice").get<std::string>();
        for (const auto& [key, value] :
             {std::pair{"choice", s.stores}, {"copy_choice", s.copy_stores}})
          if (value != "plain" && value != "streaming")
            throw InputError(
                fmt::format("{}: {} stores.{} is \"{}\"; expected \"plain\" or "
                            "\"streaming\"",
                            shown(path), shown(s.space), key, shown(value)));
        s.stores_why = st.at("why").get<std::string>();
        s.triad_plain_gbps = st.at("triad_plain_gbps").get<double>();
        s.triad_streaming_gbps = st.at("triad_streaming_gbps").get<double>();
        s.copy_plain_gbps = st.at("copy_plain_gbps").get<double>();
        s.copy_streaming_gbps = st.at("copy_streaming_gbps").get<double>();
        s.stores_probe_bytes = st.at("probe_bytes").get<std::size_t>();
      }
      if (js.contains("dot_reads")) {  // files written before it was chosen lack it
        const auto& dr = js.at("dot_reads");
        s.dot_reads = dr.at("choice").get<std::string>();
        if (s.dot_reads != "vectors" && s.dot_reads != "chain")
          throw InputError(
              fmt::format("{}: {} dot_reads.choice is \"{}\"; expected \"vectors\" or "
                          "\"chain\"",
                          shown(path), shown(s.space), shown(s.dot_reads)));
        s.dot_vectors_gbps = dr.at("vectors_gbps").get<double>();
        s.dot_chain_gbps = dr.at("chain_gbps").get<double>();
      }
      if (js.contains("ladder"))  // files written before it was measured lack it
        s.ladder = ladder_from_json(js.at("ladder"));
      if (js.contains("unsteady"))  // files written before it was recorded lack it
        for (const auto& u : js.at("unsteady"))
          s.unsteady.push_back({u.at("limit").get<std::string>(), u.at("fastest").get<double>(),
                                u.at("slowest").get<double>(), u.at("repetitions").get<int>(),
                                u.value("dtype", std::string()), u.value("bytes", std::size_t{0})});
      if (js.contains("rechecks"))  // only a run's calibration has them
        for (const auto& r : js.at("rechecks")) {
          Recheck one;
          one.after = r.at("after").get<std::string>();
          one.row_pct = r.at("row_pct_of_limit").get<double>();
          one.limit = r.at("limit").get<std::string>();
          one.limit_before = r.at("limit_before_gbps").get<double>();
          one.copy_kernel_gbps = r.at("copy_kernel_gbps").get<double>();
          one.copy_deep_copy_gbps = r.at("copy_deep_copy_gbps").get<double>();
          one.triad_gbps = r.at("triad_gbps").get<double>();
          one.read_gbps = r.at("read_gbps").get<double>();
          one.seconds = r.at("seconds").get<double>();
          s.rechecks.push_back(std::move(one));
        }
      c.spaces.push_back(std::move(s));
    }
    if (j.contains("links")) c.links = links_from_json(j.at("links"));
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(
        fmt::format("{}: not a portalab calibration file: {}", shown(path), shown(e.what(), 1000)));
  }
}

std::string format_recheck(const SpaceLimits& s, const Recheck& r) {
  const double measured = r.limit == "read"
                              ? r.read_gbps
                              : std::max({r.copy_kernel_gbps, r.copy_deep_copy_gbps, r.triad_gbps});
  return fmt::format(
      "{} {} limit re-measured after {} ran at {:.0f}% of it: {:.1f} -> {:.1f} GB/s "
      "(again: copy {:.1f}, memcpy {:.1f}, triad {:.1f}, read {:.1f}; {:.1f} s){}",
      s.space, r.limit, r.after, 100 * r.row_pct, r.limit_before,
      std::max(r.limit_before, measured), r.copy_kernel_gbps, r.copy_deep_copy_gbps, r.triad_gbps,
      r.read_gbps, r.seconds,
      measured > r.limit_before
          ? ": the machine's bandwidth had changed since calibration"
          : ": not higher; the row is faster than this space's loops measured it");
}

std::string format_calibration(const Calibration& c) {
  std::string out = fmt::format(
      "\nmachine limits ({} calibration, {:.1f} s; bandwidths count bytes read + written)\n"
      "{:<8} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11} {:>11} {:>11} {:>13} {:>13} {:>10}\n",
      c.mode, c.seconds, "space", "copy GB/s", "memcpy", "triad", "read", "h2d pageab",
      "h2d pinned", "d2h pageab", "d2h pinned", "sgemm GFLOP/s", "dgemm GFLOP/s", "launch µs");
  for (const auto& s : c.spaces) {
    auto t = [&](const char* kind) {
      return s.host ? std::string("-") : fmt::format("{:.1f}", s.transfer_gbps(kind));
    };
    auto g = [&](const char* dtype) {
      const auto it = s.gemm_gflops.find(dtype);
      return it == s.gemm_gflops.end()
                 ? std::string("-")
                 : fmt::format("{:.0f} {}", it->second, s.gemm_library.at(dtype));
    };
    out += fmt::format(
        "{:<8} {:>10.1f} {:>10.1f} {:>10.1f} {:>10} {:>11} {:>11} {:>11} {:>11} {:>13} "
        "{:>13} {:>10.2f}\n",
        s.space, s.copy_kernel_gbps, s.copy_deep_copy_gbps, s.triad_gbps,
        s.read_gbps > 0 ? fmt::format("{:.1f}", s.read_gbps) : std::string("-"), t("h2d_pageable"),
        t("h2d_pinned"), t("d2h_pageable"), t("d2h_pinned"), g("float32"), g("float64"),
        s.launch_us);
  }
  // The host BLAS once, with the kernels it chose (all host spaces call it).
  for (const auto& s : c.spaces)
    if (!s.gemm_kernels.empty()) {
      out += fmt::format("  host gemm: {} at n = {}\n", s.gemm_kernels, s.gemm_n);
      if (!s.gemm_kernels_warning.empty())
        out += fmt::format("  WARNING {}\n", s.gemm_kernels_warning);
      break;
    }
  for (const auto& s : c.spaces)
    if (!s.stores.empty())
      out += fmt::format("  {} stores beyond the cache: {} in loops, {} in copies ({})\n", s.space,
                         s.stores, s.copy_stores == "streaming" ? "streaming" : "memcpy",
                         s.stores_why);
  for (const auto& s : c.spaces)
    if (!s.dot_reads.empty())
      out += fmt::format(
          "  {} float64 dot beyond the cache: {} (one chain {:.1f} GB/s, four vector "
          "sums {:.1f})\n",
          s.space, s.dot_reads == "chain" ? "one chain" : "vector sums", s.dot_chain_gbps,
          s.dot_vectors_gbps);
  for (const auto& s : c.spaces) out += format_ladder(s.space, s.ladder);
  // STREAM's rule, where no ladder says where the caches end: each array at
  // least 4x the last-level cache.
  for (const auto& s : c.spaces)
    if (s.ladder.empty() && s.cache_bytes > 0 && s.stream_bytes > 0 &&
        s.stream_bytes < 4 * s.cache_bytes)
      out += fmt::format(
          "  {} bandwidths on arrays of {:.0f} MB, less than 4x the {:.0f} MB "
          "last-level cache: part of them may have come from the cache; "
          "`portalab calibrate` (full) for limits to report\n",
          s.space, s.stream_bytes / 1e6, s.cache_bytes / 1e6);
  for (const auto& s : c.spaces)
    for (const auto& u : s.unsteady)
      out += fmt::format(
          "  UNSTEADY {} {}: {} repetitions from {:.4g} to {:.4g} (the slowest took "
          "over {}x the fastest): the machine was busy; results against this "
          "limit are unreliable\n",
          s.space, u.text(), u.repetitions, u.fastest, u.slowest, unsteady_ratio);
  for (const auto& s : c.spaces)
    for (const auto& r : s.rechecks) out += "  " + format_recheck(s, r) + "\n";
  if (!c.links.empty()) out += format_links(c.links);
  return out;
}

}  // namespace portalab
