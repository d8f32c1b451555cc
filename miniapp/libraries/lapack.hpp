// LU and QR factorisations through the vendor LAPACK that serves the space
// (libraries/vendor.hpp): LAPACKE on the host, cuSOLVER on the instance's
// stream on Cuda. Kokkos Kernels 4.6 has gesv but no getrf alone and no QR.
// Matrices are column-major (LayoutLeft), pivots 1-based as LAPACK's.
#pragma once

#include "kernels/factorization.hpp"
#include "libraries/library_threads.hpp"
#include "libraries/vendor.hpp"

#include <Kokkos_Core.hpp>
#include <KokkosKernels_config.h>
#include <KokkosLapack_gesv_tpl_spec_avail.hpp>

#include <lapacke.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

namespace portalab::libraries {

static_assert(sizeof(lapack_int) == sizeof(int), "LAPACKE with 32-bit integers (LP64)");

// Scratch the library needs, kept between calls so that warm calls allocate
// nothing; `info` is the last call's LAPACK info (> 0: a zero pivot / failure).
template <class Exec, class T>
struct LapackWorkspace {
  using memory_space = typename Exec::memory_space;
  Kokkos::View<T*, memory_space> work;
  Kokkos::View<int, memory_space> info{"portalab::lapack_info"};

  // Zeroed once when allocated (in the cold call: a fill of lwork elements
  // beside an O(n³) factorisation): cuSOLVER's kernels read parts of their
  // workspace before writing them (compute-sanitizer initcheck, in
  // geqr2_smem_domino_fast), and zeros make those reads defined.
  void reserve(const Exec& exec, int elements) {
    if (work.extent(0) < static_cast<std::size_t>(elements))
      work = Kokkos::View<T*, memory_space>(Kokkos::view_alloc(exec, "portalab::lapack_work"),
                                            elements);
  }
};

namespace detail {

inline int leading(std::size_t stride) { return std::max<int>(1, static_cast<int>(stride)); }

// The routines of each library by element type. Forwarding functions, not
// static constexpr function pointers: built by nvcc, such a pointer member
// read as null in one translation unit (the Cuda gemm test called address 0).
template <class T>
struct Lapacke;
template <>
struct Lapacke<float> {
  template <class... A>
  static auto getrf(A... a) {
    return LAPACKE_sgetrf(a...);
  }
  template <class... A>
  static auto getrs(A... a) {
    return LAPACKE_sgetrs(a...);
  }
  template <class... A>
  static auto geqrf(A... a) {
    return LAPACKE_sgeqrf(a...);
  }
  template <class... A>
  static auto orgqr(A... a) {
    return LAPACKE_sorgqr(a...);
  }
};
template <>
struct Lapacke<double> {
  template <class... A>
  static auto getrf(A... a) {
    return LAPACKE_dgetrf(a...);
  }
  template <class... A>
  static auto getrs(A... a) {
    return LAPACKE_dgetrs(a...);
  }
  template <class... A>
  static auto geqrf(A... a) {
    return LAPACKE_dgeqrf(a...);
  }
  template <class... A>
  static auto orgqr(A... a) {
    return LAPACKE_dorgqr(a...);
  }
};

#if defined(KOKKOS_ENABLE_CUDA)
template <class T>
struct Cusolver;
template <>
struct Cusolver<float> {
  template <class... A>
  static auto getrf_size(A... a) {
    return cusolverDnSgetrf_bufferSize(a...);
  }
  template <class... A>
  static auto getrf(A... a) {
    return cusolverDnSgetrf(a...);
  }
  template <class... A>
  static auto getrs(A... a) {
    return cusolverDnSgetrs(a...);
  }
  template <class... A>
  static auto geqrf_size(A... a) {
    return cusolverDnSgeqrf_bufferSize(a...);
  }
  template <class... A>
  static auto geqrf(A... a) {
    return cusolverDnSgeqrf(a...);
  }
  template <class... A>
  static auto orgqr_size(A... a) {
    return cusolverDnSorgqr_bufferSize(a...);
  }
  template <class... A>
  static auto orgqr(A... a) {
    return cusolverDnSorgqr(a...);
  }
};
template <>
struct Cusolver<double> {
  template <class... A>
  static auto getrf_size(A... a) {
    return cusolverDnDgetrf_bufferSize(a...);
  }
  template <class... A>
  static auto getrf(A... a) {
    return cusolverDnDgetrf(a...);
  }
  template <class... A>
  static auto getrs(A... a) {
    return cusolverDnDgetrs(a...);
  }
  template <class... A>
  static auto geqrf_size(A... a) {
    return cusolverDnDgeqrf_bufferSize(a...);
  }
  template <class... A>
  static auto geqrf(A... a) {
    return cusolverDnDgeqrf(a...);
  }
  template <class... A>
  static auto orgqr_size(A... a) {
    return cusolverDnDorgqr_bufferSize(a...);
  }
  template <class... A>
  static auto orgqr(A... a) {
    return cusolverDnDorgqr(a...);
  }
};
#endif

// Routes one LAPACK call by DenseVendorFor<Exec, T>: host(), after the
// instance's earlier work, or cuda(handle on the instance's stream).
template <class Exec, class T, class Host, class Cuda>
void dispatch(const Exec& exec, const char* what, Host&& host, [[maybe_unused]] Cuda&& cuda) {
  constexpr auto vendor = DenseVendorFor<Exec, T>::value;
  // The threads first: whoever listens to the region sees the count the call runs with.
  const LibraryThreads<Exec> threads(exec);
  const VendorRegion region(what, DenseVendorFor<Exec, T>::lapack, vendor_type_name<T>());
  if constexpr (vendor == DenseVendor::host) {
    exec.fence("portalab::lapack: inputs ready");
    host();
  }
#if defined(KOKKOS_ENABLE_CUDA)
  else if constexpr (vendor == DenseVendor::cuda) {
    cuda(cusolver_on(exec));
  }
#endif
  else {
    throw_no_vendor<Exec, T>(what);
  }
}

}  // namespace detail

// Why KokkosLapack::gesv cannot run in Exec for T, or "": Kokkos Kernels 4.6
// has no gesv of its own, only LAPACK, cuSOLVER, rocSOLVER or MAGMA, so the
// answer is its TPL trait for the Views gesv hands the library.
template <class Exec, class T>
std::string why_no_kokkos_kernels_gesv() {
  using Device = Kokkos::Device<Exec, typename Exec::memory_space>;
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using Matrix = Kokkos::View<T**, Kokkos::LayoutLeft, Device, Unmanaged>;
  using Pivots = Kokkos::View<int*, Kokkos::LayoutLeft, Device, Unmanaged>;
  if constexpr (KokkosLapack::Impl::gesv_tpl_spec_avail<Exec, Matrix, Matrix, Pivots>::value)
    return {};
  else
    return std::string(
               "Kokkos Kernels 4.6 has no gesv of its own and no library it calls serves ") +
           Exec::name() + " in this build (LAPACK, cuSOLVER, rocSOLVER or MAGMA)";
}

// A = P·L·U in place, pivots in ipiv (n ints). (2/3)n³ FLOPs.
template <class Exec, class AM, class IV, class T = typename AM::non_const_value_type>
void getrf(const Exec& exec, const AM& A, const IV& ipiv, LapackWorkspace<Exec, T>& ws) {
  const int m = vendor_int(A.extent(0), "getrf"), n = vendor_int(A.extent(1), "getrf");
  const int lda = detail::leading(A.stride(1));
  detail::dispatch<Exec, T>(
      exec, "getrf",
      [&] {
        ws.info() = detail::Lapacke<T>::getrf(LAPACK_COL_MAJOR, m, n, A.data(), lda, ipiv.data());
      },
      [&](auto h) {
#if defined(KOKKOS_ENABLE_CUDA)
        using C = detail::Cusolver<T>;
        int lwork = 0;
        PORTALAB_CUSOLVER_CHECK(C::getrf_size(h, m, n, A.data(), lda, &lwork));
        ws.reserve(exec, lwork);
        PORTALAB_CUSOLVER_CHECK(
            C::getrf(h, m, n, A.data(), lda, ws.work.data(), ipiv.data(), ws.info.data()));
#endif
      });
}

// B = A⁻¹·B from getrf's factors. 2n²·nrhs FLOPs.
template <class Exec, class AM, class IV, class BM, class T = typename AM::non_const_value_type>
void getrs(const Exec& exec, const AM& LU, const IV& ipiv, const BM& B,
           LapackWorkspace<Exec, T>& ws) {
  const int n = vendor_int(LU.extent(0), "getrs"), nrhs = vendor_int(B.extent(1), "getrs");
  const int lda = detail::leading(LU.stride(1)), ldb = detail::leading(B.stride(1));
  detail::dispatch<Exec, T>(
      exec, "getrs",
      [&] {
        ws.info() = detail::Lapacke<T>::getrs(LAPACK_COL_MAJOR, 'N', n, nrhs, LU.data(), lda,
                                              ipiv.data(), B.data(), ldb);
      },
      [&](auto h) {
#if defined(KOKKOS_ENABLE_CUDA)
        PORTALAB_CUSOLVER_CHECK(detail::Cusolver<T>::getrs(
            h, CUBLAS_OP_N, n, nrhs, LU.data(), lda, ipiv.data(), B.data(), ldb, ws.info.data()));
#endif
      });
}

// Householder QR in place: R on and above the diagonal, the reflectors below
// it and in tau (min(m, n) scalars). 2n²(m − n/3) FLOPs.
template <class Exec, class AM, class TV, class T = typename AM::non_const_value_type>
void geqrf(const Exec& exec, const AM& A, const TV& tau, LapackWorkspace<Exec, T>& ws) {
  const int m = vendor_int(A.extent(0), "geqrf"), n = vendor_int(A.extent(1), "geqrf");
  const int lda = detail::leading(A.stride(1));
  detail::dispatch<Exec, T>(
      exec, "geqrf",
      [&] {
        ws.info() = detail::Lapacke<T>::geqrf(LAPACK_COL_MAJOR, m, n, A.data(), lda, tau.data());
      },
      [&](auto h) {
#if defined(KOKKOS_ENABLE_CUDA)
        using C = detail::Cusolver<T>;
        int lwork = 0;
        PORTALAB_CUSOLVER_CHECK(C::geqrf_size(h, m, n, A.data(), lda, &lwork));
        ws.reserve(exec, lwork);
        PORTALAB_CUSOLVER_CHECK(
            C::geqrf(h, m, n, A.data(), lda, tau.data(), ws.work.data(), lwork, ws.info.data()));
#endif
      });
}

// Overwrites geqrf's reflectors in A (m×n, m ≥ n) with the m×n Q they form.
template <class Exec, class AM, class TV, class T = typename AM::non_const_value_type>
void orgqr(const Exec& exec, const AM& A, const TV& tau, LapackWorkspace<Exec, T>& ws) {
  const int m = vendor_int(A.extent(0), "orgqr"), n = vendor_int(A.extent(1), "orgqr");
  const int k = vendor_int(tau.extent(0), "orgqr");
  const int lda = detail::leading(A.stride(1));
  detail::dispatch<Exec, T>(
      exec, "orgqr",
      [&] {
        ws.info() = detail::Lapacke<T>::orgqr(LAPACK_COL_MAJOR, m, n, k, A.data(), lda, tau.data());
      },
      [&](auto h) {
#if defined(KOKKOS_ENABLE_CUDA)
        using C = detail::Cusolver<T>;
        int lwork = 0;
        PORTALAB_CUSOLVER_CHECK(C::orgqr_size(h, m, n, k, A.data(), lda, tau.data(), &lwork));
        ws.reserve(exec, lwork);
        PORTALAB_CUSOLVER_CHECK(
            C::orgqr(h, m, n, k, A.data(), lda, tau.data(), ws.work.data(), lwork, ws.info.data()));
#endif
      });
}

// One inversion's own LU factors, pivots, determinant summary and library
// workspace: shared with nothing, so that several can run at once.
template <class Exec, class T>
struct LuInverse {
  using Device = Kokkos::Device<Exec, typename Exec::memory_space>;
  explicit LuInverse(std::size_t n)
      : lu(Kokkos::view_alloc(Kokkos::WithoutInitializing, "LU"), n, n),
        ipiv("ipiv", n),  // zeroed, untimed: the library is handed no undefined memory
        summary("lu_summary", 3) {}

  // X = A⁻¹ through the vendor getrf + getrs on exec, A left as it is; the
  // summary (sign, log|det|, zero pivots) tells a singular A from a wrong X.
  template <class AM, class XM>
  void invert(const Exec& exec, const AM& A, const XM& X) {
    Kokkos::deep_copy(exec, lu, A);
    kernels::set_identity(exec, X);
    getrf(exec, lu, ipiv, workspace);
    getrs(exec, lu, ipiv, X, workspace);
    kernels::lu_summary(exec, lu, ipiv, summary);
  }

  Kokkos::View<T**, Kokkos::LayoutLeft, Device> lu;
  Kokkos::View<int*, Kokkos::LayoutLeft, Device> ipiv;
  Kokkos::View<double*, Device> summary;  // sign, log|det|, zero pivots
  LapackWorkspace<Exec, T> workspace;
};

}  // namespace portalab::libraries
