// gemm and dot called directly in the vendor library that serves the space
// (libraries/vendor.hpp): what Kokkos Kernels' layer is measured against.
#pragma once

#include "libraries/library_threads.hpp"
#include "libraries/vendor.hpp"

#include <Kokkos_Core.hpp>

#include <cblas.h>

#include <algorithm>
#include <type_traits>

namespace portalab::libraries {
namespace detail {

// The routines of each library by element type. Forwarding functions, not
// static constexpr function pointers: built by nvcc, such a pointer member
// read as null in one translation unit (the Cuda gemm test called address 0).
template <class T>
struct Cblas;
template <>
struct Cblas<float> {
  template <class... A>
  static auto gemm(A... a) {
    return cblas_sgemm(a...);
  }
  template <class... A>
  static auto dot(A... a) {
    return cblas_sdot(a...);
  }
};
template <>
struct Cblas<double> {
  template <class... A>
  static auto gemm(A... a) {
    return cblas_dgemm(a...);
  }
  template <class... A>
  static auto dot(A... a) {
    return cblas_ddot(a...);
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
template <class T>
struct Cublas;
template <>
struct Cublas<float> {
  template <class... A>
  static auto gemm(A... a) {
    return cublasSgemm(a...);
  }
  template <class... A>
  static auto dot(A... a) {
    return cublasSdot(a...);
  }
};
template <>
struct Cublas<double> {
  template <class... A>
  static auto gemm(A... a) {
    return cublasDgemm(a...);
  }
  template <class... A>
  static auto dot(A... a) {
    return cublasDdot(a...);
  }
};
#endif

}  // namespace detail

// C = A·B for column-major (LayoutLeft) matrices; 2mnk FLOPs. On a GPU the
// call only enqueues on the instance's stream; on the host it runs at once,
// after the instance's earlier work.
template <class Exec, class AM, class BM, class CM>
void vendor_gemm(const Exec& exec, const AM& A, const BM& B, const CM& C) {
  using T = typename CM::non_const_value_type;
  static_assert(std::is_same_v<typename CM::array_layout, Kokkos::LayoutLeft>,
                "vendor_gemm: column-major (LayoutLeft) matrices");
  const int m = vendor_int(C.extent(0), "gemm"), n = vendor_int(C.extent(1), "gemm"),
            k = vendor_int(A.extent(1), "gemm");
  if (m == 0 || n == 0) return;
  const int lda = std::max<int>(1, A.stride(1)), ldb = std::max<int>(1, B.stride(1)),
            ldc = std::max<int>(1, C.stride(1));
  constexpr auto vendor = DenseVendorFor<Exec, T>::value;
  // The threads first: whoever listens to the region sees the count the call runs with.
  const LibraryThreads<Exec> threads(exec);
  const VendorRegion region("gemm", DenseVendorFor<Exec, T>::blas, vendor_type_name<T>());
  if constexpr (vendor == DenseVendor::host) {
    exec.fence("portalab::vendor_gemm: inputs ready");
    detail::Cblas<T>::gemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, T(1), A.data(), lda,
                           B.data(), ldb, T(0), C.data(), ldc);
  }
#if defined(KOKKOS_ENABLE_CUDA)
  else if constexpr (vendor == DenseVendor::cuda) {
    cublasHandle_t h = cublas_on(exec);
    PORTALAB_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    const T one = 1, zero = 0;
    PORTALAB_CUBLAS_CHECK(detail::Cublas<T>::gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one,
                                                  A.data(), lda, B.data(), ldb, &zero, C.data(),
                                                  ldc));
  }
#endif
  else {
    throw_no_vendor<Exec, T>("vendor_gemm");
  }
}

// result() = x·y, summed as the library does, into a rank-0 View in the
// space's memory (so that, on a GPU, nothing waits for it). 2n FLOPs.
template <class Exec, class X, class Y, class R>
void vendor_dot(const Exec& exec, const X& x, const Y& y, const R& result) {
  using T = typename X::non_const_value_type;
  static_assert(std::is_same_v<typename R::non_const_value_type, T>, "vendor_dot: result in T");
  const int n = vendor_int(x.extent(0), "dot");
  const int incx = std::max<int>(1, x.stride(0)), incy = std::max<int>(1, y.stride(0));
  constexpr auto vendor = DenseVendorFor<Exec, T>::value;
  // The threads first: whoever listens to the region sees the count the call runs with.
  const LibraryThreads<Exec> threads(exec);
  const VendorRegion region("dot", DenseVendorFor<Exec, T>::blas, vendor_type_name<T>());
  if constexpr (vendor == DenseVendor::host) {
    exec.fence("portalab::vendor_dot: inputs ready");
    result() = detail::Cblas<T>::dot(n, x.data(), incx, y.data(), incy);
  }
#if defined(KOKKOS_ENABLE_CUDA)
  else if constexpr (vendor == DenseVendor::cuda) {
    cublasHandle_t h = cublas_on(exec);
    // Device pointer mode: the result stays on the GPU and the call does not
    // wait for it.
    PORTALAB_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
    PORTALAB_CUBLAS_CHECK(
        detail::Cublas<T>::dot(h, n, x.data(), incx, y.data(), incy, result.data()));
    PORTALAB_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  }
#endif
  else {
    throw_no_vendor<Exec, T>("vendor_dot");
  }
}

}  // namespace portalab::libraries
