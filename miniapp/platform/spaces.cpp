#include "platform/spaces.hpp"

#include "platform/space_names.hpp"
#include "support/environment.hpp"
#include "support/text.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include <fmt/format.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace portalab {

std::vector<std::string> enabled_space_names() {
  std::vector<std::string> names;
  for_each_space([&](auto tag) { names.emplace_back(decltype(tag)::type::name()); });
  return names;
}

bool is_host_space(std::string_view name) {
  bool compiled = false;
  bool host = false;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (name != Space::name()) return;
    compiled = true;
    host = is_host_space_v<Space>;
  });
  return compiled ? host : is_host_space_name(name);
}

int visible_device_count() {
#if defined(KOKKOS_ENABLE_CUDA)
  int count = 0;
  // No device, no driver: 0, and any --kokkos-device-id is refused.
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
#else
  return -1;
#endif
}

std::string device_problem() {
#if defined(KOKKOS_ENABLE_CUDA)
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) return {};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return fmt::format(
      "this portalab was built with Cuda, and the CUDA runtime sees no GPU here ({}{}): run it "
      "on a GPU node (under Slurm, ask for one: --gpus=1 or --gres=gpu:1), or build the host "
      "preset for the CPU alone (cmake --workflow --preset host)",
      err == cudaSuccess ? "cudaGetDeviceCount: 0 devices" : cudaGetErrorString(err),
      visible ? fmt::format("; CUDA_VISIBLE_DEVICES='{}'", shown(visible)) : std::string());
#else
  return {};
#endif
}

std::string device_bus_id_before_kokkos(bool chosen) {
#if defined(KOKKOS_ENABLE_CUDA)
  if (chosen || std::getenv("KOKKOS_DEVICE_ID") || std::getenv("KOKKOS_VISIBLE_DEVICES")) return {};
  int local_rank = 0;
  // The variables Kokkos reads for the node-local rank, in its order.
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_RANK",
                           "MPI_LOCALRANKID", "SLURM_LOCALID", "PMI_LOCAL_RANK"})
    if (const char* v = std::getenv(name)) {
      local_rank = whole_number(v).value_or(0);  // environment_problem() refuses another form
      break;
    }
  const int count = visible_device_count();
  if (count <= 0) return {};
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, local_rank % count) != cudaSuccess) return {};
  return id;
#else
  (void)chosen;
  return {};
#endif
}

std::string threads_affinity_warning(int threads, int cpus, const char* proc_bind) {
  if (threads <= 1 || cpus <= 0 || cpus >= threads) return {};
  return fmt::format(
      "Threads: {} threads on {} CPU{} (the CPUs of the thread that started them){}: its rows "
      "and limits measure {} CPU{}, not the machine; {}",
      threads, cpus, cpus == 1 ? "" : "s",
      proc_bind
          ? fmt::format(", as OMP_PROC_BIND={} had an OpenMP runtime bind that thread", proc_bind)
          : std::string(),
      cpus, cpus == 1 ? "" : "s",
      proc_bind ? "unset OMP_PROC_BIND (and OMP_PLACES) for Threads runs"
                : "give it more CPUs (taskset, srun --cpus-per-task) or fewer threads "
                  "(--kokkos-num-threads)");
}

std::string threads_affinity_warning() {
#if defined(KOKKOS_ENABLE_THREADS)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  return threads_affinity_warning(Kokkos::Threads().concurrency(), CPU_COUNT(&set),
                                  std::getenv("OMP_PROC_BIND"));
#else
  return {};
#endif
}

std::string threads_default_warning(int threads, int cpus, bool chosen) {
  if (chosen || threads != 1 || cpus <= 1) return {};
  return fmt::format(
      "Threads runs on one thread (Kokkos' default) of the {} CPUs this process may use: its rows "
      "and limits measure one core; KOKKOS_NUM_THREADS={} or --kokkos-num-threads={} uses them "
      "(and leave OMP_PROC_BIND unset for Threads runs)",
      cpus, cpus, cpus);
}

std::string threads_default_warning(const std::vector<std::string>& spaces,
                                    const std::vector<std::string>& kokkos_args) {
  const auto names = enabled_space_names();
  const auto& measured = spaces.empty() ? names : spaces;
  if (std::find(measured.begin(), measured.end(), "Threads") == measured.end()) return {};
  bool chosen = std::getenv("KOKKOS_NUM_THREADS") != nullptr;
  for (const auto& a : kokkos_args)
    if (a.rfind("--kokkos-num-threads", 0) == 0 || a.rfind("--kokkos-threads", 0) == 0)
      chosen = true;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  return threads_default_warning(space_concurrency("Threads"), CPU_COUNT(&set), chosen);
}

std::string serial_alone_threads_option(const std::vector<std::string>& spaces,
                                        const std::vector<std::string>& kokkos_args) {
  const auto names = enabled_space_names();
  auto has = [](const std::vector<std::string>& list, const char* name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  const auto& measured = spaces.empty() ? names : spaces;
  if (!has(names, "Threads") || !has(measured, "Serial") || has(measured, "Threads")) return {};
  for (const auto& a : kokkos_args)
    if (a.rfind("--kokkos-num-threads", 0) == 0 || a.rfind("--kokkos-threads", 0) == 0) return {};
  return "--kokkos-num-threads=1";
}

std::string threads_per_rank_option(int local_ranks, int node_cpus, int affinity_cpus,
                                    const std::vector<std::string>& kokkos_args,
                                    const std::function<const char*(const char*)>& getenv) {
  const auto names = enabled_space_names();
  const bool parallel_host = std::find(names.begin(), names.end(), "OpenMP") != names.end() ||
                             std::find(names.begin(), names.end(), "Threads") != names.end();
  if (local_ranks <= 1 || !parallel_host) return {};
  if (getenv("OMP_NUM_THREADS") || getenv("KOKKOS_NUM_THREADS")) return {};
  for (const auto& a : kokkos_args)
    if (a.rfind("--kokkos-num-threads", 0) == 0 || a.rfind("--kokkos-threads", 0) == 0) return {};
  const int share = std::max(1, std::min(node_cpus / local_ranks, std::max(1, affinity_cpus)));
  return fmt::format("--kokkos-num-threads={}", share);
}

std::string threads_per_rank_option(int local_ranks, const std::vector<std::string>& kokkos_args) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int affinity = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  return threads_per_rank_option(local_ranks, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
                                 affinity, kokkos_args,
                                 [](const char* n) { return std::getenv(n); });
}

std::string serial_beside_threads_warning(const std::vector<std::string>& spaces) {
  const auto names = enabled_space_names();
  const auto& measured = spaces.empty() ? names : spaces;
  auto has = [&](const char* name) {
    return std::find(measured.begin(), measured.end(), name) != measured.end();
  };
  const int threads = space_concurrency("Threads");
  if (!has("Serial") || !has("Threads") || threads <= 1) return {};
  return fmt::format(
      "Serial runs beside {} idle Threads worker{}, which spin (8-11% off a Serial "
      "copy on a 16-core Xeon): for Serial figures, run Serial apart (--spaces "
      "Serial starts Threads on one thread)",
      threads - 1, threads == 2 ? "" : "s");
}

int space_concurrency(std::string_view name) {
  int threads = 0;
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    if (name == Space::name()) threads = Space().concurrency();
  });
  return threads;
}

}  // namespace portalab
