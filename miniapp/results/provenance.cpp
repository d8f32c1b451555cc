#include "results/provenance.hpp"

#include "ranks/comm.hpp"
#include "ranks/placement.hpp"

#include "results/build_info.hpp"
#include "deck/deck.hpp"
#include "deck/kokkos_options.hpp"
#include "libraries/host_blas.hpp"
#include "libraries/library_threads.hpp"
#include "libraries/library_probe.hpp"
#include "platform/memory.hpp"
#include "platform/spaces.hpp"

#include <KokkosKernels_config.h>
#include <Kokkos_Core.hpp>

#include <fmt/format.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

extern char** environ;

namespace portalab {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

nlohmann::json environment_with_prefix(std::string_view prefix) {
  nlohmann::json out = nlohmann::json::object();
  for (char** e = environ; *e; ++e) {
    std::string_view kv(*e);
    if (kv.substr(0, prefix.size()) != prefix) continue;
    const auto eq = kv.find('=');
    out[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  return out;
}

nlohmann::json kernels_tpls() {
  nlohmann::json tpls = nlohmann::json::array();
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  tpls.push_back("BLAS");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_LAPACK)
  tpls.push_back("LAPACK");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
  tpls.push_back("CUBLAS");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUSOLVER)
  tpls.push_back("CUSOLVER");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_CUSPARSE)
  tpls.push_back("CUSPARSE");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_ROCBLAS)
  tpls.push_back("ROCBLAS");
#endif
#if defined(KOKKOSKERNELS_ENABLE_TPL_MAGMA)
  tpls.push_back("MAGMA");
#endif
  return tpls;
}

nlohmann::json devices() {
  nlohmann::json out = nlohmann::json::array();
  for_each_space([&](auto tag) {
    using Space = typename decltype(tag)::type;
    nlohmann::json d{{"space", Space::name()}, {"concurrency", Space().concurrency()}};
    if constexpr (is_host_space_v<Space>) {
      d["name"] = cpu_model();
    }
#if defined(KOKKOS_ENABLE_CUDA)
    if constexpr (std::is_same_v<Space, Kokkos::Cuda>) {
      cudaDeviceProp p{};
      const int id = Space().cuda_device();
      if (cudaGetDeviceProperties(&p, id) == cudaSuccess) {
        d["name"] = p.name;
        d["device_id"] = id;
        d["multiprocessors"] = p.multiProcessorCount;
        d["memory_bytes"] = p.totalGlobalMem;
        d["compute_capability"] = fmt::format("{}.{}", p.major, p.minor);
        // Which physical GPU, whatever CUDA_VISIBLE_DEVICES renumbered.
        d["pci_bus_id"] = fmt::format("{:08x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID,
                                      p.pciDeviceID);
        std::string uuid = "GPU-";
        for (int i = 0; i < 16; ++i) {
          uuid += fmt::format("{:02x}", static_cast<unsigned char>(p.uuid.bytes[i]));
          if (i == 3 || i == 5 || i == 7 || i == 9) uuid += "-";
        }
        d["uuid"] = uuid;
      }
      int runtime = 0, driver = 0;
      cudaRuntimeGetVersion(&runtime);
      cudaDriverGetVersion(&driver);
      d["cuda_runtime"] = runtime;
      d["cuda_driver"] = driver;
    }
#endif
    out.push_back(d);
  });
  return out;
}

// The Kokkos Tools libraries given to Kokkos::initialize
// (kokkos_tools_requested), each said loaded or not: Kokkos loads the first,
// which may load the others (kokkos-tools' kernel-filter and sampler pass
// events on).
nlohmann::json kokkos_tools(const std::vector<std::string>& command) {
  const auto request = kokkos_tools_requested(command,
                                              [](const char* name) { return std::getenv(name); });
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& lib : request.libs) {
    void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_NOLOAD);  // only if already loaded
    list.push_back({{"path", lib}, {"loaded", handle != nullptr}});
    if (handle) dlclose(handle);
  }
  nlohmann::json tools{{"libs", list}};
  if (!list.empty()) tools["from"] = request.from;
  if (!request.args.empty()) tools["args"] = request.args;
  return tools;
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string build_commit() { return PORTALAB_GIT_COMMIT; }

