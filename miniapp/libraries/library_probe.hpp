// Which library a call actually ran, read from the profiling regions that
// Kokkos Kernels' TPL calls ("KokkosBlas::gemm[TPL_CUBLAS,double]") and
// portalab's own vendor calls ("portalab::getrf[TPL_cuSOLVER,float]") push.
#pragma once

#include "libraries/library_threads.hpp"

#include <Kokkos_Core.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// Records the regions pushed while it lives, from any thread, through Kokkos
// Tools' push-region callback; inside each library call's region ("[TPL_"),
// also the thread count the host BLAS/LAPACK runs that call with
// (libraries/library_threads.hpp).
//
// A tool the user loaded (KOKKOS_TOOLS_LIBS, --kokkos-tools-libs) keeps every
// event: Kokkos 4.6 holds one set of callbacks and offers no second listener,
// so the recorder takes over the push callback alone
// (Kokkos::Tools::Experimental::get_callbacks / set_push_region_callback),
// passes each push on to the callback it took over, in order, and gives that
// back when the last recorder ends. Recorders nest: each records everything.
class RegionRecorder {
 public:
  // A host library call: its region and the library's thread count inside it.
  struct LibraryCall {
    std::string region;
    int threads;  // <= 0: the linked library's count cannot be read
  };

  RegionRecorder() {
    const std::lock_guard<std::mutex> guard(lock());
    if (active().empty()) {
      taken_over() = Kokkos::Tools::Experimental::get_callbacks().push_region;
      Kokkos::Tools::Experimental::set_push_region_callback(&record);
    }
    active().push_back(this);
  }
  ~RegionRecorder() {
    const std::lock_guard<std::mutex> guard(lock());
    active().erase(std::find(active().begin(), active().end(), this));
    if (active().empty()) Kokkos::Tools::Experimental::set_push_region_callback(taken_over());
  }
  RegionRecorder(const RegionRecorder&) = delete;
  RegionRecorder& operator=(const RegionRecorder&) = delete;

  std::vector<std::string> regions() const {
    const std::lock_guard<std::mutex> guard(lock());
    return m_regions;
  }
  std::vector<LibraryCall> library_calls() const {
    const std::lock_guard<std::mutex> guard(lock());
    return m_calls;
  }

  // The most threads a host library call ran with; 0 when no library call
  // was made, -1 when the linked library's count cannot be read (not
  // OpenBLAS, MKL or BLIS). It reads the host library whatever the space:
  // a device space's calls (cuBLAS) are no concern of it.
  int library_threads() const {
    int seen = 0;
    for (const auto& call : library_calls())
      seen = call.threads <= 0 || seen < 0 ? -1 : std::max(seen, call.threads);
    return seen;
  }

  // Whether a Kokkos Tools library listens (KOKKOS_TOOLS_LIBS,
  // --kokkos-tools-libs, or a program's own callbacks): an event callback
  // set, the recorders' own push aside.
  static bool tool_loaded() {
    auto set = Kokkos::Tools::Experimental::get_callbacks();
    {
      const std::lock_guard<std::mutex> guard(lock());
      if (!active().empty()) set.push_region = taken_over();
    }
    return set.init || set.finalize || set.begin_parallel_for || set.begin_parallel_reduce ||
           set.begin_parallel_scan || set.push_region || set.pop_region || set.allocate_data ||
           set.begin_deep_copy || set.begin_fence || set.create_profile_section ||
           set.profile_event;
  }

  // "cuBLAS", "BLAS", "cuSOLVER", "LAPACK", ... for the first vendor region
  // pushed, or "native" when the call ran Kokkos Kernels' own kernels.
  std::string library() const {
    const auto calls = library_calls();
    if (calls.empty()) return "native";
    const std::string& r = calls.front().region;
    const auto at = r.find("[TPL_");
    const std::string tpl = r.substr(at + 5, r.find_first_of(",]", at) - at - 5);
    if (tpl == "CUBLAS") return "cuBLAS";
    if (tpl == "CUSOLVER") return "cuSOLVER";
    if (tpl == "ROCBLAS") return "rocBLAS";
    return tpl;  // BLAS, LAPACK, MKL, MAGMA: as Kokkos Kernels names them
  }

 private:
  // Concurrent instances push from threads of their own. The callback taken
  // over runs outside the lock: a tool may fence, and so push, from it.
  static void record(const char* name) {
    Kokkos::Tools::pushFunction next = nullptr;
    {
      const std::lock_guard<std::mutex> guard(lock());
      const bool library = std::string_view(name).find("[TPL_") != std::string_view::npos;
      const int threads = library ? libraries::LibraryThreadControl::instance().current() : 0;
      for (RegionRecorder* r : active()) {
        r->m_regions.emplace_back(name);
        if (library) r->m_calls.push_back({name, threads});
      }
      next = taken_over();
    }
    if (next) next(name);
  }
  static std::vector<RegionRecorder*>& active() {
    static std::vector<RegionRecorder*> recorders;
    return recorders;
  }
  static Kokkos::Tools::pushFunction& taken_over() {
    static Kokkos::Tools::pushFunction callback = nullptr;
    return callback;
  }
  static std::mutex& lock() {
    static std::mutex m;
    return m;
  }
  std::vector<std::string> m_regions;
  std::vector<LibraryCall> m_calls;
};

// The library that provides a C symbol in this process ("OpenBLAS", "MKL",
// "BLIS", ...), from the file the dynamic linker resolved it to; `fallback`
// when the file does not say. Debian's libblas.so.3 is a chain of links
// (alternatives) to the provider's folder: the resolved path names it.
inline std::string library_providing(const char* symbol, const std::string& fallback) {
  void* address = dlsym(RTLD_DEFAULT, symbol);
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_fname) return fallback;
  char resolved[PATH_MAX];
  std::string path = realpath(info.dli_fname, resolved) ? resolved : info.dli_fname;
  for (char& c : path) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [needle, name] : {std::pair{"openblas", "OpenBLAS"},
                                     {"mkl", "MKL"},
                                     {"blis", "BLIS"},
                                     {"atlas", "ATLAS"},
                                     {"armpl", "ArmPL"}})
    if (path.find(needle) != std::string::npos) return name;
  return fallback;
}

// A Kokkos Kernels TPL name made specific: its "BLAS" and "LAPACK" are
// whichever host library provides sgemm_ / sgetrf_ here.
inline std::string vendor_library(const std::string& tpl) {
  if (tpl == "BLAS") return library_providing("sgemm_", "BLAS");
  if (tpl == "LAPACK") return library_providing("sgetrf_", "LAPACK");
  return tpl;
}

}  // namespace portalab
