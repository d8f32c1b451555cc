// NCCL between the GPUs of a run's ranks, where portalab was built with it
// (NCCL is not in every distribution: PORTALAB_HAVE_NCCL). One communicator
// per group of ranks, made over MPI the first time the group asks for it
// (collective: every member calls of() at the same step) and kept.
#pragma once

#include "ranks/comm.hpp"

#include <string>

namespace portalab {

// "" when NCCL can serve, else why not: for a variant's unavailable().
std::string nccl_unavailable();

class Nccl {
 public:
  // The group's communicator, made at the first call.
  static const Nccl& of(const Comm& group);
  ~Nccl();
  Nccl(const Nccl&) = delete;
  Nccl& operator=(const Nccl&) = delete;

  // Queued on `stream` (a cudaStream_t); send == recv: in place.
  void allreduce_sum(const void* send, void* recv, std::size_t count, Datatype type,
                     void* stream) const;
  // Both at once (grouped), either may be null for one way.
  void sendrecv(const void* send, void* recv, std::size_t count, Datatype type, int peer,
                void* stream) const;
  std::string version() const;

 private:
  explicit Nccl(const Comm& group);
  [[maybe_unused]] void* m_comm = nullptr;  // ncclComm_t (unused in a build without NCCL)
};

}  // namespace portalab
