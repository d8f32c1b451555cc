// Which library a Kokkos Kernels call actually ran, read from the profiling
// regions it pushes ("KokkosBlas::gemm[TPL_CUBLAS,double]"), not assumed.
#pragma once

#include <Kokkos_Core.hpp>

#include <string>
#include <vector>

namespace portalab {

// Records region names pushed while it lives, through Kokkos Tools callbacks;
// a tool loaded by the user keeps receiving its events afterwards.
class RegionRecorder {
 public:
  RegionRecorder() : m_saved(Kokkos::Tools::Experimental::get_callbacks()) {
    recorded().clear();
    Kokkos::Tools::Experimental::set_push_region_callback(
        [](const char* name) { recorded().emplace_back(name); });
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
  Kokkos::Tools::Experimental::EventSet m_saved;
};

}  // namespace portalab
