// A Kokkos Tools library for portalab's tests (KOKKOS_TOOLS_LIBS or
// --kokkos-tools-libs): it receives every event as a user's tool would and, at
// finalize, fails the run (exit 3, the problems on stderr) where what a real
// tool relies on does not hold:
//   - a region is popped on a thread that has none open, or left open;
//   - a kernel (for, reduce, scan), fence, deep copy or profile section ends
//     without its begin, ends as another kind, or never ends;
//   - a deallocation matches no live allocation of the same pointer, space
//     and size, a pointer is allocated again while live, or a null pointer is
//     allocated or deallocated (kokkos-tools' space-time-stack keys its
//     allocations by size and pointer: it warns "not in the currently
//     allocated set" on the first, aborts on the second);
//   - a callback begins while another thread is inside one (a tool that is
//     not thread-safe would race);
//   - an event raised in the kernel phase of an entry's timed repetitions
//     ("portalab/E/S/kernel") is missing from its cold call
//     ("portalab/E/S/cold/kernel"): lost while portalab recorded that call.
// Else it prints one PASS line with the counts, and the callbacks of each
// thread. Regions nest per thread (as NVTX ranges do); kernels and fences
// pair by the ids this tool hands out.
// It asks Kokkos for global fences only with KOKKOS_TOOLS_GLOBALFENCES=1 (as
// kokkos-tools' connectors do), so that by default events of concurrent
// instances arrive unfenced, from several threads.
#include <impl/Kokkos_Profiling_C_Interface.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

struct Open {
  std::string kind;  // "for", "reduce", "scan", "fence"
  std::string name;
};

struct Section {
  std::string name;
  bool started = false;
  bool destroyed = false;
};

struct Allocation {
  std::uint64_t size = 0;
  std::string label;
};

struct ThreadState {
  int index = 0;  // in the order threads first raised an event
  long callbacks = 0;
  std::vector<std::string> regions;  // open, innermost last
  std::vector<std::string> copies;   // deep copies begun, not ended
};

struct State {
  std::mutex lock;
  std::map<std::thread::id, ThreadState> threads;
  std::map<std::uint64_t, Open> open;  // kernels and fences by id
  std::uint64_t next_id = 1;
  std::vector<Section> sections;
  // Live allocations by space and pointer.
  std::map<std::pair<std::string, const void*>, Allocation> allocations;
  std::map<std::string, long> counts;
  long events = 0;
  bool global_fences = false;
  // The kernel phase open now ("portalab/E/S", cold or not) and, per entry,
  // what the kernel phases of its measurement under way raised: the cold
  // calls', then the repetitions'.
  std::string phase;
  bool phase_cold = false;
  struct Measurement {
    bool cold_seen = false;
    std::set<std::string> cold, timed;
  };
  std::map<std::string, Measurement> measuring;
  long compared = 0;  // measurements whose cold call was compared with their repetitions
  std::vector<std::string> problems;  // the first 30 of them
  long problem_count = 0;

  ThreadState& here() {
    auto [it, added] = threads.try_emplace(std::this_thread::get_id());
    if (added) it->second.index = static_cast<int>(threads.size()) - 1;
    return it->second;
  }
  // Threads inside a callback now, and callbacks begun while another thread
  // was inside one: counted before the lock that serialises this tool.
  std::atomic<int> inside{0};
  std::atomic<long> overlapped{0};
  // Counts an event of `kind` and files it under the open kernel phase by its
  // name (ends and pops have none: their begins are filed).
  ThreadState& event(const std::string& kind, const std::string& name) {
    ++events;
    ++counts[kind];
    if (!phase.empty() && !name.empty()) {
      Measurement& m = measuring[phase];
      (phase_cold ? m.cold : m.timed).insert(kind + " " + name);
    }
    ThreadState& t = here();
    ++t.callbacks;
    return t;
  }
  void problem(const std::string& what) {
    ++problem_count;
    if (problems.size() < 30) problems.push_back(what + " (event " + std::to_string(events) + ")");
  }
  // Every event of the repetitions' kernel phases must be in the cold call's.
  void compare(const std::string& entry) {
    Measurement& m = measuring[entry];
    if (!m.timed.empty()) {
      ++compared;
      if (!m.cold_seen) problem(entry + ": repetitions without a cold call (its region lost)");
      for (const auto& name : m.timed)
        if (m.cold_seen && !m.cold.count(name))
          problem(entry + ": \"" + name +
                  "\" in the repetitions' kernel phase, not in the cold "
                  "call's: lost while portalab recorded it");
    }
    m = {};
  }
  std::string where(const ThreadState& t) const {
    return "thread " + std::to_string(t.index) +
           (t.regions.empty() ? std::string(", no region open")
                              : ", in \"" + t.regions.back() + "\"");
  }
};

