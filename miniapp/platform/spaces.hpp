// The execution spaces compiled into Kokkos, as a type list, and what the
// framework needs to know about each: its name, whether its memory is the
// host's, and which host memory can be pinned for fast copies to it.
#pragma once

#include <Kokkos_Core.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <type_traits>
#include <vector>

namespace portalab {

template <class T>
struct TypeTag {
  using type = T;
};

namespace detail {
template <class... Lists>
using concat = decltype(std::tuple_cat(std::declval<Lists>()...));
}

// Every execution space this Kokkos was built with, host spaces first so that
// the first one is the natural baseline. Adding a backend to Kokkos adds it
// here with no other change.
using EnabledSpaces = detail::concat<
#if defined(KOKKOS_ENABLE_SERIAL)
    std::tuple<Kokkos::Serial>,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    std::tuple<Kokkos::OpenMP>,
#endif
#if defined(KOKKOS_ENABLE_THREADS)
    std::tuple<Kokkos::Threads>,
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    std::tuple<Kokkos::Cuda>,
#endif
#if defined(KOKKOS_ENABLE_HIP)
    std::tuple<Kokkos::HIP>,
#endif
#if defined(KOKKOS_ENABLE_SYCL)
    std::tuple<Kokkos::SYCL>,
#endif
    std::tuple<>>;

// Calls f(TypeTag<Space>{}) for each enabled execution space, in order.
template <class F>
void for_each_space(F&& f) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(TypeTag<std::tuple_element_t<I, EnabledSpaces>>{}), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<EnabledSpaces>>{});
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

// True when the space's memory is host memory: a host mirror then aliases the
// device View and host<->device copies are not real copies.
template <class Space>
constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible;

// Page-locked host memory of the backend, or void when it has none.
template <class Space>
struct PinnedHostSpace {
  using type = void;
};
#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct PinnedHostSpace<Kokkos::Cuda> {
  using type = Kokkos::CudaHostPinnedSpace;
};
#endif
#if defined(KOKKOS_ENABLE_HIP)
template <>
struct PinnedHostSpace<Kokkos::HIP> {
  using type = Kokkos::HIPHostPinnedSpace;
};
#endif
#if defined(KOKKOS_ENABLE_SYCL)
template <>
struct PinnedHostSpace<Kokkos::SYCL> {
  using type = Kokkos::SYCLHostUSMSpace;
};
#endif

}  // namespace portalab
