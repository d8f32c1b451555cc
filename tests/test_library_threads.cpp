// Host library calls follow the space that makes them (libraries/library_threads.hpp):
// the library's thread count is observed inside each call, through the
// profiling region every library call pushes, in every experiment that calls
// a library; rows record it; the library's own setting comes back.
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "platform/instances.hpp"
#include "libraries/library_threads.hpp"
#include "libraries/library_probe.hpp"
#include "engine/runner.hpp"
#include "inline_deck.hpp"
#include "platform/spaces.hpp"

#include <Kokkos_Core.hpp>
#include <cblas.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sched.h>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using portalab::testing::run_inline;

namespace {

using portalab::libraries::LibraryThreadControl;
using portalab::libraries::LibraryThreads;

// The library's count read inside every host library call, from the region
// Kokkos Kernels (KokkosBlas::gemm[TPL_BLAS,double]) or portalab's vendor
// calls (portalab::gemm[TPL_BLAS,double]) push right before calling it: a
// recorder around the run's own (those of the cold calls) sees every call.
std::vector<portalab::RegionRecorder::LibraryCall> host_library_calls(
    const portalab::RegionRecorder& recorder) {
  std::vector<portalab::RegionRecorder::LibraryCall> host;
  for (const auto& call : recorder.library_calls())
    if (call.region.find("[TPL_BLAS") != std::string::npos ||
        call.region.find("[TPL_LAPACK") != std::string::npos)
      host.push_back(call);
  return host;
}

// Every host space's name and concurrency, and a count none of them has, to
// set the library to beforehand: a missing guard then shows.
struct HostSpace {
  std::string name;
  int threads;
};
std::vector<HostSpace> host_spaces() {
  std::vector<HostSpace> spaces;
  portalab::for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if constexpr (portalab::is_host_space_v<Space>)
      spaces.push_back({Space::name(), Space().concurrency()});
  });
  return spaces;
}
int count_no_space_has() {
  int most = 1;
  for (const auto& s : host_spaces()) most = std::max(most, s.threads);
  return most + 1;
}

// A macro: GTEST_SKIP returns from the test itself.
#define SKIP_UNLESS_SETTABLE()                                         \
  if (const auto& c = LibraryThreadControl::instance(); !c.settable()) \
  GTEST_SKIP() << "host BLAS: " << c.describe()

// Every experiment that calls the host BLAS or LAPACK, every variant, from
// each host space: inside each call the library has the space's concurrency,
// whatever it had before; afterwards it has that again.
TEST(LibraryThreads, EveryHostLibraryCallRunsOnTheSpaceThreads) {
  SKIP_UNLESS_SETTABLE();
  const auto& control = LibraryThreadControl::instance();
  const int before = count_no_space_has();
  const auto saved = control.set(before);
  for (const auto& space : host_spaces()) {
    SCOPED_TRACE(space.name);
    portalab::RegionRecorder recorder;
    const auto summary = run_inline(
        "calibrate = \"none\"\nreps = 2\nwarmups = 0\ncopies = \"none\"\nspaces = [\"" +
        space.name +
        "\"]\n[gemm]\nsizes = [70]\n[dot]\nsizes = [1000]\n[inverse]\nsizes = [33]\n"
        "[det]\nsizes = [33]\n[qr]\nsizes = [33]\n[inverse_pair]\nsizes = [33]\n"
        "variants = [\"sequential\"]\n");
    EXPECT_EQ(summary.failed + summary.errors, 0);
    std::vector<std::string> seen;
    for (const auto& call : host_library_calls(recorder)) {
      EXPECT_EQ(call.threads, space.threads) << call.region;
      if (std::find(seen.begin(), seen.end(), call.region) == seen.end())
        seen.push_back(call.region);
    }
    // Both paths were observed: Kokkos Kernels' TPL calls and portalab's own.
    for (const char* region : {"portalab::gemm[", "portalab::dot[", "portalab::getrf[",
                               "portalab::geqrf[", "KokkosBlas::gemm[", "KokkosLapack::gesv["})
      EXPECT_TRUE(std::any_of(seen.begin(), seen.end(),
                              [&](const std::string& s) { return s.rfind(region, 0) == 0; }))
          << region << " was not observed; seen: " << ::testing::PrintToString(seen);
    EXPECT_EQ(control.current(), before) << "the library's setting was not restored";
  }
  control.restore(saved);
}

