#include "platform/tool_guard.hpp"

#include "support/environment.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace portalab {
namespace {

using Kokkos::Tools::Experimental::EventSet;

// The tool's own callbacks, as Kokkos::initialize set them.
EventSet& tool() {
  static EventSet set{};
  return set;
}

// Held while the tool runs, never while Kokkos fences for the tool (it does
// before calling a callback). Recursive: a tool that fences from inside a
// callback gets Kokkos' fence events on the same thread; such a fence could
// wait for an OpenMP instance whose thread waits here to report its thread
// data (raised under the instance's lock): no tool of kokkos-tools fences so.
std::recursive_mutex& lock() {
  static std::recursive_mutex m;
  return m;
}

// The callback that passes one kind of event on to the tool's, under the lock.
template <auto member, class Function>
struct Forward;
template <auto member, class... Args>
struct Forward<member, void (*)(Args...)> {
  static void call(Args... args) {
    const std::lock_guard<std::recursive_mutex> guard(lock());
    (tool().*member)(args...);
  }
};
template <auto member>
void forward(EventSet& set) {
  using Function = std::remove_reference_t<decltype(set.*member)>;
  if (set.*member) set.*member = &Forward<member, Function>::call;
}

// Allocations the tool was told of and has not been told are freed, by space
// and pointer, and what was held back or corrected.
struct Allocation {
  std::uint64_t size = 0;
  std::string label;
};
struct Allocations {
  std::map<std::pair<std::string, const void*>, Allocation> live;
  long matched = 0;      // deallocations as allocated
  long resized = 0;      // deallocations said with another size than allocated
  long unseen = 0;       // deallocations of memory the tool never saw allocated
  long null = 0;         // events of a null pointer
  long reallocated = 0;  // addresses allocated again while live
};
Allocations& allocations() {
  static auto* a = new Allocations;  // never destroyed: events may come during exit
  return *a;
}

// An allocation (allocated) or a deallocation, passed on in pairs.
void pass_on(bool allocated, const Kokkos_Profiling_SpaceHandle space, const char* label,
             const void* ptr, const std::uint64_t size) {
  const std::lock_guard<std::recursive_mutex> guard(lock());
  Allocations& a = allocations();
  if (!ptr) {
    ++a.null;
    return;
  }
  const std::pair<std::string, const void*> key{space.name, ptr};
  if (const auto it = a.live.find(key); it != a.live.end()) {
    // Freed, or allocated again without the free said: the tool hears of the
    // free, as the allocation was said.
    const Allocation was = std::move(it->second);
    a.live.erase(it);
    ++(allocated ? a.reallocated : was.size != size ? a.resized : a.matched);
    if (tool().deallocate_data) tool().deallocate_data(space, was.label.c_str(), ptr, was.size);
  } else if (!allocated) {
    ++a.unseen;
    return;
  }
  if (allocated) {
    a.live.emplace(key, Allocation{size, label});
    if (tool().allocate_data) tool().allocate_data(space, label, ptr, size);
  }
}
void allocate(const Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
              const std::uint64_t size) {
  pass_on(true, space, label, ptr, size);
}
void deallocate(const Kokkos_Profiling_SpaceHandle space, const char* label, const void* ptr,
                const std::uint64_t size) {
  pass_on(false, space, label, ptr, size);
}

std::string summary() {
  const Allocations& a = allocations();
  std::vector<std::string> said;
  if (a.resized)
    said.push_back(
        fmt::format("{} deallocation(s) passed on with the size they were allocated "
                    "with (Kokkos said another)",
                    a.resized));
  if (a.unseen)
    said.push_back(
        fmt::format("{} deallocation(s) of memory the tool never saw allocated held "
                    "back",
                    a.unseen));
  if (a.null) said.push_back(fmt::format("{} event(s) of a null pointer held back", a.null));
  if (a.reallocated)
    said.push_back(
        fmt::format("{} address(es) allocated again while live, deallocated to the "
                    "tool first",
                    a.reallocated));
  std::string line;
  for (const auto& s : said) line += (line.empty() ? "" : "; ") + s;
  return line;
}

void finalize() {
  const std::lock_guard<std::recursive_mutex> guard(lock());
  if (const std::string s = summary(); !s.empty())
    std::fprintf(stderr, "portalab: Kokkos Tools: %s (docs/kokkos-tools.md)\n", s.c_str());
  if (tool().finalize) tool().finalize();
}

}  // namespace

void guard_kokkos_tool() {
  static bool guarded = false;
  if (guarded || !Kokkos::Profiling::profileLibraryLoaded()) return;
  // Kokkos' events as raised, to see what the guard corrects.
  if (env_switch("PORTALAB_TOOLS_RAW").value_or(false)) return;
  guarded = true;
  EventSet set = Kokkos::Tools::Experimental::get_callbacks();
  tool() = set;
  // Init, help, arguments, settings and tuning were called while Kokkos
  // started, or are Kokkos' own questions: left as they are.
  forward<&EventSet::begin_parallel_for>(set);
  forward<&EventSet::end_parallel_for>(set);
  forward<&EventSet::begin_parallel_reduce>(set);
  forward<&EventSet::end_parallel_reduce>(set);
  forward<&EventSet::begin_parallel_scan>(set);
  forward<&EventSet::end_parallel_scan>(set);
  forward<&EventSet::push_region>(set);
  forward<&EventSet::pop_region>(set);
  forward<&EventSet::create_profile_section>(set);
  forward<&EventSet::start_profile_section>(set);
  forward<&EventSet::stop_profile_section>(set);
  forward<&EventSet::destroy_profile_section>(set);
  forward<&EventSet::profile_event>(set);
  forward<&EventSet::begin_deep_copy>(set);
  forward<&EventSet::end_deep_copy>(set);
  forward<&EventSet::begin_fence>(set);
  forward<&EventSet::end_fence>(set);
  forward<&EventSet::sync_dual_view>(set);
  forward<&EventSet::modify_dual_view>(set);
  forward<&EventSet::declare_metadata>(set);
  // Both, if the tool follows either: pairs are kept whole.
  if (set.allocate_data || set.deallocate_data) {
    set.allocate_data = &allocate;
    set.deallocate_data = &deallocate;
  }
  set.finalize = &finalize;  // says what was held back, whether the tool finalizes or not
  Kokkos::Tools::Experimental::set_callbacks(set);
}

}  // namespace portalab