State& state() {
  static State* s = new State;  // never destroyed: callbacks may come late
  return *s;
}

// At the top of every callback: counts a callback begun while another thread
// is inside one (a callback the tool made on its own thread nests).
class Entered {
 public:
  Entered() {
    if (depth()++ == 0 && state().inside.fetch_add(1) > 0) ++state().overlapped;
  }
  ~Entered() {
    if (--depth() == 0) --state().inside;
  }
  Entered(const Entered&) = delete;
  Entered& operator=(const Entered&) = delete;

 private:
  static int& depth() {
    thread_local int d = 0;
    return d;
  }
};

// The region that tests/tools/checker_cases.cpp pushes to show the overlap
// check failing: its callback waits (up to 2 s) for another thread to begin one.
constexpr const char* wait_for_another_thread = "portalab test tool: wait for another thread";

// "portalab/E/S" for a region "portalab/E/S/kernel" or "portalab/E/S/cold/kernel".
std::string kernel_phase(const std::string& region, bool& cold) {
  const std::string suffix = "/kernel", cold_suffix = "/cold/kernel";
  auto ends = [&](const std::string& s) {
    return region.size() > s.size() && region.compare(region.size() - s.size(), s.size(), s) == 0;
  };
  if (region.rfind("portalab/", 0) != 0 || !ends(suffix)) return {};
  cold = ends(cold_suffix);
  const std::string entry = region.substr(0, region.size() - (cold ? cold_suffix : suffix).size());
  // An entry range has exactly three parts: portalab, experiment, space.
  if (std::count(entry.begin(), entry.end(), '/') != 2) return {};
  return entry;
}

std::string pointer(const void* ptr) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", ptr);
  return text;
}

void begin(const char* kind, const char* name, std::uint64_t* id) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  s.event(kind, name);
  *id = s.next_id++;
  s.open[*id] = {kind, name};
}

void end(const char* kind, std::uint64_t id) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  ThreadState& t = s.event(std::string("end ") + kind, "");
  const auto it = s.open.find(id);
  if (it == s.open.end())
    s.problem(std::string("end of a ") + kind + " that did not begin (id " + std::to_string(id) +
              ", " + s.where(t) + ")");
  else if (it->second.kind != kind)
    s.problem("\"" + it->second.name + "\" began as " + it->second.kind + ", ended as " + kind);
  if (it != s.open.end()) s.open.erase(it);
}

}  // namespace

