// Which kernels the host BLAS chose at run time, read from the library that
// the process linked (OpenBLAS, MKL or BLIS, looked up with dlsym), and
// whether they are narrower than the CPU's vectors: Debian's OpenBLAS 0.3.21
// runs its Prescott (SSE3) kernels on a virtual CPU it does not recognise,
// at a tenth of the CPU's gemm peak, and says nothing.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace portalab {

struct HostBlasKernels {
  std::string library;       // "OpenBLAS 0.3.21", "MKL 2024.0", "BLIS 0.9.0"; empty: none known
  std::string config;        // the library's own description of its build, where it gives one
  std::string core;          // the kernels it chose: "Haswell", "SkylakeX", "zen3"; empty: unknown
  int core_vector_bits = 0;  // the widest vectors those kernels use; 0: unknown
  int cpu_vector_bits = 0;   // the widest vectors this CPU runs; 0: unknown
  // Non-empty when the kernels are narrower than the CPU's vectors: what it
  // costs and what to set (OPENBLAS_CORETYPE).
  std::string warning;

  // "OpenBLAS 0.3.21 (Haswell kernels)", or the library alone.
  std::string describe() const;
};

// Read once; the library's choice does not change during a run.
const HostBlasKernels& host_blas_kernels();

// The vector width of OpenBLAS' kernels for a core name (its
// openblas_get_corename()), 0 for names it does not know. Exposed for tests.
int openblas_core_vector_bits(const std::string& core);

// The warning for a library's kernels narrower than the CPU's, empty when they
// are not; openblas_coretype: the variable's value, if set.
std::string narrow_kernels_warning(const HostBlasKernels& k, const char* openblas_coretype);

nlohmann::json to_json(const HostBlasKernels& k);

}  // namespace portalab
