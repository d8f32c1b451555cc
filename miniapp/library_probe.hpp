// Which library a call actually ran, read from the profiling regions that
// Kokkos Kernels' TPL calls ("KokkosBlas::gemm[TPL_CUBLAS,double]") and
// portalab's own vendor calls ("portalab::getrf[TPL_cuSOLVER,float]") push.
#pragma once

#include <Kokkos_Core.hpp>

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// Records region names pushed while it lives, through Kokkos Tools callbacks;
// a tool loaded by the user keeps receiving its events afterwards.
class RegionRecorder {
 public:
  RegionRecorder() : m_saved(Kokkos::Tools::Experimental::get_callbacks()) {
    recorded().clear();
    // Variants on several host instances push from several threads at once
    // (inverse_pair's concurrent getrf on two): unguarded, the vector's
    // reallocations race (ASan: a double free).
    Kokkos::Tools::Experimental::set_push_region_callback([](const char* name) {
      const std::lock_guard lock(mutex());
      recorded().emplace_back(name);
    });
  }
  ~RegionRecorder() { Kokkos::Tools::Experimental::set_callbacks(m_saved); }
  RegionRecorder(const RegionRecorder&) = delete;
  RegionRecorder& operator=(const RegionRecorder&) = delete;

  const std::vector<std::string>& regions() const { return recorded(); }

  // "cuBLAS", "BLAS", "cuSOLVER", "LAPACK", ... for the first vendor region
  // pushed, or "native" when the call ran Kokkos Kernels' own kernels.
  std::string library() const {
    for (const auto& r : recorded()) {
      const auto at = r.find("[TPL_");
      if (at == std::string::npos) continue;
      const std::string tpl = r.substr(at + 5, r.find_first_of(",]", at) - at - 5);
      if (tpl == "CUBLAS") return "cuBLAS";
      if (tpl == "CUSOLVER") return "cuSOLVER";
      if (tpl == "ROCBLAS") return "rocBLAS";
      return tpl;  // BLAS, LAPACK, MKL, MAGMA: as Kokkos Kernels names them
    }
    return "native";
  }

 private:
  static std::vector<std::string>& recorded() {
    static std::vector<std::string> names;
    return names;
  }
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  Kokkos::Tools::Experimental::EventSet m_saved;
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
  for (const auto& [needle, name] : {std::pair{"openblas", "OpenBLAS"}, {"mkl", "MKL"},
                                     {"blis", "BLIS"}, {"atlas", "ATLAS"}, {"armpl", "ArmPL"}})
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
