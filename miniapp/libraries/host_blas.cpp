#include "libraries/host_blas.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <string_view>

namespace portalab {

namespace {

template <class F>
F symbol(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

int cpu_vector_bits() {
  // A HIP or CUDA build compiles this file for the GPU too, which has no
  // such builtins (and keeps the host's __x86_64__ defined).
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__HIP_DEVICE_COMPILE__) && \
    !defined(__CUDA_ARCH__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 512;
  if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx")) return 256;
  return 128;
#else
  return 0;  // other architectures: no rule here
#endif
}

// MKL's MKL_Get_Version fills this (mkl_types.h).
struct MklVersion {
  int major, minor, update;
  char *product_status, *build, *processor, *platform;
};

HostBlasKernels read_host_blas() {
  HostBlasKernels k;
  k.cpu_vector_bits = cpu_vector_bits();
  if (auto corename = symbol<char* (*)()>("openblas_get_corename")) {
    k.core = corename();
    k.core_vector_bits = openblas_core_vector_bits(k.core);
    if (auto config = symbol<char* (*)()>("openblas_get_config")) k.config = config();
    // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ...": the first two words.
    const auto second = k.config.find(' ', k.config.find(' ') + 1);
    k.library = k.config.rfind("OpenBLAS", 0) == 0 ? k.config.substr(0, second) : "OpenBLAS";
  } else if (auto version = symbol<void (*)(MklVersion*)>("MKL_Get_Version")) {
    MklVersion v{};
    version(&v);
    k.library = fmt::format("MKL {}.{}.{}", v.major, v.minor, v.update);
    if (v.processor) k.core = v.processor;
  } else if (auto info = symbol<const char* (*)()>("bli_info_get_version_str")) {
    k.library = fmt::format("BLIS {}", info());
    auto arch_id = symbol<int (*)()>("bli_arch_query_id");
    auto arch_name = symbol<const char* (*)(int)>("bli_arch_string");
    if (arch_id && arch_name) k.core = arch_name(arch_id());
    // BLIS' generic configuration is its portable C reference.
    if (k.core == "generic") k.core_vector_bits = 128;
  }
  k.warning = narrow_kernels_warning(k, std::getenv("OPENBLAS_CORETYPE"));
  return k;
}

}  // namespace

int openblas_core_vector_bits(const std::string& core) {
  const std::string c = lower(core);
  for (std::string_view name : {"skylakex", "cooperlake", "sapphirerapids"})
    if (c == name) return 512;
  for (std::string_view name :
       {"haswell", "zen", "sandybridge", "bulldozer", "piledriver", "steamroller", "excavator"})
    if (c == name) return 256;
  for (std::string_view name : {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
                                "barcelona", "opteron", "opteron_sse3", "nano", "bobcat", "katmai",
                                "coppermine", "northwood", "banias", "athlon", "generic"})
    if (c == name) return 128;
  return 0;
}

std::string narrow_kernels_warning(const HostBlasKernels& k, const char* openblas_coretype) {
  if (k.core_vector_bits == 0 || k.cpu_vector_bits <= k.core_vector_bits) return {};
  const bool openblas = k.library.rfind("OpenBLAS", 0) == 0;
  std::string what =
      fmt::format("{} runs its {} kernels ({}-bit vectors) on a CPU with {}-bit vectors", k.library,
                  k.core, k.core_vector_bits, k.cpu_vector_bits);
  if (k.core_vector_bits == 128)
    what +=
        ": a generic fallback (it did not recognise this CPU; a virtual CPU often hides "
        "its model), several times below the CPU's gemm peak. Host BLAS and LAPACK rows and "
        "the host gemm limit measure that fallback";
  else
    what += ": host BLAS and LAPACK rows and the host gemm limit may be below the CPU's peak";
  if (!openblas) return what + ".";
  if (openblas_coretype && *openblas_coretype)
    return what + fmt::format(" (OPENBLAS_CORETYPE={} is set).", openblas_coretype);
  return what + fmt::format(". Set OPENBLAS_CORETYPE={} and compare with `portalab calibrate`.",
                            k.cpu_vector_bits == 512 ? "SkylakeX" : "Haswell");
}

std::string HostBlasKernels::describe() const {
  if (library.empty()) return "unknown";
  return core.empty() ? library : fmt::format("{} ({} kernels)", library, core);
}

const HostBlasKernels& host_blas_kernels() {
  static const HostBlasKernels k = read_host_blas();
  return k;
}

nlohmann::json to_json(const HostBlasKernels& k) {
  return {{"library", k.library},
          {"config", k.config},
          {"core", k.core},
          {"core_vector_bits", k.core_vector_bits},
          {"cpu_vector_bits", k.cpu_vector_bits},
          {"warning", k.warning}};
}

}  // namespace portalab
