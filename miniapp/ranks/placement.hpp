// Where a run's host threads go (docs/several-gpus.md#placement): each rank
// its own share of its node's CPUs, on the NUMA node of its GPU where the
// node says which, and its host threads placed inside that share.
//
//   before OpenMP  the executable's .preinit_array (drivers/portalab.cpp)
//                  records the CPUs the launcher gave the process and the
//                  user's OMP_PROC_BIND/OMP_PLACES before an OpenMP runtime
//                  reads them: GCC's binds the first thread to the first place
//                  as it loads, which put every rank of a node on CPU 0.
//                  Under a launcher of several ranks it holds those two
//                  variables back, to apply them inside the rank's share.
//   agreement      the ranks of a node exchange those CPUs, and whether the
//                  user binds; rank 0 splits the node (node_shares); each
//                  process, every thread it has, is confined to its share.
//                  Ranks pinned onto the same CPUs by the user's settings:
//                  exit 2 on every rank, naming them and the cure.
//   after Kokkos   each OpenMP thread pinned to its place in the share
//                  (thread_places), by the user's policy or portalab's;
//                  each thread's CPUs recorded (provenance.ranks[]).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

class Comm;

using CpuSet = std::vector<int>;  // CPU numbers, ascending

// "0-3,8" as CPU numbers; {} for text that is no such list.
CpuSet parse_cpu_list(std::string_view text);

// What the process was given before an OpenMP runtime started.
struct GivenPlacement {
  CpuSet cpus;                                   // sched_getaffinity as the launcher left it
  std::optional<std::string> proc_bind, places;  // OMP_PROC_BIND, OMP_PLACES as given
  // OMP_PLACES names CPUs ("{0},{1}"), or GOMP_CPU_AFFINITY does: the
  // runtime places the threads where the user said, and portalab checks.
  bool explicit_cpus = false;
  // OMP_PROC_BIND/OMP_PLACES held back from the runtime, to be applied in
  // the rank's share (several ranks; abstract places).
  bool held = false;
  // The user asked for bound threads: OMP_PROC_BIND not false, or OMP_PLACES
  // alone (an OpenMP runtime then binds).
  bool binds() const;
  // --kokkos-device-id or --kokkos-map-device-id-by on the command line: the
  // GPU is not the one of the node-local rank.
  bool device_chosen = false;
};

// The executable's .preinit_array calls it with the environment, before any
// library's constructor (GCC's OpenMP reads its variables in one).
void before_openmp(char** argv, char** envp);
// As recorded, or (a program without the hook) read now.
const GivenPlacement& given_placement();

// One node-local rank's word at the agreement.
struct RankCpus {
  int rank = 0;
  CpuSet cpus;      // what the launcher gave it
  CpuSet gpu_cpus;  // the CPUs near its GPU; {} unknown
  bool binds = false;
};

struct NodeShares {
  std::vector<CpuSet> shares;  // one a rank, in the order given
  std::string error;           // the user's settings pin ranks onto the same CPUs
  std::string shared;          // more ranks than CPUs: they share (said, not an error)
};
// Ranks with the same CPUs split them (whole cores, by `core_of`; on the
// CPUs near each one's GPU where every rank's GPU says and there are enough);
// ranks given CPUs of their own keep them. Ranks given CPUs that overlap but
// differ, or too few CPUs while the user binds threads: an error.
NodeShares node_shares(const std::vector<RankCpus>& ranks, const std::function<int(int)>& core_of);

// The CPUs each of `threads` threads goes on, in thread order, by an
// OMP_PROC_BIND policy (its first value: spread, close, master, primary,
// true; false: each thread the whole share) over OMP_PLACES' abstract
// places (threads, cores; others: the share as one place), within `share`.
std::vector<CpuSet> thread_places(const CpuSet& share, int threads, std::string_view bind,
                                  std::string_view places, const std::function<int(int)>& core_of);

// sysfs under `sys_root` ("/sys" but in tests): the CPUs near a PCI device
// ("00000000:3B:00.0" as CUDA writes it, or sysfs' "0000:3b:00.0"), its NUMA
// node (-1 where the node does not say), and a CPU's core (its first sibling).
CpuSet pci_local_cpus(const std::string& bus_id, const std::string& sys_root = "/sys");
int pci_numa_node(const std::string& bus_id, const std::string& sys_root = "/sys");
int cpu_core(int cpu, const std::string& sys_root = "/sys");

// The agreement's step, every rank once before Kokkos: the node's ranks
// exchange their CPUs and each takes its share. 0, or exit 2 with the
// reason said (by rank 0) on every rank.
int place_ranks(const Comm& world, const std::string& gpu_bus_id);

// After Kokkos started: the OpenMP threads pinned in the share where
// portalab places them, each thread's CPUs recorded. The one line saying
// what was chosen ("" where nothing was), for rank 0 to print.
std::string place_host_threads();

// Every rank after place_host_threads: exit 2 on every rank (the reason
// said by rank 0) where threads of two ranks of a node were placed on the
// same CPUs by the user's own OpenMP settings; else 0.
int check_thread_overlap(const Comm& world);

// For provenance.ranks[]: the CPUs the process may use (its share), each
// host thread's CPUs ("3", or "0-7" for one not bound), how they were chosen.
std::string process_cpus_text();
std::vector<std::string> thread_cpus_text();
std::string placement_chosen_by();

// Runs `f` with the calling thread allowed its whole share (the threads it
// starts, NCCL's, inherit it), then restores its own CPU.
void with_whole_share(const std::function<void()>& f);

}  // namespace portalab
