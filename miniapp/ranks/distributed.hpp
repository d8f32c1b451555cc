// What the experiments between ranks share: why a path is unavailable in a
// space, and the instance's stream for NCCL to queue on.
#pragma once

#include "ranks/comm.hpp"
#include "ranks/nccl.hpp"
#include "platform/spaces.hpp"

#include <fmt/format.h>

#include <string>
#include <type_traits>

namespace portalab {

// The label of rank r's input, which seeds its values: a peer recomputes what
// r holds from it.
inline std::string rank_input_label(int rank) { return fmt::format("x.rank{}", rank); }

// MPI on the buffers where they are: a device space needs a CUDA-aware MPI.
template <class Space>
std::string device_buffers_unavailable() {
  if constexpr (is_host_space_v<Space>)
    return "a host space's buffers are host memory: mpi_host is this path";
  else if (!mpi_cuda_aware())
    return "the MPI library is not CUDA-aware (Open MPI: MPIX_Query_cuda_support; "
           "PORTALAB_MPI_CUDA_AWARE=1 where it cannot be asked)";
  return {};
}

template <class Space>
std::string nccl_path_unavailable() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) return nccl_unavailable();
#endif
  return "NCCL moves GPU memory: Cuda spaces only";
}

// The instance's stream (a cudaStream_t), for NCCL to queue on; else null.
template <class Space>
void* stream_of([[maybe_unused]] const Space& exec) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Space, Kokkos::Cuda>) return exec.cuda_stream();
#endif
  return nullptr;
}

}  // namespace portalab