// Concurrent instances: each partition's calls use the partition's threads.
TEST(LibraryThreads, PartitionCallsUseThePartitionThreads) {
  SKIP_UNLESS_SETTABLE();
  bool ran = false;
  portalab::for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if constexpr (portalab::is_host_space_v<Space>) {
      if (!portalab::why_not_partitionable(Space(), 2).empty()) return;
      SCOPED_TRACE(Space::name());
      const int expected = portalab::partition(Space(), 2)[0].concurrency();
      portalab::RegionRecorder recorder;
      const auto summary = run_inline(
          "calibrate = \"none\"\nreps = 1\nwarmups = 0\ncopies = \"none\"\nspaces = [\"" +
          std::string(Space::name()) +
          "\"]\n[inverse_pair]\nsizes = [40]\nvariants = [\"concurrent\"]\n");
      EXPECT_EQ(summary.failed + summary.errors, 0);
      const auto calls = host_library_calls(recorder);
      ASSERT_FALSE(calls.empty());
      for (const auto& call : calls) EXPECT_EQ(call.threads, expected);
      ASSERT_EQ(summary.results.size(), 1u);
      const auto& row = summary.results.front();
      EXPECT_EQ(row.threads, Space().concurrency());
      EXPECT_EQ(row.library_threads, expected);
      ran = true;
    }
  });
  if (!ran) GTEST_SKIP() << "no host space partitions into 2 here";
}

// A Serial gemm row says 1 thread, even with the library set to more; the
// other host spaces say their concurrency. The files and the console table
// say it too.
TEST(LibraryThreads, RowsRecordTheSpaceThreads) {
  const auto& control = LibraryThreadControl::instance();
  const auto saved = control.set(count_no_space_has());
  std::string spaces;
  for (const auto& s : host_spaces()) spaces += (spaces.empty() ? "\"" : ", \"") + s.name + "\"";
  const auto summary = run_inline("calibrate = \"none\"\nreps = 1\nwarmups = 0\nspaces = [" +
                                  spaces + "]\n[gemm]\nsizes = [20]\n");
  control.restore(saved);
  ASSERT_EQ(summary.failed + summary.errors, 0);
  // Where the library has no count portalab can read, its calls say so.
  const bool unknown = control.kind() == LibraryThreadControl::Kind::none;
  bool serial = false;
  for (const auto& r : summary.results) {
    SCOPED_TRACE(r.space + " " + r.variant);
    // Numbers in the files: threads an integer, library_threads one or null.
    const auto row = portalab::to_json(r);
    ASSERT_TRUE(row["threads"].is_number_integer()) << row["threads"];
    const int threads = row["threads"].get<int>();
    const auto& library_threads = row["library_threads"];
    const int space_threads = portalab::space_concurrency(r.space);
    const bool library = r.variant != "native";
    if (unknown && library)
      EXPECT_TRUE(library_threads.is_null()) << library_threads;
    else
      EXPECT_TRUE(library_threads.is_number_integer()) << library_threads;
    if (!library) EXPECT_EQ(library_threads, 0);
    if (r.space == "Serial") {
      EXPECT_EQ(r.threads, 1);
      EXPECT_EQ(threads, 1);
      if (library && !unknown) EXPECT_EQ(library_threads, 1);
      serial = true;
    } else if (control.settable() || !library) {
      EXPECT_EQ(threads, space_threads);
    }
    const auto header = portalab::csv_header();
    auto column = [&](const char* name) {
      const auto at = std::find(header.begin(), header.end(), name) - header.begin();
      EXPECT_LT(at, static_cast<long>(header.size())) << name;
      return at < static_cast<long>(header.size()) ? portalab::csv_row(r)[at] : std::string("?");
    };
    EXPECT_EQ(column("threads"), std::to_string(threads));
    EXPECT_EQ(column("library_threads"),
              library_threads.is_null() ? std::string() : library_threads.dump());
  }
#if defined(KOKKOS_ENABLE_SERIAL)
  EXPECT_TRUE(serial);
#endif
  const std::string table = portalab::format_table(summary.results, "gemm");
  EXPECT_NE(table.find(" threads "), std::string::npos) << table;
}

TEST(LibraryThreads, ThreadsTextNamesTheLibraryCountOnlyWhenItDiffers) {
  EXPECT_EQ(portalab::threads_text(4, 0), "4");
  EXPECT_EQ(portalab::threads_text(4, 4), "4");
  EXPECT_EQ(portalab::threads_text(4, 1), "4 (library 1)");
  EXPECT_EQ(portalab::threads_text(1, -1), "1 (library: unknown)");
}

