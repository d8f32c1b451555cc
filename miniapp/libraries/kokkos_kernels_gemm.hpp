// C = A·B through Kokkos Kernels (and so through the library it dispatches
// to where the build enables one: the host BLAS, cuBLAS; its own kernel
// otherwise, as on HIP), compiled in one place: the gemm experiment,
// calibration's gemm peak and the linalg benchmark call the same instance.
// KokkosBlas::gemm is the costliest instantiation in the framework, and
// each file that made its own paid for it again (docs/building.md, through
// nvcc and under ASan above all). Defined in kokkos_kernels_gemm.cpp for
// every space Kokkos was built with, float and double.
#pragma once

#include <Kokkos_Core.hpp>

namespace portalab::libraries {

// Column-major, as BLAS takes it, in the space's own memory.
template <class Space, class T>
using GemmMatrix =
    Kokkos::View<T**, Kokkos::LayoutLeft, Kokkos::Device<Space, typename Space::memory_space>>;

// C = A·B on exec's instance (not fenced). Called with its template
// arguments: the matrices convert to these types.
template <class Space, class T>
void kokkos_kernels_gemm(const Space& exec, const GemmMatrix<Space, const T>& a,
                         const GemmMatrix<Space, const T>& b, const GemmMatrix<Space, T>& c);

}  // namespace portalab::libraries