extern "C" {

void kokkosp_request_tool_settings(const uint32_t, Kokkos_Tools_ToolSettings* settings) {
  const char* fences = std::getenv("KOKKOS_TOOLS_GLOBALFENCES");
  state().global_fences = fences && std::atoi(fences) != 0;
  settings->requires_global_fencing = state().global_fences;
}

void kokkosp_init_library(const int, const uint64_t, const uint32_t,
                          Kokkos_Profiling_KokkosPDeviceInfo*) {
  state().here();
}

void kokkosp_begin_parallel_for(const char* name, uint32_t, uint64_t* id) {
  begin("for", name, id);
}
void kokkosp_begin_parallel_reduce(const char* name, uint32_t, uint64_t* id) {
  begin("reduce", name, id);
}
void kokkosp_begin_parallel_scan(const char* name, uint32_t, uint64_t* id) {
  begin("scan", name, id);
}
void kokkosp_end_parallel_for(uint64_t id) { end("for", id); }
void kokkosp_end_parallel_reduce(uint64_t id) { end("reduce", id); }
void kokkosp_end_parallel_scan(uint64_t id) { end("scan", id); }
void kokkosp_begin_fence(const char* name, uint32_t, uint64_t* id) { begin("fence", name, id); }
void kokkosp_end_fence(uint64_t id) { end("fence", id); }

void kokkosp_push_profile_region(const char* name) {
  const Entered entered;
  State& s = state();
  {
    const std::lock_guard<std::mutex> guard(s.lock);
    ThreadState& t = s.event("region", name);
    t.regions.emplace_back(name);
    bool cold = false;
    if (std::string entry = kernel_phase(name, cold); !entry.empty()) {
      if (!s.phase.empty()) s.problem("\"" + std::string(name) + "\" inside \"" + s.phase + "\"");
      if (cold) {  // after repetitions, the entry's next measurement begins
        // (the cold calls of a case's variants come together, then their
        // repetitions, which take turns: compared with all their cold calls)
        if (!s.measuring[entry].timed.empty()) s.compare(entry);
        s.measuring[entry].cold_seen = true;
      }
      s.phase = entry;
      s.phase_cold = cold;
    }
  }
  if (std::string_view(name) == wait_for_another_thread)
    for (int i = 0; i < 2000 && s.overlapped == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void kokkosp_pop_profile_region() {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  ThreadState& t = s.event("pop", "");
  if (t.regions.empty()) {
    s.problem("pop without a push on " + s.where(t));
    return;
  }
  bool cold = false;
  if (!kernel_phase(t.regions.back(), cold).empty()) s.phase.clear();
  t.regions.pop_back();
}

void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_space, const char* dst, const void*,
                             Kokkos_Profiling_SpaceHandle src_space, const char* src, const void*,
                             uint64_t) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  const std::string name = std::string(dst) + "(" + dst_space.name + ")=" + src + "(" +
                           src_space.name + ")";
  s.event("copy", name).copies.push_back(name);
}

void kokkosp_end_deep_copy() {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  ThreadState& t = s.event("end copy", "");
  if (t.copies.empty())
    s.problem("end of a deep copy that did not begin on " + s.where(t));
  else
    t.copies.pop_back();
}

void kokkosp_allocate_data(Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
                           uint64_t size) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  ThreadState& t = s.event("allocate", std::string(label) + "(" + space.name + ")");
  if (!ptr) {
    s.problem("allocation \"" + std::string(label) + "\" (" + space.name + ", " +
              std::to_string(size) +
              " bytes) of a null pointer, which a tool keyed on the "
              "pointer cannot tell from another (" +
              s.where(t) + ")");
    return;
  }
  const auto [it, added] = s.allocations.try_emplace({space.name, ptr}, Allocation{size, label});
  if (!added) {
    s.problem("\"" + std::string(label) + "\" allocated at " + pointer(ptr) + " (" + space.name +
              ") while \"" + it->second.label + "\" is live there, never deallocated (" +
              s.where(t) + ")");
    it->second = {size, label};
  }
}

void kokkosp_deallocate_data(Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
                             uint64_t size) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  ThreadState& t = s.event("deallocate", "");
  const std::string what = "deallocation \"" + std::string(label) + "\" of " + pointer(ptr) + " (" +
                           space.name + ", " + std::to_string(size) + " bytes)";
  const auto it = s.allocations.find({space.name, ptr});
  if (it == s.allocations.end()) {
    std::string elsewhere;
    for (const auto& [key, a] : s.allocations)
      if (key.second == ptr) elsewhere = ", which is live in " + key.first;
    s.problem(what + " matches no live allocation of that pointer and space" + elsewhere + " (" +
              s.where(t) + ")");
    return;
  }
  if (it->second.size != size)
    s.problem(what + ": \"" + it->second.label + "\" was allocated there with " +
              std::to_string(it->second.size) + " bytes (" + s.where(t) + ")");
  ++s.counts["deallocate matched"];
  s.allocations.erase(it);
}

void kokkosp_create_profile_section(const char* name, uint32_t* id) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  s.event("section", name);
  *id = static_cast<uint32_t>(s.sections.size());
  s.sections.push_back({name});
}

