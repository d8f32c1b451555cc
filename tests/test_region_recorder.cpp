// RegionRecorder beside a Kokkos Tools library the user loaded: the tool's
// callbacks (a stand-in set here) receive every event in order, from every
// thread, nested recorders included, and have their push callback back after.
// While a tool is loaded, concurrent host instances take turns on one thread.
#include "platform/instances.hpp"
#include "libraries/library_probe.hpp"

#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace tools = Kokkos::Tools::Experimental;

// What the stand-in tool received, in order.
std::vector<std::string>& received() {
  static std::vector<std::string> events;
  return events;
}
std::mutex& received_lock() {
  static std::mutex m;
  return m;
}
void note(std::string event) {
  const std::lock_guard<std::mutex> guard(received_lock());
  received().push_back(std::move(event));
}

// Stands for a tool loaded at Kokkos::initialize: push, pop and kernels.
class StandInTool {
 public:
  StandInTool() : m_saved(tools::get_callbacks()) {
    received().clear();
    tools::EventSet set = m_saved;
    set.push_region = [](const char* name) { note(std::string("push ") + name); };
    set.pop_region = [] { note("pop"); };
    set.begin_parallel_for = [](const char* name, uint32_t, uint64_t*) {
      note(std::string("for ") + name);
    };
    set.end_parallel_for = [](uint64_t) { note("end for"); };
    tools::set_callbacks(set);
    m_set = set;
  }
  ~StandInTool() { tools::set_callbacks(m_saved); }
  const tools::EventSet& callbacks() const { return m_set; }

 private:
  tools::EventSet m_saved, m_set;
};

void region(const std::string& name) {
  Kokkos::Profiling::pushRegion(name);
  Kokkos::Profiling::popRegion();
}

TEST(RegionRecorder, TheLoadedToolReceivesEveryEventInOrder) {
  StandInTool tool;
  {
    portalab::RegionRecorder outer;
    Kokkos::Profiling::pushRegion("portalab/gemm/Serial/cold");
    {
      portalab::RegionRecorder inner;  // a second recorder inside (a test's, around a run)
      region("KokkosBlas::gemm[TPL_BLAS,double]");
      Kokkos::parallel_for("fill", Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, 4),
                           [](int) {});  // a host space: no device lambda
      EXPECT_EQ(inner.library(), "BLAS");
      EXPECT_EQ(inner.regions(), std::vector<std::string>{"KokkosBlas::gemm[TPL_BLAS,double]"});
    }
    Kokkos::Profiling::popRegion();
    EXPECT_EQ(outer.regions(), (std::vector<std::string>{"portalab/gemm/Serial/cold",
                                                         "KokkosBlas::gemm[TPL_BLAS,double]"}));
  }
  region("after");
  EXPECT_EQ(received(),
            (std::vector<std::string>{"push portalab/gemm/Serial/cold",
                                      "push KokkosBlas::gemm[TPL_BLAS,double]", "pop", "for fill",
                                      "end for", "pop", "push after", "pop"}));
  EXPECT_EQ(tools::get_callbacks().push_region, tool.callbacks().push_region)
      << "the tool's push callback was not given back";
}

// Concurrent instances push from threads of their own: every push reaches
// both the recorder and the tool, once.
TEST(RegionRecorder, PushesFromSeveralThreadsReachTheTool) {
  StandInTool tool;
  constexpr int threads = 4, pushes = 200;
  portalab::RegionRecorder recorder;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([t] {
      for (int i = 0; i < pushes; ++i) region("thread " + std::to_string(t));
    });
  for (auto& t : pool) t.join();
  EXPECT_EQ(recorder.regions().size(), std::size_t(threads * pushes));
  EXPECT_EQ(received().size(), std::size_t(2 * threads * pushes));
}

// Without a tool, recording leaves Kokkos as it found it: no callback set.
TEST(RegionRecorder, WithoutAToolNothingIsLeftBehind) {
  const auto before = tools::get_callbacks().push_region;
  { portalab::RegionRecorder recorder; }
  EXPECT_EQ(tools::get_callbacks().push_region, before);
}

// A tool that keeps one stack for the process (kokkos-tools' space-time-stack)
// cannot follow host instances on threads of their own: while one is loaded
// they take turns on the calling thread, unless PORTALAB_TOOLS_CONCURRENT=1.
#if defined(KOKKOS_ENABLE_SERIAL)
TEST(RegionRecorder, HostInstancesTakeTurnsWhileAToolIsLoaded) {
  const auto threads_used = [] {
    const auto instances = portalab::partition(Kokkos::Serial(), 2);
    std::set<std::thread::id> ids;
    std::mutex m;
    portalab::run_concurrently(instances, [&](std::size_t, const Kokkos::Serial&) {
      const std::lock_guard<std::mutex> guard(m);
      ids.insert(std::this_thread::get_id());
    });
    return ids;
  };
  if (portalab::RegionRecorder::tool_loaded())
    GTEST_SKIP() << "a Kokkos Tools library is loaded into the tests themselves";
  EXPECT_EQ(threads_used().size(), 2u) << "no tool: each instance on a thread of its own";
  {
    portalab::RegionRecorder recorder;  // portalab's own recording is no tool
    EXPECT_FALSE(portalab::host_instances_in_turn());
  }
  StandInTool tool;
  EXPECT_TRUE(portalab::RegionRecorder::tool_loaded());
  EXPECT_EQ(threads_used(), std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_NE(portalab::instance_timing<Kokkos::Serial>(2).find("one after another"),
            std::string::npos);
  setenv("PORTALAB_TOOLS_CONCURRENT", "1", 1);
  EXPECT_FALSE(portalab::host_instances_in_turn());
  EXPECT_EQ(threads_used().size(), 2u);
  unsetenv("PORTALAB_TOOLS_CONCURRENT");
}
#endif

}  // namespace