// Nested guards (an experiment's around a kernel's) restore in turn.
TEST(LibraryThreads, GuardsRestoreTheLibrarySetting) {
  SKIP_UNLESS_SETTABLE();
  const auto& control = LibraryThreadControl::instance();
  const int before = count_no_space_has();
  const auto saved = control.set(before);
  for (const auto& space : host_spaces()) {
    portalab::for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if constexpr (portalab::is_host_space_v<Space>) {
        if (space.name != Space::name()) return;
        {
          const LibraryThreads<Space> outer(Space{});
          EXPECT_EQ(control.current(), space.threads);
          {
            const LibraryThreads<Space> inner(Space{});
            EXPECT_EQ(control.current(), space.threads);
          }
          EXPECT_EQ(control.current(), space.threads);
        }
        EXPECT_EQ(control.current(), before) << space.name;
      }
    });
  }
  control.restore(saved);
}

// What OpenBLAS built with OpenMP really does with the count set: the threads
// of the process, counted during a gemm's aftermath on a thread of its own
// (OpenMP keeps a thread's team workers parked until that thread ends):
// count 1 starts no worker, count 2 one. Checks current()'s model of that
// library against the library itself.
TEST(LibraryThreads, OpenBlasWithOpenMpStartsTheWorkersItIsGiven) {
  const auto& control = LibraryThreadControl::instance();
  if (control.describe() != "OpenBLAS (OpenMP threading)")
    GTEST_SKIP() << "host BLAS: " << control.describe();
  auto tasks = [] {
    int n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
      ++n;
    return n;
  };
  auto workers_started = [&](int threads) {
    int started = -1, seen = 0;
    std::thread t([&] {
      constexpr int n = 256;  // above OpenBLAS's single-thread threshold for gemm
      std::vector<double> a(n * n, 1.0), b(n * n, 1.0), c(n * n, 0.0);
      const int before = tasks();
      const auto saved = control.set(threads);
      seen = control.current();
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n,
                  0.0, c.data(), n);
      started = tasks() - before;
      control.restore(saved);
    });
    t.join();
    EXPECT_EQ(seen, threads);
    return started;
  };
  EXPECT_EQ(workers_started(1), 0);
  EXPECT_EQ(workers_started(2), 1);
}

}  // namespace

