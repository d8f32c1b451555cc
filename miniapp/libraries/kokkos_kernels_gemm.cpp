#include "libraries/kokkos_kernels_gemm.hpp"

#include <KokkosBlas3_gemm.hpp>

namespace portalab::libraries {

template <class Space, class T>
void kokkos_kernels_gemm(const Space& exec, const GemmMatrix<Space, const T>& a,
                         const GemmMatrix<Space, const T>& b, const GemmMatrix<Space, T>& c) {
  KokkosBlas::gemm(exec, "N", "N", T(1), a, b, T(0), c);
}

// Every space Kokkos was built with (as platform/spaces.hpp's EnabledSpaces
// lists them), float and double: the element types the decks and
// calibration use. A space missing here is an undefined reference when
// portalab links, never a silent gap.
#define PORTALAB_KOKKOS_KERNELS_GEMM(Space)                                                \
  template void kokkos_kernels_gemm<Space, float>(const Space&,                            \
                                                  const GemmMatrix<Space, const float>&,   \
                                                  const GemmMatrix<Space, const float>&,   \
                                                  const GemmMatrix<Space, float>&);        \
  template void kokkos_kernels_gemm<Space, double>(const Space&,                           \
                                                   const GemmMatrix<Space, const double>&, \
                                                   const GemmMatrix<Space, const double>&, \
                                                   const GemmMatrix<Space, double>&);
#if defined(KOKKOS_ENABLE_SERIAL)
PORTALAB_KOKKOS_KERNELS_GEMM(Kokkos::Serial)
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
PORTALAB_KOKKOS_KERNELS_GEMM(Kokkos::OpenMP)
#endif
#if defined(KOKKOS_ENABLE_THREADS)
PORTALAB_KOKKOS_KERNELS_GEMM(Kokkos::Threads)
#endif
#if defined(KOKKOS_ENABLE_CUDA)
PORTALAB_KOKKOS_KERNELS_GEMM(Kokkos::Cuda)
#endif
#if defined(KOKKOS_ENABLE_HIP)
PORTALAB_KOKKOS_KERNELS_GEMM(Kokkos::HIP)
#endif
#if defined(KOKKOS_ENABLE_SYCL)
PORTALAB_KOKKOS_KERNELS_GEMM(Kokkos::SYCL)
#endif
#undef PORTALAB_KOKKOS_KERNELS_GEMM

}  // namespace portalab::libraries