nlohmann::json rank_provenance() {
  const RankPlace p = rank_place();
  nlohmann::json j{{"rank", p.rank},
                   {"ranks", p.size},
                   {"local_rank", p.local_rank},
                   {"local_ranks", p.local_size},
                   {"host", p.host},
                   {"cpus", p.cpus},
                   {"mpi", p.mpi}};
  if (p.mpi) {
    j["mpi_library"] = p.mpi_library;
    j["mpi_cuda_aware"] = p.cuda_aware;
  }
  // The device this rank's Kokkos chose (Kokkos maps ranks to GPUs by the
  // node-local rank its launcher sets).
  for (const auto& d : devices())
    if (d.contains("device_id")) {
      j["device"] = d;
      // Where the node says which NUMA node the GPU hangs off (sysfs).
      if (d.contains("pci_bus_id") && d["pci_bus_id"].is_string())
        if (const int node = pci_numa_node(d["pci_bus_id"].get<std::string>()); node >= 0)
          j["gpu_numa_node"] = node;
    }
  // Each host thread's CPUs, as placed (ranks/placement.hpp), and who chose.
  if (const auto threads = thread_cpus_text(); !threads.empty()) j["thread_cpus"] = threads;
  if (const auto by = placement_chosen_by(); !by.empty()) j["placement"] = by;
  return j;
}

nlohmann::json collect_provenance(const Deck* deck, const std::vector<std::string>& command) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  nlohmann::json p{
      {"portalab", {{"git_commit", PORTALAB_GIT_COMMIT}}},
      {"started_at", now_iso8601()},
      {"command", command},
      {"kokkos",
       {{"version", fmt::format("{}.{}.{}", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                                KOKKOS_VERSION % 100)},
        {"spaces", enabled_space_names()},
        {"default_execution_space", Kokkos::DefaultExecutionSpace::name()},
        // Installed (found by CMake) or fetched (the pinned sources built
        // for this build tree), where, and how it was configured.
        {"origin", PORTALAB_KOKKOS_ORIGIN},
        {"location", PORTALAB_KOKKOS_LOCATION},
        {"configuration", PORTALAB_KOKKOS_CONFIGURATION}}},
      {"kokkos_kernels",
       {{"version", fmt::format("{}.{}.{}", KOKKOSKERNELS_VERSION_MAJOR,
                                KOKKOSKERNELS_VERSION_MINOR, KOKKOSKERNELS_VERSION_PATCH)},
        {"tpls", kernels_tpls()}}},
      {"build",
       {{"compiler", PORTALAB_CXX_COMPILER},
        {"compiler_id", PORTALAB_CXX_COMPILER_ID},
        {"compiler_version", PORTALAB_CXX_COMPILER_VERSION},
        {"kokkos_compiler", PORTALAB_KOKKOS_CXX_COMPILER},
        {"build_type", PORTALAB_BUILD_TYPE},
        {"flags", PORTALAB_CXX_FLAGS}}},
      {"devices", devices()},
      {"kokkos_tools", kokkos_tools(command)},
      {"host",
       {{"hostname", host},
        {"cpu_model", cpu_model()},
        {"hardware_threads", std::thread::hardware_concurrency()},
        {"host_space_threads", Kokkos::DefaultHostExecutionSpace().concurrency()},
        // The host BLAS and LAPACK as rows name them, and how their thread
        // count follows each space (libraries/library_threads.hpp).
        {"blas", vendor_library("BLAS")},
        {"lapack", vendor_library("LAPACK")},
        {"blas_threads", libraries::LibraryThreadControl::instance().describe()},
        // The kernels the BLAS chose at run time, and a warning where they
        // are narrower than the CPU's vectors.
        {"blas_kernels", to_json(host_blas_kernels())},
        // Host arrays ask for transparent huge pages (arrays.hpp) unless
        // PORTALAB_HUGE_PAGES=0; the system's mode says whether they get them.
        {"huge_pages",
         {{"advised", huge_pages_advised()},
          {"transparent_huge_pages", transparent_huge_pages_mode()}}},
        {"last_level_cache_bytes", last_level_cache_bytes()},
        {"omp_env", environment_with_prefix("OMP_")},
        {"kokkos_env", environment_with_prefix("KOKKOS_")}}},
      {"slurm",
       {{"job_id", env("SLURM_JOB_ID")},
        // An array's tasks each have a job id of their own; the array's is
        // what names them together (results/<it>/, `db fleet --job`).
        {"array_job_id", env("SLURM_ARRAY_JOB_ID")},
        {"array_task_id", env("SLURM_ARRAY_TASK_ID")},
        {"nodelist", env("SLURM_JOB_NODELIST")},
        {"partition", env("SLURM_JOB_PARTITION")}}},
  };
  if (deck) p["deck"] = {{"path", deck->path}, {"hash", deck->hash}};
  return p;
}

}  // namespace portalab
