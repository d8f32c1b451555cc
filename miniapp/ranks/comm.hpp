// The ranks of a run: one process per GPU, started by mpirun or srun, or one
// process alone. Everything the framework and the experiments ask of MPI goes
// through here, so that nothing else includes mpi.h and a build without MPI
// is the same program with a world of one rank.
//
// MPI is started only when a launcher started the process (mpirun, srun and
// their environment variables) or PORTALAB_MPI=1 asks for it; alone, the
// binary runs as one rank without touching MPI (a login node, a test).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace portalab {

// Element types a collective moves.
enum class Datatype { byte, int32, int64, float32, float64 };

template <class T>
constexpr Datatype datatype_of() {
  if constexpr (sizeof(T) == 1)
    return Datatype::byte;
  else if constexpr (std::is_same_v<T, float>)
    return Datatype::float32;
  else if constexpr (std::is_same_v<T, double>)
    return Datatype::float64;
  else if constexpr (sizeof(T) == 4)
    return Datatype::int32;
  else
    return Datatype::int64;
}

// What every rank of a gate brought: whether all could go on, the signal
// any of them received (0: none), and whether any wants another step.
struct GateState {
  bool all_ok = true;
  int signal = 0;
  int first_failed = -1;  // the lowest rank that could not go on
  bool any_more = true;
};

class Comm;
Comm& init_world(int& argc, char**& argv);

// A group of ranks: the world, or its first k ranks for an entry that runs on
// k of them (Entry::ranks). A rank outside the group holds a Comm whose
// member() is false and whose collectives must not be called.
class Comm {
 public:
  Comm();  // one rank, no MPI
  ~Comm();
  Comm(Comm&&) noexcept;
  Comm& operator=(Comm&&) noexcept;

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  bool member() const { return m_rank >= 0; }
  bool uses_mpi() const;

  // ---- Lockstep (the world's) ----
  // Every rank's state in, the group's out: the barrier before each
  // repetition, which also carries failures and signals so that every rank
  // leaves an entry at the same point. `more`: this rank wants another step
  // (repetitions until the median is steady end where no rank wants one).
  GateState gate(bool ok, int signal, bool more = true) const;
  // rank 0 gets every rank's text, in rank order; the others get {}.
  std::vector<std::string> gather(const std::string& mine) const;
  // rank 0's text, on every rank.
  std::string broadcast(const std::string& text) const;
  double max(double value) const;
  void barrier() const;

  // ---- What experiments move (group's members only) ----
  // recv = the sum over the group of every rank's send (send == recv: in place).
  void allreduce_sum(const void* send, void* recv, std::size_t count, Datatype type) const;
  // Sends `count` elements to `peer` and receives as many from it at once.
  void sendrecv(const void* send, void* recv, std::size_t count, Datatype type, int peer) const;
  void send(const void* data, std::size_t count, Datatype type, int peer) const;
  void recv(void* data, std::size_t count, Datatype type, int peer) const;

  // ---- Start-up (startup.hpp): messages that wait no longer than a deadline ----
  using Deadline = std::chrono::steady_clock::time_point;
  static constexpr int any_rank = -1;
  // Sends `text` to `peer` under `tag`; false when it was not taken by the
  // deadline (the send stays pending: the caller ends the job).
  bool send_by(const std::string& text, int peer, int tag, Deadline deadline) const;
  // A message under `tag` from `peer` (any_rank: whichever comes first), and
  // the rank that sent it; false when none came by the deadline.
  bool receive_by(int peer, int tag, Deadline deadline, int& from, std::string& text) const;

  // The group of the first k ranks (k <= size()), made once and kept.
  const Comm& first(int k) const;
  // The MPI_Comm, as an opaque handle, for libraries bootstrapped over MPI
  // (NCCL); nullptr without MPI.
  const void* native() const;

  struct Impl;

 private:
  friend Comm& init_world(int& argc, char**& argv);
  int m_rank = 0, m_size = 1;
  std::unique_ptr<Impl> m_impl;
  mutable std::vector<std::unique_ptr<Comm>> m_firsts;  // first(k), index k
};

// Starts MPI when a launcher started this process (see above); safe to call
// once, before Kokkos. Returns the world. Where MPI_Init does not return
// within the start-up timeout (startup.hpp: a peer never called it), says
// so and ends this process, exit status 3, which ends the job.
Comm& init_world(int& argc, char**& argv);
// The world: one rank until init_world started MPI.
const Comm& world();
// Ends MPI (after Kokkos is finalised); nothing without it.
void finalize_world();
// Ends every rank at once with `code`: for an error one rank cannot share at
// a gate (it would leave the others waiting in a collective).
[[noreturn]] void abort_world(int code);

// Where this rank runs: host, rank, the rank among those of its node, the
// CPUs it may run on. For provenance.
struct RankPlace {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::string host;
  std::string cpus;  // "0-7,16-23": its share of the node (placement.hpp), else its affinity
  bool mpi = false;
  std::string mpi_library;  // "Open MPI v4.1.4, ..." where known
  bool cuda_aware = false;  // MPI can read and write device memory
};
RankPlace rank_place();

// Whether the MPI library moves device (CUDA) buffers itself: Open MPI's
// MPIX_Query_cuda_support where it has it; PORTALAB_MPI_CUDA_AWARE=1|0
// overrides for an MPI that cannot be asked.
bool mpi_cuda_aware();

// "cpus 0-3,8" from a list of CPU numbers.
std::string cpu_list_text(const std::vector<int>& cpus);

}  // namespace portalab
