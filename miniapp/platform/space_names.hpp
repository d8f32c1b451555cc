#pragma once

// What a space's name says without Kokkos (the deck layer has none), and
// the compiled spaces by name with what start-up asks of them (threads,
// devices): Kokkos-free, so that files that name spaces, and no more,
// compile with the host compiler in every build (CMakeLists.txt,
// portalab_framework). platform/spaces.hpp has the spaces as types;
// platform/spaces.cpp defines what is declared here.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// Kokkos' host execution spaces by name (Serial, OpenMP, Threads, HPX),
// compiled or not: a deck or a result file may name a space this build lacks.
inline bool is_host_space_name(std::string_view space) {
  return space == "Serial" || space == "OpenMP" || space == "Threads" || space == "HPX";
}

// Names of the compiled spaces, as Kokkos spells them ("Serial", "Cuda").
std::vector<std::string> enabled_space_names();

// Kokkos' Threads workers run on the CPUs of the thread that started them.
// An OpenMP runtime started with OMP_PROC_BIND set (OpenBLAS' in a Threads
// build) binds the main thread to one CPU first, and all the Threads workers
// then share it, at a fraction of the machine's bandwidth.
// The warning for `threads` workers on `cpus` CPUs (empty when they fit);
// proc_bind: OMP_PROC_BIND, null when unset.
std::string threads_affinity_warning(int threads, int cpus, const char* proc_bind);
// The same for this process once Kokkos has started (empty without Threads).
std::string threads_affinity_warning();

// Kokkos starts Threads on one thread unless told (KOKKOS_NUM_THREADS,
// --kokkos-num-threads): a run of Threads beside OpenMP's machine-wide team
// then compares one core with all of them. The warning for Threads measured
// on one thread of `cpus` CPUs that nobody chose (`chosen`: a count was
// given); empty otherwise.
std::string threads_default_warning(int threads, int cpus, bool chosen);
// The same for this process once Kokkos has started, for a run or
// calibration of `spaces` (empty: every compiled space) given `kokkos_args`.
std::string threads_default_warning(const std::vector<std::string>& spaces,
                                    const std::vector<std::string>& kokkos_args);

// Idle Kokkos Threads workers never sleep: each yields in a loop
// (Kokkos_Threads_Instance.cpp, wait_yield), and slow a Serial copy beside
// them (docs/performance.md, "The CPU against Numba and BabelStream"). Where
// Threads is compiled and
// `spaces` (what a run or calibration measures; empty: every compiled one)
// has Serial and not Threads: the option that starts Threads on one thread,
// "--kokkos-num-threads=1" (over KOKKOS_NUM_THREADS, which a job script sets
// for all its runs); empty where `kokkos_args` give a count themselves.
std::string serial_alone_threads_option(const std::vector<std::string>& spaces,
                                        const std::vector<std::string>& kokkos_args);

// Ranks of one node share its cores, and each rank's OpenMP or Threads
// starts, unless told, on every CPU it may run on: four ranks under mpirun on
// a 64-core node each started 64 OpenMP threads. Where `local_ranks` > 1 and
// nothing gives the count (OMP_NUM_THREADS, KOKKOS_NUM_THREADS through
// `getenv`, --kokkos-num-threads or --kokkos-threads in `kokkos_args`): the
// option that gives each rank its share, "--kokkos-num-threads=N", N the
// node's CPUs over its ranks, at most the CPUs the rank may run on, at least
// one; empty otherwise, and in a build with neither OpenMP nor Threads.
std::string threads_per_rank_option(int local_ranks, int node_cpus, int affinity_cpus,
                                    const std::vector<std::string>& kokkos_args,
                                    const std::function<const char*(const char*)>& getenv);
// The same for this process: the node's online CPUs, this process's
// affinity, its environment.
std::string threads_per_rank_option(int local_ranks, const std::vector<std::string>& kokkos_args);
// Serial and Threads in one run, Threads on several threads: the warning
// that Serial rows run beside its spinning workers (empty otherwise).
std::string serial_beside_threads_warning(const std::vector<std::string>& spaces);

// Kokkos' own spelling of a space given in any case, or "" if not compiled.
std::string canonical_space_name(std::string_view name);

// Devices the runtime sees, asked before Kokkos starts (KOKKOS_VISIBLE_DEVICES
// and --kokkos-device-id choose among them); -1 where not known (no Cuda).
int visible_device_count();

// Why this build cannot start Kokkos here, asked before it starts: a Cuda
// build where the runtime sees no GPU (a login node, a Slurm job without
// --gpus, CUDA_VISIBLE_DEVICES empty), which Kokkos would end with its own
// abort. "" where it can.
std::string device_problem();

// The PCI bus id of the GPU Kokkos will give this rank, asked before Kokkos
// starts, for the rank's share of the node's CPUs (ranks/placement.hpp):
// Kokkos' default, the launcher's node-local rank modulo the devices seen.
// "" where not known: no Cuda, or a device chosen by KOKKOS_DEVICE_ID,
// KOKKOS_VISIBLE_DEVICES or --kokkos-device-id (`chosen`).
std::string device_bus_id_before_kokkos(bool chosen);

// True for a space whose memory is the host's: a compiled space by its memory
// space, any other by is_host_space_name (rows from another build).
bool is_host_space(std::string_view name);

// Kokkos' concurrency() of the space's default instance (Serial 1, OpenMP
// its threads), or 0 if not compiled. Kokkos must be initialised.
int space_concurrency(std::string_view name);

}  // namespace portalab
