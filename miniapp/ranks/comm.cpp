#include "ranks/comm.hpp"

#include "ranks/placement.hpp"

#include "support/environment.hpp"
#include "support/console.hpp"
#include "ranks/startup.hpp"
#include "ranks/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <sched.h>
#include <unistd.h>

#if defined(PORTALAB_HAVE_MPI)
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's MPIX_Query_cuda_support
#endif
#endif

namespace portalab {

#if defined(PORTALAB_HAVE_MPI)
struct Comm::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  bool owned = false;  // a split of the world, freed with it
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owned && comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
  }
};
#else
struct Comm::Impl {};
#endif

namespace {

Comm& world_storage() {
  static Comm w;
  return w;
}

#if defined(PORTALAB_HAVE_MPI)
bool mpi_started = false;

// Environment a launcher sets in the processes it starts: Open MPI's mpirun,
// PMIx (srun --mpi=pmix, prterun), PMI-1/2 (MPICH's Hydra, srun --mpi=pmi2).
bool launched_by_mpi_launcher() {
  // Read before anything can say a word: a value but 0 or 1 starts MPI here,
  // and is refused once the ranks agree (support/environment.hpp).
  if (const char* forced = std::getenv("PORTALAB_MPI")) return std::string_view(forced) != "0";
  for (const char* v :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

// "rank 2 of 4" as the launcher numbers this process, before MPI can say.
std::string launcher_rank() {
  auto first = [](std::initializer_list<const char*> names) -> std::string {
    for (const char* n : names)
      if (const char* v = std::getenv(n)) return v;
    return "?";
  };
  return fmt::format("rank {} of {}",
                     first({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}),
                     first({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}));
}

MPI_Datatype mpi_type(Datatype t) {
  switch (t) {
    case Datatype::byte: return MPI_BYTE;
    case Datatype::int32: return MPI_INT32_T;
    case Datatype::int64: return MPI_INT64_T;
    case Datatype::float32: return MPI_FLOAT;
    case Datatype::float64: return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

int mpi_count(std::size_t count) {
  // MPI-3 counts are int: a larger message is refused, not truncated.
  if (count > static_cast<std::size_t>(INT_MAX))
    throw std::length_error(
        fmt::format("{} elements in one MPI message: more than INT_MAX", count));
  return static_cast<int>(count);
}

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(fmt::format("{}: {}", what, std::string_view(text, length)));
}
#endif

std::size_t type_size(Datatype t) {
  switch (t) {
    case Datatype::byte: return 1;
    case Datatype::int32:
    case Datatype::float32: return 4;
    case Datatype::int64:
    case Datatype::float64: return 8;
  }
  return 1;
}

}  // namespace

Comm::Comm() = default;
Comm::~Comm() = default;
Comm::Comm(Comm&&) noexcept = default;
Comm& Comm::operator=(Comm&&) noexcept = default;

bool Comm::uses_mpi() const {
#if defined(PORTALAB_HAVE_MPI)
  return m_impl && m_impl->comm != MPI_COMM_NULL;
#else
  return false;
#endif
}

GateState Comm::gate(bool ok, int signal, bool more) const {
  GateState s{ok, signal, ok ? -1 : m_rank, more};
#if defined(PORTALAB_HAVE_MPI)
  if (!uses_mpi()) return s;
  // Two allreduces: MAX of the signals and of `more`, MIN of the first
  // failed rank (size() standing for none), so every rank learns the same.
  int in[3] = {signal, more ? 1 : 0, ok ? m_size : m_rank};
  int out[2] = {0, 0}, failed = 0;
  check(MPI_Allreduce(&in[0], out, 2, MPI_INT, MPI_MAX, m_impl->comm), "MPI_Allreduce (gate)");
  check(MPI_Allreduce(&in[2], &failed, 1, MPI_INT, MPI_MIN, m_impl->comm), "MPI_Allreduce (gate)");
  s.signal = out[0];
  s.any_more = out[1] != 0;
  s.all_ok = failed == m_size;
  s.first_failed = s.all_ok ? -1 : failed;
#endif
  return s;
}

std::vector<std::string> Comm::gather(const std::string& mine) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    int length = mpi_count(mine.size());
    std::vector<int> lengths(m_rank == 0 ? m_size : 0);
    check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, m_impl->comm),
          "MPI_Gather");
    std::vector<int> offsets(lengths.size());
    std::size_t total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = mpi_count(total);
      total += static_cast<std::size_t>(lengths[i]);
    }
    std::string all(total, '\0');
    check(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                      MPI_CHAR, 0, m_impl->comm),
          "MPI_Gatherv");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lengths.size(); ++i)
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
    return out;
  }
