// Sines, cosines and exponentials of whole vectors on a host, from glibc's
// vector math library (libmvec), for the host blocks of kernels that call
// them (PolarDistance, GaussianPdf, op::Cos and its kind). GCC calls libmvec
// only under -ffast-math, so a host loop over std::sin and std::cos makes
// one scalar libm call per element, several times slower than libmvec's
// vectors (within 4 ulp; docs/performance.md, "Vector math on the host").
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

// The build says where libmvec is linked (CMakeLists.txt); its x86-64
// functions take AVX-512 or AVX2 vectors; device passes never see them.
#if defined(PORTALAB_HAVE_LIBMVEC) && !defined(__CUDA_ARCH__) && \
    !defined(__HIP_DEVICE_COMPILE__) && defined(__x86_64__) &&   \
    (defined(__AVX512F__) || defined(__AVX2__))
#include <immintrin.h>
#define PORTALAB_HOST_VECTOR_MATH 1
#else
#define PORTALAB_HOST_VECTOR_MATH 0
#endif

namespace portalab::kernels {

// HostVectorMath<T>: a vector of `width` Ts and what the blocks do with it;
// absent where there is no vector math (VectorMath<T> false).
template <class T>
struct HostVectorMath;

#if PORTALAB_HOST_VECTOR_MATH
extern "C" {
#if defined(__AVX512F__)
__m512d _ZGVeN8v_sin(__m512d);
__m512d _ZGVeN8v_cos(__m512d);
__m512d _ZGVeN8v_exp(__m512d);
__m512 _ZGVeN16v_sinf(__m512);
__m512 _ZGVeN16v_cosf(__m512);
__m512 _ZGVeN16v_expf(__m512);
#else
__m256d _ZGVdN4v_sin(__m256d);
__m256d _ZGVdN4v_cos(__m256d);
__m256d _ZGVdN4v_exp(__m256d);
__m256 _ZGVdN8v_sinf(__m256);
__m256 _ZGVdN8v_cosf(__m256);
__m256 _ZGVdN8v_expf(__m256);
#endif
}

#if defined(__AVX512F__)
template <>
struct HostVectorMath<double> {
  using V = __m512d;
  static constexpr int width = 8;
  static V set(double a) { return _mm512_set1_pd(a); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V div(V a, V b) { return _mm512_div_pd(a, b); }
  static V sqrt(V a) { return _mm512_sqrt_pd(a); }
  static V sin(V a) { return _ZGVeN8v_sin(a); }
  static V cos(V a) { return _ZGVeN8v_cos(a); }
  static V exp(V a) { return _ZGVeN8v_exp(a); }
};
template <>
struct HostVectorMath<float> {
  using V = __m512;
  static constexpr int width = 16;
  static V set(float a) { return _mm512_set1_ps(a); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  static V sin(V a) { return _ZGVeN16v_sinf(a); }
  static V cos(V a) { return _ZGVeN16v_cosf(a); }
  static V exp(V a) { return _ZGVeN16v_expf(a); }
};
#else
template <>
struct HostVectorMath<double> {
  using V = __m256d;
  static constexpr int width = 4;
  static V set(double a) { return _mm256_set1_pd(a); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V div(V a, V b) { return _mm256_div_pd(a, b); }
  static V sqrt(V a) { return _mm256_sqrt_pd(a); }
  static V sin(V a) { return _ZGVdN4v_sin(a); }
  static V cos(V a) { return _ZGVdN4v_cos(a); }
  static V exp(V a) { return _ZGVdN4v_exp(a); }
};
template <>
struct HostVectorMath<float> {
  using V = __m256;
  static constexpr int width = 8;
  static V set(float a) { return _mm256_set1_ps(a); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  static V sin(V a) { return _ZGVdN8v_sinf(a); }
  static V cos(V a) { return _ZGVdN8v_cosf(a); }
  static V exp(V a) { return _ZGVdN8v_expf(a); }
};
#endif
#endif

template <class T>
inline constexpr bool host_vector_math = requires {
  HostVectorMath<T>::width;
};

// o[i] = f(x[i]) for i < m, f one function of HostVectorMath: whole vectors
// where the build has vector math, the rest (or all) one element at a time.
// Not float sines and cosines: libmvec's take a slow path for arguments of
// thousands (the array tour's arange), slower than libm there; doubles gain.
enum class Fn { sin, cos, exp, sqrt };
template <Fn F, class T>
void host_apply(T* o, const T* x, std::int64_t m) {
  std::int64_t i = 0;
  constexpr bool libm_only = std::is_same_v<T, float> && (F == Fn::sin || F == Fn::cos);
  if constexpr (host_vector_math<T> && !libm_only) {
    using M = HostVectorMath<T>;
    for (; i + M::width <= m; i += M::width) {
      const auto v = M::load(x + i);
      if constexpr (F == Fn::sin) M::store(o + i, M::sin(v));
      if constexpr (F == Fn::cos) M::store(o + i, M::cos(v));
      if constexpr (F == Fn::exp) M::store(o + i, M::exp(v));
      if constexpr (F == Fn::sqrt) M::store(o + i, M::sqrt(v));
    }
  }
  for (; i < m; ++i) {
    if constexpr (F == Fn::sin) o[i] = std::sin(x[i]);
    if constexpr (F == Fn::cos) o[i] = std::cos(x[i]);
    if constexpr (F == Fn::exp) o[i] = std::exp(x[i]);
    if constexpr (F == Fn::sqrt) o[i] = std::sqrt(x[i]);
  }
}

}  // namespace portalab::kernels
