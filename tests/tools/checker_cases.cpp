// Event sequences for tests/tools/event_checker.cpp, one per case named on the
// command line, run with the checker loaded (KOKKOS_TOOLS_LIBS): "balanced"
// raises every kind of event, well formed, from two threads, and must pass;
// each other case breaks one rule and must make the checker fail the run.
// The allocation cases raise the events alone (Kokkos::Profiling::allocateData):
// the checker sees pointers, never memory. The "guarded_" cases raise broken
// sequences through portalab's guard (miniapp/platform/tool_guard.hpp), which
// must pass them on whole.
#include "platform/tool_guard.hpp"

#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace {

// An address for the allocation cases (never dereferenced).
double somewhere[2];

void allocate(const char* space, const void* ptr, std::uint64_t size) {
  Kokkos::Profiling::allocateData(Kokkos::Tools::make_space_handle(space), "x", ptr, size);
}
void deallocate(const char* space, const void* ptr, std::uint64_t size) {
  Kokkos::Profiling::deallocateData(Kokkos::Tools::make_space_handle(space), "x", ptr, size);
}

// This thread's region callback waits inside the checker (up to 2 s) for
// another thread to begin one, which the other does 20 ms later (set, not measured).
void overlap() {
  std::thread other([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Kokkos::Profiling::pushRegion("other thread");
    Kokkos::Profiling::popRegion();
  });
  Kokkos::Profiling::pushRegion("portalab test tool: wait for another thread");
  Kokkos::Profiling::popRegion();
  other.join();
}

using Host = Kokkos::DefaultHostExecutionSpace;

void balanced() {
  Kokkos::Profiling::pushRegion("outer");
  Kokkos::View<double*, Kokkos::HostSpace> a("a", 100), b("b", 100);
  Kokkos::parallel_for("fill", Kokkos::RangePolicy<Host>(0, 100), [=](int i) { a(i) = i; });
  double sum = 0;
  Kokkos::parallel_reduce(
      "sum", Kokkos::RangePolicy<Host>(0, 100), [=](int i, double& s) { s += a(i); }, sum);
  Kokkos::parallel_scan("prefix", Kokkos::RangePolicy<Host>(0, 100),
                        [=](int i, double& s, bool last) {
                          s += a(i);
                          if (last) b(i) = s;
                        });
  Kokkos::deep_copy(b, a);
  Kokkos::fence("checker_cases: fence");
  std::uint32_t section = 0;
  Kokkos::Profiling::createProfileSection("section", &section);
  Kokkos::Profiling::startSection(section);
  Kokkos::Profiling::stopSection(section);
  Kokkos::Profiling::destroyProfileSection(section);
  // Regions nest per thread, however the threads' events interleave; one
  // event at a time, as a tool that is not thread-safe needs them.
  std::mutex one_at_a_time;
  auto push = [&](const char* name) {
    const std::lock_guard<std::mutex> guard(one_at_a_time);
    Kokkos::Profiling::pushRegion(name);
  };
  auto pop = [&] {
    const std::lock_guard<std::mutex> guard(one_at_a_time);
    Kokkos::Profiling::popRegion();
  };
  std::thread other([&] {
    for (int i = 0; i < 100; ++i) {
      push("other thread");
      push("other thread, inner");
      pop();
      pop();
    }
  });
  for (int i = 0; i < 100; ++i) {
    push("this thread");
    pop();
  }
  other.join();
  Kokkos::Profiling::popRegion();
}

// A kernel phase of entry "portalab/e/Serial" ("cold/kernel" or "kernel")
// raising a kernel named `kernel`, or nothing.
void phase(const std::string& name, const char* kernel) {
  Kokkos::Profiling::pushRegion("portalab/e/Serial/" + name);
  if (kernel) {
    std::uint64_t id = 0;
    Kokkos::Tools::beginParallelFor(kernel, 0, &id);
    Kokkos::Tools::endParallelFor(id);
  }
  Kokkos::Profiling::popRegion();
}

const std::map<std::string, std::function<void()>> cases = {
    {"balanced", balanced},
    {"pop_without_push", [] { Kokkos::Profiling::popRegion(); }},
    {"region_left_open", [] { Kokkos::Profiling::pushRegion("left open"); }},
    {"kernel_never_ended",
     [] {
       std::uint64_t id = 0;
       Kokkos::Tools::beginParallelFor("never ended", 0, &id);
     }},
    {"kernel_ended_as_another_kind",
     [] {
       std::uint64_t id = 0;
       Kokkos::Tools::beginParallelReduce("a reduce", 0, &id);
       Kokkos::Tools::endParallelFor(id);
     }},
    {"fence_ended_without_begin", [] { Kokkos::Tools::endFence(123456789); }},
    {"fence_never_ended",
     [] {
       std::uint64_t id = 0;
       Kokkos::Tools::beginFence("never ended", 0, &id);
     }},
    {"deallocation_never_allocated", [] { deallocate("Host", somewhere, 16); }},
    {"deallocation_size_differs",
     [] {
       allocate("Host", somewhere, 16);
       deallocate("Host", somewhere, 24);  // as Kokkos 4.6's OpenMP thread data
     }},
    {"deallocation_in_another_space",
     [] {
       allocate("Host", somewhere, 16);
       deallocate("Cuda", somewhere, 16);
     }},
    {"allocated_twice",
     [] {
       allocate("Host", somewhere, 16);
       allocate("Host", somewhere, 16);
     }},
    {"null_allocation", [] { allocate("Cuda", nullptr, 0); }},  // as a Cuda team scratch of 0 bytes
    {"guarded_allocations",
     [] {
       portalab::guard_kokkos_tool();
       deallocate("Host", somewhere, 16);  // allocated before the tool: held back
       allocate("Host", somewhere, 16);
       deallocate("Host", somewhere, 24);  // passed on with 16 bytes
       allocate("Cuda", nullptr, 0);       // held back
       allocate("Host", somewhere, 16);
       allocate("Host", somewhere, 16);  // the first deallocated to the tool first
       deallocate("Host", somewhere, 16);
     }},
    {"guarded_threads",
     [] {
       portalab::guard_kokkos_tool();
       overlap();  // the other thread waits for the guard's lock
     }},
    {"callbacks_overlap", overlap},
    {"deep_copy_never_ended",
     [] {
       const auto host = Kokkos::Tools::make_space_handle("Host");
       Kokkos::Tools::beginDeepCopy(host, "dst", nullptr, host, "src", nullptr, 8);
     }},
    {"section_never_stopped",
     [] {
       std::uint32_t section = 0;
       Kokkos::Profiling::createProfileSection("never stopped", &section);
       Kokkos::Profiling::startSection(section);
     }},
    {"event_lost_in_cold_call",
     [] {
       phase("cold/kernel", nullptr);
       phase("kernel", "portalab::work");
     }},
    {"cold_call_lost", [] { phase("kernel", "portalab::work"); }},
};

}  // namespace

int main(int argc, char* argv[]) {
  const auto it = argc == 2 ? cases.find(argv[1]) : cases.end();
  if (it == cases.end()) {
    std::fprintf(stderr, "usage: %s CASE; cases:", argv[0]);
    for (const auto& [name, run] : cases) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  it->second();
  return 0;
}