#endif
  return {mine};
}

std::string Comm::broadcast(const std::string& text) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    int length = m_rank == 0 ? mpi_count(text.size()) : 0;
    check(MPI_Bcast(&length, 1, MPI_INT, 0, m_impl->comm), "MPI_Bcast");
    std::string out = m_rank == 0 ? text : std::string(static_cast<std::size_t>(length), '\0');
    check(MPI_Bcast(out.data(), length, MPI_CHAR, 0, m_impl->comm), "MPI_Bcast");
    return out;
  }
#endif
  return text;
}

double Comm::max(double value) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    double out = value;
    check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, m_impl->comm), "MPI_Allreduce");
    return out;
  }
#endif
  return value;
}

void Comm::barrier() const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) check(MPI_Barrier(m_impl->comm), "MPI_Barrier");
#endif
}

void Comm::allreduce_sum(const void* send, void* recv, std::size_t count, Datatype type) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    check(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, mpi_count(count), mpi_type(type),
                        MPI_SUM, m_impl->comm),
          "MPI_Allreduce");
    return;
  }
#endif
  // One rank: the sum is its own values.
  if (send != recv) std::memcpy(recv, send, count * type_size(type));
}

void Comm::sendrecv(const void* send, void* recv, std::size_t count, Datatype type,
                    int peer) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    check(MPI_Sendrecv(send, mpi_count(count), mpi_type(type), peer, 0, recv, mpi_count(count),
                       mpi_type(type), peer, 0, m_impl->comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
    return;
  }
#endif
  if (peer != m_rank) throw std::logic_error(fmt::format("sendrecv: no rank {}", peer));
  std::memcpy(recv, send, count * type_size(type));
}

void Comm::send(const void* data, std::size_t count, Datatype type, int peer) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    check(MPI_Send(data, mpi_count(count), mpi_type(type), peer, 0, m_impl->comm), "MPI_Send");
    return;
  }
#endif
  (void)data, (void)count, (void)type;
  throw std::logic_error(fmt::format("send: no rank {} without MPI", peer));
}

void Comm::recv(void* data, std::size_t count, Datatype type, int peer) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    check(MPI_Recv(data, mpi_count(count), mpi_type(type), peer, 0, m_impl->comm,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    return;
  }
#endif
  (void)data, (void)count, (void)type;
  throw std::logic_error(fmt::format("recv: no rank {} without MPI", peer));
}

#if defined(PORTALAB_HAVE_MPI)
// Polling for a start-up message: quick at first, then at most every 10 ms
// (a setting, not measured)
// (ranks oversubscribing cores must leave them to the ranks still parsing).
constexpr std::chrono::microseconds first_pause{100}, longest_pause{10000};
#endif

bool Comm::send_by(const std::string& text, int peer, int tag, Deadline deadline) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    MPI_Request request;
    check(MPI_Isend(text.data(), mpi_count(text.size()), MPI_CHAR, peer, tag, m_impl->comm,
                    &request),
          "MPI_Isend");
    for (auto pause = first_pause;; pause = std::min(2 * pause, longest_pause)) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(pause);
    }
  }
#endif
  (void)text, (void)tag, (void)deadline;
  throw std::logic_error(fmt::format("send_by: no rank {} without MPI", peer));
}

bool Comm::receive_by(int peer, int tag, Deadline deadline, int& from, std::string& text) const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) {
    // Probed, not received, until a message is there: a receive posted and
    // left pending at the deadline would outlive this call.
    for (auto pause = first_pause;; pause = std::min(2 * pause, longest_pause)) {
      int there = 0;
      MPI_Status status;
      const int source = peer == any_rank ? MPI_ANY_SOURCE : peer;
      check(MPI_Iprobe(source, tag, m_impl->comm, &there, &status), "MPI_Iprobe");
      if (there) {
        int length = 0;
        MPI_Get_count(&status, MPI_CHAR, &length);
        text.assign(static_cast<std::size_t>(length), '\0');
        from = status.MPI_SOURCE;
        check(MPI_Recv(text.data(), length, MPI_CHAR, from, tag, m_impl->comm, MPI_STATUS_IGNORE),
              "MPI_Recv");
        return true;
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(pause);
    }
  }
#endif
  (void)tag, (void)deadline, (void)from, (void)text;
  throw std::logic_error(fmt::format("receive_by: no rank {} without MPI", peer));
}

