// Sines, cosines and exponentials of whole vectors on a host, from glibc's
// vector math library (libmvec), for the host blocks of kernels that call
// them (PolarDistance, GaussianPdf). GCC calls libmvec only under -ffast-math, so a host loop
// over std::sin and std::cos makes one scalar libm call per element: on the
// 2-core Xeon VM polar_distance's loop of 1e7 doubles took 350 ms so, 69 ms
// through libmvec (one thread), within 1e-15 of the scalar results (libmvec
// is within 4 ulp).
#pragma once

#include <cstdint>

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
inline constexpr bool host_vector_math = requires { HostVectorMath<T>::width; };

}  // namespace portalab::kernels
