// Several execution-space instances of one space, made with Kokkos'
// partition_space, and work run on them concurrently, each instance timed by
// the fence on that instance (cudaStreamSynchronize on its stream for Cuda),
// never by a global Kokkos::fence().
#pragma once

#include "libraries/library_threads.hpp"
#include "libraries/library_probe.hpp"
#include "platform/spaces.hpp"
#include "support/environment.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <deque>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace portalab {

template <class Space>
inline constexpr bool is_threads = false;
#if defined(KOKKOS_ENABLE_THREADS)
template <>
inline constexpr bool is_threads<Kokkos::Threads> = true;
#endif

// Why `count` concurrent instances of exec's space cannot be had, or "".
// Kokkos 4.6 partitions Cuda and HIP (new streams), OpenMP (thread pools
// split from the instance's) and Serial (independent instances); for other
// spaces its partition_space returns copies of one instance, which would not
// run concurrently, so they are not applicable (Threads: only more than one).
template <class Space>
std::string why_not_partitionable(const Space& exec, int count) {
  constexpr bool partitions = false
#if defined(KOKKOS_ENABLE_SERIAL)
                              || std::is_same_v<Space, Kokkos::Serial>
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
                              || std::is_same_v<Space, Kokkos::OpenMP>
#endif
#if defined(KOKKOS_ENABLE_CUDA)
                              || std::is_same_v<Space, Kokkos::Cuda>
#endif
#if defined(KOKKOS_ENABLE_HIP)
                              || std::is_same_v<Space, Kokkos::HIP>
#endif
      ;
  // Threads' one thread pool is process-wide: Kokkos 4.6 has no Threads
  // partition_space, and copies of the instance share that pool. One
  // instance is the space itself.
  if constexpr (is_threads<Space>) {
    if (count > 1)
      return fmt::format(
          "Kokkos 4.6 has a single Threads instance (one process-wide thread "
          "pool, no partition_space): {} instances would not run concurrently",
          count);
  } else if (!partitions) {
    return fmt::format("Kokkos 4.6 cannot partition {} into concurrent instances", Space::name());
  }
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same_v<Space, Kokkos::OpenMP>)
    if (exec.concurrency() < count)
      return fmt::format("OpenMP has {} thread(s); {} instances need one thread each at least",
                         exec.concurrency(), count);
#endif
  (void)exec;
  (void)count;
  return {};
}

// Whether a concurrent run's host instances take turns on the calling thread
// instead of running on threads of their own: while a Kokkos Tools library
// is loaded, unless PORTALAB_TOOLS_CONCURRENT=1 says that it follows several
// threads. kokkos-tools' space-time-stack and simple-kernel-timer keep one
// stack for the process: two threads' kernels interleaved in it abort the
// run ("Expected ... to end, got different kernel ID") or corrupt the tool.
inline bool host_instances_in_turn() {
  return !env_switch("PORTALAB_TOOLS_CONCURRENT").value_or(false) && RegionRecorder::tool_loaded();
}

// How a concurrent run on `count` instances of Space is timed, for a row's
// timed_by. On host spaces it also warns when OpenMP binds threads
// (OMP_PROC_BIND not false): the instances' threads inherit the binding of the
// thread that starts them and each OpenMP partition binds its team from the
// first place again, so the instances share cores instead of dividing them
// (docs/performance.md, "Streams").
template <class Space>
std::string instance_timing(int count) {
  std::string how = count == 1 ? std::string("fence on its instance")
                               : fmt::format("fence on each of {} instances", count);
  if (is_host_space_v<Space> && count > 1 && host_instances_in_turn())
    return how +
           "; one after another: a Kokkos Tools library is loaded "
           "(PORTALAB_TOOLS_CONCURRENT=1 runs them at once)";
#if defined(_OPENMP)
  if (is_host_space_v<Space> && count > 1 && omp_get_proc_bind() != omp_proc_bind_false)
    how += "; OMP_PROC_BIND binds the threads: instances share cores (set OMP_PROC_BIND=false)";
#endif
  return how;
}