namespace {
// The section `id` if it was created and not destroyed, else null (a problem).
Section* section(State& s, uint32_t id, const char* what) {
  if (id < s.sections.size() && !s.sections[id].destroyed) return &s.sections[id];
  s.problem(std::string(what) + " of profile section " + std::to_string(id) +
            ", which does not exist");
  return nullptr;
}
}  // namespace

void kokkosp_start_profile_section(const uint32_t id) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  s.event("start section", std::to_string(id));
  if (Section* sec = section(s, id, "start")) {
    if (sec->started) s.problem("profile section \"" + sec->name + "\" started twice");
    sec->started = true;
  }
}

void kokkosp_stop_profile_section(const uint32_t id) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  s.event("stop section", std::to_string(id));
  if (Section* sec = section(s, id, "stop")) {
    if (!sec->started) s.problem("profile section \"" + sec->name + "\" stopped, not started");
    sec->started = false;
  }
}

void kokkosp_destroy_profile_section(const uint32_t id) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  s.event("destroy section", std::to_string(id));
  if (Section* sec = section(s, id, "destroy")) {
    if (sec->started) s.problem("profile section \"" + sec->name + "\" destroyed while started");
    sec->destroyed = true;
  }
}

void kokkosp_profile_event(const char* name) {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  s.event("mark", name);
}

void kokkosp_finalize_library() {
  const Entered entered;
  State& s = state();
  const std::lock_guard<std::mutex> guard(s.lock);
  for (const auto& [id, t] : s.threads) {
    for (const auto& r : t.regions)
      s.problem("region \"" + r + "\" never popped (thread " + std::to_string(t.index) + ")");
    for (const auto& c : t.copies)
      s.problem("deep copy " + c + " never ended (thread " + std::to_string(t.index) + ")");
  }
  for (const auto& [id, o] : s.open) s.problem(o.kind + " \"" + o.name + "\" never ended");
  for (const auto& sec : s.sections)
    if (sec.started) s.problem("profile section \"" + sec.name + "\" never stopped");
  for (auto& [entry, m] : s.measuring) s.compare(entry);
  if (s.overlapped > 0)
    s.problem(std::to_string(s.overlapped.load()) +
              " callback(s) began while another thread was inside one: a tool that is not "
              "thread-safe would race");
  // Callbacks per thread, in the order the threads first raised one.
  std::vector<long> per_thread(s.threads.size());
  for (const auto& [id, t] : s.threads) per_thread[t.index] = t.callbacks;
  std::string callbacks;
  for (std::size_t i = 0; i < per_thread.size() && i < 8; ++i)
    callbacks += (i ? ", " : "") + std::to_string(per_thread[i]);
  if (per_thread.size() > 8) callbacks += ", ...";
  auto count = [&](const char* kind) { return s.counts[kind]; };
  if (s.problems.empty()) {
    std::fprintf(stderr,
                 "portalab test tool: PASS: %ld events from %zu threads: %ld regions, %ld "
                 "kernels (%ld for, %ld reduce, %ld scan), %ld fences, %ld deep copies, %ld "
                 "allocations (%ld deallocated, each as allocated), %ld profile sections; "
                 "global fences %s; %ld measurements' cold calls hold every event of their "
                 "repetitions; callbacks per thread: %s\n",
                 s.events, s.threads.size(), count("region"),
                 count("for") + count("reduce") + count("scan"), count("for"), count("reduce"),
                 count("scan"), count("fence"), count("copy"), count("allocate"),
                 count("deallocate matched"), count("section"), s.global_fences ? "on" : "off",
                 s.compared, callbacks.c_str());
    return;
  }
  std::fprintf(stderr,
               "portalab test tool: FAIL: %ld problem(s) in %ld events from %zu threads "
               "(callbacks per thread: %s)%s:\n",
               s.problem_count, s.events, s.threads.size(), callbacks.c_str(),
               s.problem_count > 30 ? "; the first 30" : "");
  for (const auto& p : s.problems) std::fprintf(stderr, "  %s\n", p.c_str());
  std::fflush(nullptr);
  std::_Exit(3);  // inside Kokkos::finalize: no destructors run after a failed check
}

}  // extern "C"