namespace {

// Threads workers with fewer CPUs than threads are named, with the cure
// that fits the cause; threads that fit, or one thread, say nothing.
TEST(ThreadsAffinity, FewerCpusThanThreadsIsNamedWithItsCause) {
  const std::string bound = portalab::threads_affinity_warning(16, 1, "spread");
  EXPECT_NE(bound.find("Threads: 16 threads on 1 CPU"), std::string::npos) << bound;
  EXPECT_NE(bound.find("OMP_PROC_BIND=spread"), std::string::npos) << bound;
  EXPECT_NE(bound.find("unset OMP_PROC_BIND"), std::string::npos) << bound;
  const std::string few = portalab::threads_affinity_warning(8, 2, nullptr);
  EXPECT_NE(few.find("8 threads on 2 CPUs"), std::string::npos) << few;
  EXPECT_NE(few.find("--kokkos-num-threads"), std::string::npos) << few;
  EXPECT_TRUE(portalab::threads_affinity_warning(16, 16, "spread").empty());
  EXPECT_TRUE(portalab::threads_affinity_warning(1, 1, "spread").empty());
  EXPECT_TRUE(portalab::threads_affinity_warning(4, 0, nullptr).empty());  // not known
}

// Threads on Kokkos' default of one thread, where more CPUs are there and
// nobody chose the count, is named with the setting that uses them.
TEST(ThreadsAffinity, DefaultOneThreadOnSeveralCpusIsNamed) {
  const std::string one = portalab::threads_default_warning(1, 2, false);
  EXPECT_NE(one.find("one thread (Kokkos' default) of the 2 CPUs"), std::string::npos) << one;
  EXPECT_NE(one.find("KOKKOS_NUM_THREADS=2"), std::string::npos) << one;
  EXPECT_TRUE(portalab::threads_default_warning(1, 2, true).empty());   // chosen
  EXPECT_TRUE(portalab::threads_default_warning(2, 2, false).empty());  // uses them
  EXPECT_TRUE(portalab::threads_default_warning(1, 1, false).empty());  // one CPU
}

#if defined(KOKKOS_ENABLE_THREADS)
// This process, its main thread held to one CPU as a bound OpenMP runtime
// leaves it: the warning appears when Threads runs more than one thread.
TEST(ThreadsAffinity, AMainThreadOnOneCpuIsSeen) {
  cpu_set_t was;
  ASSERT_EQ(sched_getaffinity(0, sizeof was, &was), 0);
  int first = 0;
  while (!CPU_ISSET(first, &was)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const std::string w = portalab::threads_affinity_warning();
  sched_setaffinity(0, sizeof was, &was);
  if (Kokkos::Threads().concurrency() > 1)
    EXPECT_NE(w.find("on 1 CPU"), std::string::npos) << w;
  else
    EXPECT_TRUE(w.empty()) << w;
}
#endif

// Serial measured without Threads starts Threads on one thread (over
// KOKKOS_NUM_THREADS), unless the command line gives a count; only where
// Threads is compiled.
TEST(ThreadsAffinity, SerialAloneStartsThreadsOnOneThread) {
  const auto names = portalab::enabled_space_names();
  const bool threads = std::find(names.begin(), names.end(), "Threads") != names.end();
  const std::string one = "--kokkos-num-threads=1";
  EXPECT_EQ(portalab::serial_alone_threads_option({"Serial"}, {}), threads ? one : "");
  EXPECT_EQ(portalab::serial_alone_threads_option({"Serial", "Cuda"}, {"--kokkos-device-id=0"}),
            threads ? one : "");
  // Threads measured too, every space (none named), or no Serial: left alone.
  EXPECT_EQ(portalab::serial_alone_threads_option({"Serial", "Threads"}, {}), "");
  EXPECT_EQ(portalab::serial_alone_threads_option({}, {}), "");
  EXPECT_EQ(portalab::serial_alone_threads_option({"Threads"}, {}), "");
  // A count on the command line wins.
  EXPECT_EQ(portalab::serial_alone_threads_option({"Serial"}, {"--kokkos-num-threads=8"}), "");
  EXPECT_EQ(portalab::serial_alone_threads_option({"Serial"}, {"--kokkos-threads=8"}), "");
  // Both measured, Threads on several threads: the warning names the cure.
  const std::string w = portalab::serial_beside_threads_warning({"Serial", "Threads"});
  if (threads && portalab::space_concurrency("Threads") > 1)
    EXPECT_NE(w.find("run Serial apart"), std::string::npos) << w;
  else
    EXPECT_TRUE(w.empty()) << w;
  EXPECT_TRUE(portalab::serial_beside_threads_warning({"Serial"}).empty());
}

// Ranks of one node share its cores unless a count is given.
TEST(ThreadsAffinity, RanksOfANodeShareItsCores) {
  const auto names = portalab::enabled_space_names();
  const bool parallel = std::find(names.begin(), names.end(), "OpenMP") != names.end() ||
                        std::find(names.begin(), names.end(), "Threads") != names.end();
  auto share = [&](const char* n) {
    return parallel ? fmt::format("--kokkos-num-threads={}", n) : "";
  };
  auto unset = [](const char*) -> const char* { return nullptr; };
  using portalab::threads_per_rank_option;
  EXPECT_EQ(threads_per_rank_option(4, 64, 64, {}, unset), share("16"));
  EXPECT_EQ(threads_per_rank_option(2, 64, 1, {}, unset), share("1"));  // each bound to a core
  EXPECT_EQ(threads_per_rank_option(3, 2, 2, {}, unset), share("1"));   // more ranks than CPUs
  EXPECT_EQ(threads_per_rank_option(1, 64, 64, {}, unset), "");         // alone on its node
  EXPECT_EQ(threads_per_rank_option(4, 64, 64, {"--kokkos-num-threads=8"}, unset), "");
  EXPECT_EQ(threads_per_rank_option(4, 64, 64, {"--kokkos-threads=8"}, unset), "");
  for (const std::string var : {"OMP_NUM_THREADS", "KOKKOS_NUM_THREADS"}) {
    auto given = [&](const char* n) -> const char* { return var == n ? "4" : nullptr; };
    EXPECT_EQ(threads_per_rank_option(4, 64, 64, {}, given), "") << var;
  }
}

}  // namespace