// `count` instances partitioned from exec with equal weights.
template <class Space>
std::vector<Space> partition(const Space& exec, int count) {
  return Kokkos::Experimental::partition_space(exec, std::vector<int>(count, 1));
}

// For each instance of a concurrent run, the milliseconds from the start
// until the fence on that instance returned.
struct InstanceTimes {
  std::vector<double> done_ms{0.0};

  double last_ms() const { return *std::max_element(done_ms.begin(), done_ms.end()); }
  double first_ms() const { return *std::min_element(done_ms.begin(), done_ms.end()); }
  // instance0_ms, instance1_ms, ... as an experiment's metrics.
  std::vector<std::pair<std::string, double>> metrics() const {
    std::vector<std::pair<std::string, double>> m;
    for (std::size_t i = 0; i < done_ms.size(); ++i)
      m.emplace_back(fmt::format("instance{}_ms", i), done_ms[i]);
    return m;
  }
};

// Runs work(i, instances[i]) for every instance so that they proceed at the
// same time, and returns when each instance was done.
//
// A host instance executes its kernels on the thread that launches them, so
// each instance gets a thread of its own, whose host library calls use that
// instance's threads; a single one runs on this thread (Kokkos' Threads takes
// work only from the thread that initialised it), and so do several in turn
// where a Kokkos Tools library could not follow threads (host_instances_in_turn).
// A device instance queues work and returns at once, so all of it is queued
// from this thread (as CUDA streams are used), then one thread per instance
// waits on that instance's fence: each completion is seen when it happens,
// not when an earlier fence returns.
template <class Space, class Work>
InstanceTimes run_concurrently(const std::vector<Space>& instances, Work&& work) {
  using clock = std::chrono::steady_clock;
  const std::size_t count = instances.size();
  std::vector<double> done_ms(count, 0.0);
  std::vector<std::exception_ptr> errors(count);
  const auto start = clock::now();
  auto finish = [&](std::size_t i) {
    instances[i].fence("portalab::run_concurrently");
    done_ms[i] = std::chrono::duration<double, std::milli>(clock::now() - start).count();
  };
  std::vector<std::thread> threads;
  threads.reserve(count);
  if constexpr (is_host_space_v<Space>) {
    if (count == 1 || host_instances_in_turn()) {
      for (std::size_t i = 0; i < count; ++i) {
        const libraries::LibraryThreads<Space> library(instances[i]);
        work(i, instances[i]);
        finish(i);
      }
      return {std::move(done_ms)};
    }
    for (std::size_t i = 0; i < count; ++i)
      threads.emplace_back([&, i] {
        try {
          const libraries::LibraryThreads<Space> library(instances[i]);
          work(i, instances[i]);
          finish(i);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      try {
        work(i, instances[i]);
      } catch (...) {
        errors[i] = std::current_exception();
        break;  // what was queued is still waited for below
      }
    }
    for (std::size_t i = 0; i < count; ++i)
      threads.emplace_back([&, i] {
        try {
          finish(i);
        } catch (...) {
          if (!errors[i]) errors[i] = std::current_exception();
        }
      });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return {std::move(done_ms)};
}

// The instances a case needs, made the first time each count is asked for
// (inside the cold call, as a program's first use would be) and kept.
template <class Space>
class InstancePool {
 public:
  explicit InstancePool(Space exec) : m_exec(std::move(exec)) {}
  const std::vector<Space>& get(int count) {
    for (const auto& made : m_made)
      if (static_cast<int>(made.size()) == count) return made;
    m_made.push_back(partition(m_exec, count));
    return m_made.back();
  }

 private:
  Space m_exec;
  std::deque<std::vector<Space>> m_made;  // a deque: get()'s references stay valid
};

}  // namespace portalab
