// Which vendor library serves dense linear algebra in an execution space, and
// the handles and error checks of the GPU libraries. In the spirit of Kokkos
// Kernels' TPL dispatch (blas/tpls/*_tpl_spec_avail.hpp): a trait answers per
// execution space and element type; each call routes by it and puts the
// library's work on the stream of the execution-space instance it is given.
#pragma once

#include <Kokkos_Core.hpp>

#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cublas_v2.h>
#include <cusolverDn.h>
#endif

namespace portalab::libraries {

enum class DenseVendor {
  none,  // no vendor library: portable kernels only
  host,  // CBLAS and LAPACKE on the host (OpenBLAS, MKL, ... whichever is linked)
  cuda,  // cuBLAS and cuSOLVER on the instance's stream
};

// The library serving Exec for element type T; `blas` and `lapack` name it as
// Kokkos Kernels' profiling regions do.
template <class Exec, class T>
struct DenseVendorFor {
  static constexpr DenseVendor value = DenseVendor::none;
  static constexpr const char* blas = "none";
  static constexpr const char* lapack = "none";
};

template <class T>
inline constexpr bool is_blas_real_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

template <class Exec, class T>
requires(is_blas_real_v<T>&& bool(
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::
        accessible)) struct DenseVendorFor<Exec, T> {
  static constexpr DenseVendor value = DenseVendor::host;
  static constexpr const char* blas = "BLAS";
  static constexpr const char* lapack = "LAPACK";
};

#if defined(KOKKOS_ENABLE_CUDA)
template <class T>
requires is_blas_real_v<T>
struct DenseVendorFor<Kokkos::Cuda, T> {
  static constexpr DenseVendor value = DenseVendor::cuda;
  static constexpr const char* blas = "cuBLAS";
  static constexpr const char* lapack = "cuSOLVER";
};
#endif

template <class Exec, class T>
[[noreturn]] void throw_no_vendor(const char* what) {
  throw std::runtime_error(std::string(what) + ": no vendor library serves execution space " +
                           Exec::name() + " for this element type");
}

#if defined(KOKKOS_ENABLE_CUDA)
namespace detail {

inline void vendor_check(int status, const char* call, const char* file, int line) {
  if (status != 0)
    throw std::runtime_error(std::string(call) + " failed with status " + std::to_string(status) +
                             " at " + file + ":" + std::to_string(line));
}

}  // namespace detail

#define PORTALAB_CUBLAS_CHECK(call) \
  ::portalab::libraries::detail::vendor_check(static_cast<int>(call), #call, __FILE__, __LINE__)
#define PORTALAB_CUSOLVER_CHECK(call) \
  ::portalab::libraries::detail::vendor_check(static_cast<int>(call), #call, __FILE__, __LINE__)

// One handle per stream and library, made on the stream's first use (the cold
// call pays for it, as a Python user's first call does) and destroyed when
// Kokkos finalizes, before the CUDA context goes. Per stream, not per
// process: instances running concurrently (inverse_pair) must not share a
// handle's workspace, and a handle is bound to its stream once, so host
// // threads never race on cublasSetStream. Keyed by the stream's address: a
// stream made later at a freed one's address reuses its handle as it is.
template <class Handle, auto create, auto destroy, auto set_stream>
Handle stream_handle(cudaStream_t stream) {
  static std::mutex lock;
  static std::map<cudaStream_t, Handle>* handles = nullptr;
  const std::lock_guard<std::mutex> guard(lock);
  if (!handles) {
    handles = new std::map<cudaStream_t, Handle>;
    Kokkos::push_finalize_hook([] {
      const std::lock_guard<std::mutex> g(lock);
      for (auto& [s, h] : *handles) destroy(h);
      delete handles;
      handles = nullptr;
    });
  }
  auto [it, made] = handles->try_emplace(stream, Handle{});
  if (made) {
    PORTALAB_CUBLAS_CHECK(create(&it->second));
    PORTALAB_CUBLAS_CHECK(set_stream(it->second, stream));
  }
  return it->second;
}

// The library's handle with its work on the instance's stream.
inline cublasHandle_t cublas_on(const Kokkos::Cuda& exec) {
  return stream_handle<cublasHandle_t, cublasCreate, cublasDestroy, cublasSetStream>(
      exec.cuda_stream());
}
inline cusolverDnHandle_t cusolver_on(const Kokkos::Cuda& exec) {
  return stream_handle<cusolverDnHandle_t, cusolverDnCreate, cusolverDnDestroy,
                       cusolverDnSetStream>(exec.cuda_stream());
}
#endif

// A profiling region around one vendor call, named as Kokkos Kernels names its
// TPL calls ("portalab::gemm[TPL_cuBLAS,float]"), so that whoever listens (the
// runner, a Kokkos tool, a profiler) learns which library served the call.
class VendorRegion {
 public:
  VendorRegion(const char* routine, const char* library, const char* type) {
    Kokkos::Profiling::pushRegion(std::string("portalab::") + routine + "[TPL_" + library + "," +
                                  type + "]");
  }
  ~VendorRegion() { Kokkos::Profiling::popRegion(); }
  VendorRegion(const VendorRegion&) = delete;
  VendorRegion& operator=(const VendorRegion&) = delete;
};

template <class T>
constexpr const char* vendor_type_name() {
  return std::is_same_v<T, float> ? "float" : std::is_same_v<T, double> ? "double" : "other";
}

// Why no vendor library serves Exec for T in this build, or "" when one
// does: a fact known at compile time. A variant calling the vendor names it
// in its row (Variant::missing_library), and is not applicable where it says
// why, instead of failing when it runs.
template <class Exec, class T>
std::string why_no_vendor() {
  if constexpr (DenseVendorFor<Exec, T>::value != DenseVendor::none)
    return {};
  else
    return std::string("no vendor BLAS/LAPACK serves ") + Exec::name() + " for " +
           (is_blas_real_v<T> ? vendor_type_name<T>() : "this element type") +
           " in portalab: it calls CBLAS/LAPACKE from host spaces and cuBLAS/cuSOLVER on Cuda "
           "(rocBLAS, rocSOLVER and oneMKL are not wired in)";
}

// Vendor interfaces take int sizes.
inline int vendor_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::runtime_error(std::string(what) + ": size " + std::to_string(n) +
                             " exceeds the vendor interface's int");
  return static_cast<int>(n);
}

}  // namespace portalab::libraries
