#include "ranks/nccl.hpp"

#include "ranks/placement.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#if defined(PORTALAB_HAVE_NCCL)
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#endif

namespace portalab {

#if defined(PORTALAB_HAVE_NCCL)
namespace {

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess)
    throw std::runtime_error(fmt::format("{}: {}", what, ncclGetErrorString(r)));
}

ncclDataType_t nccl_type(Datatype t) {
  switch (t) {
    case Datatype::byte: return ncclUint8;
    case Datatype::int32: return ncclInt32;
    case Datatype::int64: return ncclInt64;
    case Datatype::float32: return ncclFloat32;
    case Datatype::float64: return ncclFloat64;
  }
  return ncclUint8;
}

}  // namespace

std::string nccl_unavailable() { return {}; }

const Nccl& Nccl::of(const Comm& group) {
  static std::mutex lock;
  static std::map<const Comm*, std::unique_ptr<Nccl>> made;
  const std::lock_guard<std::mutex> guard(lock);
  auto& slot = made[&group];
  if (!slot) slot.reset(new Nccl(group));
  return *slot;
}

Nccl::Nccl(const Comm& group) {
  // The id from rank 0 of the group, over MPI (or made here alone).
  ncclUniqueId id;
  if (group.rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  if (const void* mpi = group.native())
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, *static_cast<const MPI_Comm*>(mpi));
  ncclComm_t comm = nullptr;
  // NCCL's threads take the CPUs of the thread that starts them, near the
  // GPU: the rank's whole share, not the one CPU its first thread may be
  // bound to.
  with_whole_share(
      [&] { check(ncclCommInitRank(&comm, group.size(), id, group.rank()), "ncclCommInitRank"); });
  m_comm = comm;
}

Nccl::~Nccl() {
  // At exit, after Kokkos (and perhaps the CUDA context) is gone: not freed.
}

void Nccl::allreduce_sum(const void* send, void* recv, std::size_t count, Datatype type,
                         void* stream) const {
  check(ncclAllReduce(send, recv, count, nccl_type(type), ncclSum, static_cast<ncclComm_t>(m_comm),
                      static_cast<cudaStream_t>(stream)),
        "ncclAllReduce");
}

void Nccl::sendrecv(const void* send, void* recv, std::size_t count, Datatype type, int peer,
                    void* stream) const {
  auto comm = static_cast<ncclComm_t>(m_comm);
  auto s = static_cast<cudaStream_t>(stream);
  check(ncclGroupStart(), "ncclGroupStart");
  if (send) check(ncclSend(send, count, nccl_type(type), peer, comm, s), "ncclSend");
  if (recv) check(ncclRecv(recv, count, nccl_type(type), peer, comm, s), "ncclRecv");
  check(ncclGroupEnd(), "ncclGroupEnd");
}

std::string Nccl::version() const {
  int v = 0;
  ncclGetVersion(&v);
  return fmt::format("NCCL {}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

#else

std::string nccl_unavailable() {
  return "portalab was built without NCCL (PORTALAB_NCCL_ROOT finds it; docs/several-gpus.md)";
}
const Nccl& Nccl::of(const Comm&) { throw std::logic_error(nccl_unavailable()); }
Nccl::Nccl(const Comm&) {}
Nccl::~Nccl() = default;
void Nccl::allreduce_sum(const void*, void*, std::size_t, Datatype, void*) const {}
void Nccl::sendrecv(const void*, void*, std::size_t, Datatype, int, void*) const {}
std::string Nccl::version() const { return {}; }

#endif

}  // namespace portalab
