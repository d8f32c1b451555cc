// What launching a kernel costs, measured three ways as Kokkos' own
// launch-latency benchmark does, with n launches of a one-iteration kernel
// per repetition (launch k writes out(k) = k + 1, so the check sees them all):
//   dispatch         n launches, timed without the fence that follows them
//   throughput       n launches, then one fence
//   completion       each launch followed by a fence
//   graph            the n launches as nodes of a Kokkos Graph, replayed
//   native_dispatch  n launches through the backend's own API, timed exactly
//                    as dispatch is: Cuda `<<<1, 1, 0, stream>>>` on the
//                    instance's stream, OpenMP `omp parallel for`, Serial a
//                    plain call; other backends have none here and use Kokkos'.
// Results give microseconds per launch (kernel time / n).
#include "experiment.hpp"
#include "kernels/launch.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace portalab {
namespace {

#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
__global__ void bare_write_index(std::int64_t* out, std::int64_t k) { out[k] = k + 1; }
#endif

// Kept out of line, as a launch would be, so the loop is not folded away.
[[gnu::noinline]] void host_write_index(std::int64_t* out, std::int64_t k) { out[k] = k + 1; }

// n launches of out(k) = k + 1 without Kokkos.
template <class Space>
void native_write_index(const Space& exec, std::int64_t* out, std::int64_t n) {
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
    for (std::int64_t k = 0; k < n; ++k) bare_write_index<<<1, 1, 0, exec.cuda_stream()>>>(out, k);
    return;
  }
#endif
#if defined(KOKKOS_ENABLE_OPENMP) && defined(_OPENMP)
  if constexpr (std::is_same_v<Space, Kokkos::OpenMP>) {
    const int threads = exec.concurrency();
    for (std::int64_t k = 0; k < n; ++k) {
#pragma omp parallel for num_threads(threads)
      for (std::int64_t i = k; i < k + 1; ++i) out[i] = i + 1;
    }
    return;
  }
#endif
  if constexpr (is_host_space_v<Space>) {
    for (std::int64_t k = 0; k < n; ++k) host_write_index(out, k);
  } else {
    const Kokkos::View<std::int64_t*, typename Space::memory_space, Kokkos::MemoryUnmanaged> v(out, n);
    for (std::int64_t k = 0; k < n; ++k) kernels::write_index(exec, v, k);
  }
}

template <class Space, class T>
class LaunchOverhead {
 public:
  LaunchOverhead(CaseContext<Space>& ctx, std::size_t n) : m_out(ctx, "out", Out{}, n) {}

  void run(const Space& exec, std::string_view variant) {
    using clock = std::chrono::steady_clock;
    const auto& out = m_out.device();
    const std::int64_t n = out.extent(0);
    m_self_timed.reset();
    if (variant == "dispatch" || variant == "native_dispatch") {
      const auto start = clock::now();
      if (variant == "dispatch")
        for (std::int64_t k = 0; k < n; ++k) kernels::write_index(exec, out, k);
      else
        native_write_index(exec, out.data(), n);
      m_self_timed = std::chrono::duration<double, std::milli>(clock::now() - start).count();
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDACC__)
      if constexpr (std::is_same_v<Space, Kokkos::Cuda>)
        if (const cudaError_t e = cudaPeekAtLastError(); e != cudaSuccess)
          throw std::runtime_error(std::string("bare CUDA launch failed: ") + cudaGetErrorName(e));
#endif
    } else if (variant == "throughput") {
      for (std::int64_t k = 0; k < n; ++k) kernels::write_index(exec, out, k);
    } else if (variant == "completion") {
      for (std::int64_t k = 0; k < n; ++k) {
        kernels::write_index(exec, out, k);
        exec.fence("portalab::launch_overhead::completion");
      }
    } else {
      // Built at the first call (the cold one), instantiated at its first submit.
      if (!m_graph) m_graph = kernels::write_index_graph(exec, out);
      m_graph->submit(exec);
    }
  }

  std::optional<double> self_timed_ms() const { return m_self_timed; }

  Check verify(std::string_view) const {
    return compare_elementwise(
        m_out.host().data(), static_cast<std::int64_t>(m_out.size()),
        [](std::int64_t k) { return static_cast<double>(k + 1); }, elementwise_tolerance<T>(1));
  }

  static Work work(std::size_t n, std::string_view) {
    return {static_cast<double>(sizeof(T) * n), 0.0, static_cast<double>(n)};
  }
  static std::size_t footprint(std::size_t n) { return sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_out;
  std::optional<Kokkos::Experimental::Graph<Space>> m_graph;
  std::optional<double> m_self_timed;
};

[[maybe_unused]] const bool registered = register_experiment<LaunchOverhead, std::int64_t>({
    .name = "launch_overhead",
    .summary = "microseconds per kernel launch: dispatch, throughput, completion, graph, native",
    .variants = {"dispatch", "throughput", "completion", "graph", "native_dispatch"},
    .default_sizes = {1000},
    .default_dtypes = {"int64"},
});

}  // namespace
}  // namespace portalab