const Comm& Comm::first(int k) const {
  if (k < 1 || k > m_size)
    throw std::out_of_range(fmt::format("a group of {} ranks in a world of {}", k, m_size));
  // With MPI, a group of every rank is a communicator of its own too: the
  // experiments' traffic never matches the runner's gates, so a rank that
  // stops before an experiment's collective leaves its peers waiting (for
  // the watchdog) rather than pairing their messages with its gate's.
  if (k == m_size && !uses_mpi()) return *this;
  if (m_firsts.size() <= static_cast<std::size_t>(k)) m_firsts.resize(k + 1);
  auto& slot = m_firsts[k];
  if (!slot) {
    slot = std::make_unique<Comm>();
#if defined(PORTALAB_HAVE_MPI)
    // Collective over this group: every rank calls first(k) for the same k
    // at the same point (the runner does, at a gate).
    MPI_Comm sub = MPI_COMM_NULL;
    const bool in = m_rank < k;
    check(MPI_Comm_split(m_impl->comm, in ? 0 : MPI_UNDEFINED, m_rank, &sub), "MPI_Comm_split");
    if (in) {
      slot->m_impl = std::make_unique<Impl>();
      slot->m_impl->comm = sub;
      slot->m_impl->owned = true;
      MPI_Comm_rank(sub, &slot->m_rank);
      MPI_Comm_size(sub, &slot->m_size);
    } else {
      slot->m_rank = -1;
      slot->m_size = k;
    }
#endif
  }
  return *slot;
}

const void* Comm::native() const {
#if defined(PORTALAB_HAVE_MPI)
  if (uses_mpi()) return &m_impl->comm;
#endif
  return nullptr;
}

Comm& init_world(int& argc, char**& argv) {
  startup_began();  // the start-up timeout counts from here
  Comm& w = world_storage();
#if defined(PORTALAB_HAVE_MPI)
  if (!mpi_started && launched_by_mpi_launcher()) {
    int provided = 0;
    {
      // Open MPI's MPI_Init waits for every rank of the job: one that never
      // calls it (it exited first, or hangs) would hold this one for ever.
      double limit = default_startup_timeout();
      try {
        limit = startup_timeout_seconds();
      } catch (const std::exception&) {  // said at the agreement, if MPI starts
      }
      std::optional<Watchdog> guard;
      if (limit > 0)
        guard.emplace(limit, [](const std::string&, double s) {
          print_to(stderr,
                   "portalab: {}: MPI did not start within {} s: a rank of this job never "
                   "called MPI_Init (it exited, failed to start, or hangs before it: see its "
                   "output); ending this rank. PORTALAB_STARTUP_TIMEOUT_S sets the limit\n",
                   launcher_rank(), s);
          std::fflush(stderr);
          std::_Exit(3);  // the driver's exit code for the unexpected
        });
      // Only the main thread calls MPI (OpenMP threads never do).
      if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        throw std::runtime_error("MPI_Init_thread failed");
    }
    mpi_started = true;
    // Errors come back as codes (thrown as exceptions, shared at a gate)
    // rather than ending the job from inside the library.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    w.m_impl = std::make_unique<Comm::Impl>();
    w.m_impl->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(MPI_COMM_WORLD, &w.m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w.m_size);
  }
#else
  (void)argc, (void)argv;
#endif
  return w;
}

const Comm& world() { return world_storage(); }

void finalize_world() {
#if defined(PORTALAB_HAVE_MPI)
  if (!mpi_started) return;
  world_storage() = Comm();  // frees the groups split from it first
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
#endif
}

void abort_world(int code) {
#if defined(PORTALAB_HAVE_MPI)
  if (mpi_started) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return out;
}

bool mpi_cuda_aware() {
  if (const auto forced = env_switch("PORTALAB_MPI_CUDA_AWARE")) return *forced;
#if defined(PORTALAB_HAVE_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return mpi_started && MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

RankPlace rank_place() {
  RankPlace p;
  const Comm& w = world();
  p.rank = w.rank();
  p.size = w.size();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.cpus = process_cpus_text();  // its share where the agreement placed it
#if defined(PORTALAB_HAVE_MPI)
  p.mpi = mpi_started;
  if (mpi_started) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &p.local_rank);
    MPI_Comm_size(node, &p.local_size);
    MPI_Comm_free(&node);
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    p.mpi_library = std::string(version, static_cast<std::size_t>(length));
    if (const auto end = p.mpi_library.find_first_of(",\n"); end != std::string::npos)
      p.mpi_library.resize(end);
  }
#endif
  p.cuda_aware = mpi_cuda_aware();
  return p;
}

}  // namespace portalab
