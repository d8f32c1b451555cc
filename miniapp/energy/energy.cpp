#include "energy/energy.hpp"

#include "support/environment.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <dlfcn.h>

#include <algorithm>
#include <numeric>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace portalab {
namespace {

// ---- NVML's ABI, as nvml.h declares it (no CUDA headers needed) ----------
using nvmlReturn_t = int;  // an enum: 0 success
using nvmlDevice_t = void*;
constexpr nvmlReturn_t nvml_success = 0;
constexpr nvmlReturn_t nvml_not_supported = 3;
constexpr nvmlReturn_t nvml_no_permission = 4;
constexpr int nvml_clock_sm = 1, nvml_clock_mem = 2;  // nvmlClockType_t
constexpr int nvml_temperature_gpu = 0;               // nvmlTemperatureSensors_t

struct Reason {
  std::uint64_t bit;
  const char* name;
  bool holds_down;
};
// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*) bits.
constexpr Reason reasons[] = {
    {0x1, "gpu_idle", false},
    {0x2, "applications_clocks_setting", false},
    {0x4, "sw_power_cap", true},
    {0x8, "hw_slowdown", true},
    {0x10, "sync_boost", false},
    {0x20, "sw_thermal_slowdown", true},
    {0x40, "hw_thermal_slowdown", true},
    {0x80, "hw_power_brake_slowdown", true},
    {0x100, "display_clock_setting", false},
};

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::vector<std::string> clock_event_reason_names(std::uint64_t bits) {
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const Reason& r : reasons) {
    known |= r.bit;
    if (bits & r.bit) names.push_back(r.name);
  }
  if (bits & ~known) names.push_back(fmt::format("other_{:#x}", bits & ~known));
  return names;
}

bool clocks_held_down(std::uint64_t bits) {
  for (const Reason& r : reasons)
    if (r.holds_down && (bits & r.bit)) return true;
  return false;
}

// ---- GPU ----------------------------------------------------------------------

struct GpuMeter::Library {
  void* handle = nullptr;
  bool initialised = false;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*by_uuid)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*applications_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*persistence)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_generation)(nvmlDevice_t, unsigned*) = nullptr;

  ~Library() {
    if (initialised && shutdown) shutdown();
    if (handle) dlclose(handle);
  }
  std::string error(nvmlReturn_t rc) const {
    const char* s = error_string ? error_string(rc) : nullptr;
    return s ? fmt::format("{} (NVML error {})", s, rc) : fmt::format("NVML error {}", rc);
  }
  template <class F>
  void bind(F& f, std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (void* p = dlsym(handle, n)) {
        f = reinterpret_cast<F>(p);
        return;
      }
  }
};

GpuMeter::~GpuMeter() = default;

std::unique_ptr<GpuMeter> GpuMeter::open(const std::string& uuid, const std::string& pci_bus_id,
                                         std::string& why_not) {
  const std::string path = env_path("PORTALAB_NVML_LIBRARY").value_or("libnvidia-ml.so.1");
  auto lib = std::make_unique<Library>();
  lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    const char* e = dlerror();
    why_not = fmt::format("NVML not loaded: {} (no NVIDIA driver here?)", e ? e : path);
    return nullptr;
  }
  lib->bind(lib->init, {"nvmlInit_v2", "nvmlInit"});
  lib->bind(lib->shutdown, {"nvmlShutdown"});
  lib->bind(lib->error_string, {"nvmlErrorString"});
  lib->bind(lib->by_uuid, {"nvmlDeviceGetHandleByUUID"});
  lib->bind(lib->by_pci_bus_id,
            {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"});
  lib->bind(lib->name, {"nvmlDeviceGetName"});
  lib->bind(lib->energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  lib->bind(lib->power, {"nvmlDeviceGetPowerUsage"});
  lib->bind(lib->clock, {"nvmlDeviceGetClockInfo"});
  lib->bind(lib->temperature, {"nvmlDeviceGetTemperature"});
  // Renamed in CUDA 12.2's NVML; drivers keep the old name.
  lib->bind(lib->reasons, {"nvmlDeviceGetCurrentClocksEventReasons",
                           "nvmlDeviceGetCurrentClocksThrottleReasons"});
  lib->bind(lib->power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  lib->bind(lib->applications_clock, {"nvmlDeviceGetApplicationsClock"});
  lib->bind(lib->persistence, {"nvmlDeviceGetPersistenceMode"});
  lib->bind(lib->ecc, {"nvmlDeviceGetEccMode"});
  lib->bind(lib->ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  lib->bind(lib->pcie_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
  lib->bind(lib->pcie_max_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
  lib->bind(lib->pcie_generation, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  if (!lib->init || !lib->shutdown) {
    why_not = fmt::format("{} is no NVML: it has no nvmlInit_v2", path);
    return nullptr;
  }
  if (const nvmlReturn_t rc = lib->init(); rc != nvml_success) {
    why_not = fmt::format("nvmlInit_v2 failed: {}", lib->error(rc));
    return nullptr;
  }
  lib->initialised = true;
  nvmlDevice_t device = nullptr;
  nvmlReturn_t rc = -1;
  if (!uuid.empty() && lib->by_uuid) rc = lib->by_uuid(uuid.c_str(), &device);
  if (rc != nvml_success && !pci_bus_id.empty() && lib->by_pci_bus_id) {
    std::string upper = pci_bus_id;  // NVML writes bus ids in capitals
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    rc = lib->by_pci_bus_id(upper.c_str(), &device);
  }
  if (rc != nvml_success) {
    why_not = fmt::format("NVML knows no GPU with UUID '{}' or PCI bus id '{}': {}", uuid,
                          pci_bus_id, lib->error(rc));
    return nullptr;
  }
  std::unique_ptr<GpuMeter> m(new GpuMeter);
  m->m_nvml = std::move(lib);
  m->m_device = device;
  if (!m->m_nvml->energy)
    m->m_energy_why_not = "this NVML has no nvmlDeviceGetTotalEnergyConsumption";
  return m;
}

std::optional<double> GpuMeter::energy_j() {
  if (!m_energy_why_not.empty()) return std::nullopt;
  unsigned long long mj = 0;
  if (const nvmlReturn_t rc = m_nvml->energy(m_device, &mj); rc != nvml_success) {
    // Pre-Volta boards and MIG instances have no energy counter.
    m_energy_why_not = fmt::format("nvmlDeviceGetTotalEnergyConsumption: {}{}", m_nvml->error(rc),
                                   rc == nvml_not_supported   ? ": the device has no energy counter"
                                   : rc == nvml_no_permission ? ": not permitted"
                                                              : "");
    return std::nullopt;
  }
  return mj * 1e-3;
}

GpuState GpuMeter::state() {
  GpuState s;
  unsigned v = 0;
  if (m_nvml->power && m_nvml->power(m_device, &v) == nvml_success) s.power_w = v * 1e-3;
  if (m_nvml->clock && m_nvml->clock(m_device, nvml_clock_sm, &v) == nvml_success) s.sm_mhz = v;
  if (m_nvml->clock && m_nvml->clock(m_device, nvml_clock_mem, &v) == nvml_success) s.mem_mhz = v;
  if (m_nvml->temperature &&
      m_nvml->temperature(m_device, nvml_temperature_gpu, &v) == nvml_success)
    s.temperature_c = v;
  unsigned long long bits = 0;
  if (m_nvml->reasons && m_nvml->reasons(m_device, &bits) == nvml_success) s.reasons = bits;
  return s;
}

nlohmann::json GpuMeter::settings() {
  nlohmann::json j = nlohmann::json::object();
  const Library& n = *m_nvml;
  char name[96] = {};
  if (n.name && n.name(m_device, name, sizeof name - 1) == nvml_success) j["name"] = name;
  unsigned v = 0;
  if (n.power_limit && n.power_limit(m_device, &v) == nvml_success) j["power_limit_w"] = v * 1e-3;
  if (n.applications_clock && n.applications_clock(m_device, nvml_clock_sm, &v) == nvml_success)
    j["applications_sm_mhz"] = v;
  if (n.applications_clock && n.applications_clock(m_device, nvml_clock_mem, &v) == nvml_success)
    j["applications_mem_mhz"] = v;
  int mode = 0, pending = 0;
  if (n.persistence && n.persistence(m_device, &mode) == nvml_success)
    j["persistence_mode"] = mode != 0;
  if (n.ecc && n.ecc(m_device, &mode, &pending) == nvml_success) {
    j["ecc"] = mode != 0;
    j["ecc_pending"] = pending != 0;
  }
  // What tells one GPU of a node from its peers (`portalab db fleet`):
  // uncorrected ECC errors since the driver loaded, and the PCIe link as
  // trained (a link narrower than it can be halves host copies).
  constexpr int uncorrected = 1, volatile_count = 0;
  unsigned long long errors = 0;
  if (mode != 0 && n.ecc_errors &&
      n.ecc_errors(m_device, uncorrected, volatile_count, &errors) == nvml_success)
    j["ecc_uncorrected_errors"] = errors;
  if (n.pcie_width && n.pcie_width(m_device, &v) == nvml_success) j["pcie_link_width"] = v;
  if (n.pcie_max_width && n.pcie_max_width(m_device, &v) == nvml_success)
    j["pcie_link_max_width"] = v;
  if (n.pcie_generation && n.pcie_generation(m_device, &v) == nvml_success)
    j["pcie_link_generation"] = v;
  j["energy_counter"] = energy_j().has_value();
  if (!m_energy_why_not.empty()) j["energy_not_available"] = m_energy_why_not;
  return j;
}

// ---- CPU ----------------------------------------------------------------------

namespace {

// A powercap file's one number; empty, with why, when it cannot be read.
std::optional<std::uint64_t> read_counter(const std::string& file, std::string& why) {
  std::ifstream in(file);
  if (!in) {
    const int err = errno;
    why = fmt::format("cannot read {}: {}{}", file, std::strerror(err),
                      err == EACCES ? " (since Linux 5.10 energy_uj is readable by root only, "
                                      "against the PLATYPUS side channel: an administrator can "
                                      "make it readable)"
                                    : "");
    return std::nullopt;
  }
  std::uint64_t v = 0;
  if (!(in >> v)) {
    why = fmt::format("cannot read {}: not a number", file);
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::unique_ptr<CpuMeter> CpuMeter::open(std::string& why_not) {
  return open(env_path("PORTALAB_POWERCAP_ROOT").value_or("/sys/class/powercap"), why_not);
}

std::unique_ptr<CpuMeter> CpuMeter::open(const std::string& root, std::string& why_not) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why_not = fmt::format("no {}: this kernel exposes no powercap (RAPL) interface{}", root, [] {
      std::ifstream cpu("/proc/cpuinfo");
      for (std::string line; std::getline(cpu, line);)
        if (line.rfind("flags", 0) == 0)
          return line.find(" hypervisor") != std::string::npos
                     ? std::string(
                           " (a virtual machine: the CPU says it "
                           "runs under a hypervisor, which does not "
                           "pass RAPL on)")
                     : std::string(" (module intel_rapl_msr not loaded?)");
      return std::string();
    }());
    return nullptr;
  }
  // Package zones (intel-rapl:N, named package-N; AMD's as well) and their
  // DRAM subzones; core and uncore are parts of a package, psys overlaps.
  std::vector<std::pair<std::string, std::string>> zones;  // path, name
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string dir = entry.path().filename().string();
    if (dir.rfind("intel-rapl:", 0) != 0) continue;
    std::ifstream in(entry.path() / "name");
    std::string name;
    std::getline(in, name);
    name = trim(name);
    const bool top = std::count(dir.begin(), dir.end(), ':') == 1;
    if ((top && name.rfind("package", 0) == 0) || (!top && name == "dram"))
      zones.emplace_back(entry.path().string(), name);
  }
  std::sort(zones.begin(), zones.end());
  if (zones.empty()) {
    why_not = fmt::format("{} has no intel-rapl package zone", root);
    return nullptr;
  }
  auto m = std::make_unique<CpuMeter>();
  for (const auto& [path, name] : zones) {
    Zone z;
    z.file = path + "/energy_uj";
    const auto range = read_counter(path + "/max_energy_range_uj", why_not);
    const auto now = range ? read_counter(z.file, why_not) : std::nullopt;
    if (!now) return nullptr;
    z.range_uj = *range;
    z.last_uj = *now;
    m->m_zones.push_back(z);
    m->m_names.push_back(
        fmt::format("{} {}", std::filesystem::path(path).filename().string(), name));
  }
  return m;
}

std::optional<double> CpuMeter::energy_j() {
  std::string why;
  for (Zone& z : m_zones) {
    const auto now = read_counter(z.file, why);
    if (!now) return std::nullopt;
    // The counter runs from 0 to max_energy_range_uj, then starts again.
    const std::uint64_t delta = *now >= z.last_uj ? *now - z.last_uj
                                                  : *now + (z.range_uj - z.last_uj);
    m_joules += delta * 1e-6;
    z.last_uj = *now;
  }
  return m_joules;
}

// ---- The meters of a run ------------------------------------------------------

EnergyMeters EnergyMeters::open(const nlohmann::json& device) {
  EnergyMeters m;
  if (device.is_object() && (device.contains("uuid") || device.contains("pci_bus_id")))
    m.gpu = GpuMeter::open(device.value("uuid", ""), device.value("pci_bus_id", ""), m.gpu_why_not);
  else
    m.gpu_why_not = "no GPU space in this build";
  m.cpu = CpuMeter::open(m.cpu_why_not);
  return m;
}

nlohmann::json EnergyMeters::describe() const {
  nlohmann::json j;
  j["gpu"] = gpu ? gpu->settings() : nlohmann::json{{"not_available", gpu_why_not}};
  j["cpu"] = cpu ? nlohmann::json{{"zones", cpu->zones()}}
                 : nlohmann::json{{"not_available", cpu_why_not}};
  return j;
}

std::string EnergyMeters::summary() const {
  const nlohmann::json d = describe();
  const std::string gpu_text =
      gpu ? fmt::format("GPU {} through NVML{}", d["gpu"].value("name", "?"),
                        d["gpu"].contains("energy_not_available")
                            ? fmt::format(" (clocks only: {})",
                                          d["gpu"]["energy_not_available"].get<std::string>())
                            : std::string())
          : fmt::format("GPU not measured: {}", gpu_why_not);
  const std::string cpu_text = cpu ? fmt::format("CPU through RAPL ({})",
                                                 fmt::join(cpu->zones(), ", "))
                                   : fmt::format("CPU not measured: {}", cpu_why_not);
  return gpu_text + "; " + cpu_text;
}

// ---- An entry's figures --------------------------------------------------------

void EntryEnergy::derive(double flops, double bytes) {
  const SourceEnergy& s = own();
  gflop_per_j = gb_per_j = 0;
  if (!s.measured() || s.kernel_joules <= 0) return;
  // Over all repetitions together: robust where a coarse counter moved in a few.
  const double per_rep = s.kernel_joules / s.reps;
  if (flops > 0) gflop_per_j = flops / per_rep * 1e-9;
  if (bytes > 0) gb_per_j = bytes / per_rep * 1e-9;
}

namespace {

nlohmann::json source_json(const SourceEnergy& s) {
  if (!s.not_available.empty()) return {{"not_available", s.not_available}};
  return {{"joules", s.joules},
          {"joules_per_rep", s.joules_per_rep},
          {"kernel_joules", s.kernel_joules},
          {"kernel_joules_per_rep", s.kernel_joules_per_rep},
          {"seconds", s.seconds},
          {"mean_power_w", s.mean_power_w},
          {"reps", s.reps},
          {"reps_counted", s.reps_counted}};
}

SourceEnergy source_from_json(const nlohmann::json& j) {
  SourceEnergy s;
  if (!j.is_object()) return s;
  s.not_available = j.value("not_available", "");
  s.joules = j.value("joules", 0.0);
  s.joules_per_rep = j.value("joules_per_rep", 0.0);
  s.kernel_joules = j.value("kernel_joules", 0.0);
  s.kernel_joules_per_rep = j.value("kernel_joules_per_rep", 0.0);
  s.seconds = j.value("seconds", 0.0);
  s.mean_power_w = j.value("mean_power_w", 0.0);
  s.reps = j.value("reps", 0);
  s.reps_counted = j.value("reps_counted", 0);
  return s;
}

nlohmann::json optional_json(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json();
}

std::optional<double> optional_from(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

}  // namespace

nlohmann::json to_json(const EntryEnergy& e) {
  nlohmann::json j = {{"cpu", source_json(e.cpu)},
                      {"start_unix_s", e.start_unix_s},
                      {"end_unix_s", e.end_unix_s},
                      {"gflop_per_j",
                       e.gflop_per_j > 0 ? nlohmann::json(e.gflop_per_j) : nlohmann::json()},
                      {"gb_per_j", e.gb_per_j > 0 ? nlohmann::json(e.gb_per_j) : nlohmann::json()}};
  if (e.gpu_read) {
    j["gpu"] = source_json(e.gpu);
    j["sm_clock_mhz"] = optional_json(e.sm_mhz);
    j["mem_clock_mhz"] = optional_json(e.mem_mhz);
    j["power_w"] = optional_json(e.power_w);
    j["temperature_c"] = optional_json(e.temperature_c);
    j["clock_event_reasons"] = e.reasons;
    j["throttled"] = e.throttled;
  }
  return j;
}

EntryEnergy entry_energy_from_json(const nlohmann::json& j) {
  EntryEnergy e;
  e.cpu = source_from_json(j.value("cpu", nlohmann::json()));
  e.gpu_read = j.contains("gpu");
  if (e.gpu_read) e.gpu = source_from_json(j["gpu"]);
  e.sm_mhz = optional_from(j, "sm_clock_mhz");
  e.mem_mhz = optional_from(j, "mem_clock_mhz");
  e.power_w = optional_from(j, "power_w");
  e.temperature_c = optional_from(j, "temperature_c");
  e.reasons = j.value("clock_event_reasons", std::vector<std::string>{});
  e.throttled = j.value("throttled", false);
  e.start_unix_s = j.value("start_unix_s", 0.0);
  e.end_unix_s = j.value("end_unix_s", 0.0);
  return e;
}

EntryEnergy sum_over_ranks(const std::vector<EntryEnergy>& ranks,
                           const std::vector<std::string>& hosts,
                           const std::vector<std::string>& devices) {
  EntryEnergy sum;
  if (ranks.empty()) return sum;
  sum.gpu_read = ranks.front().gpu_read;
  sum.start_unix_s = ranks.front().start_unix_s;
  std::set<std::string> gpus_seen, cpus_seen;
  std::set<std::string> reasons;
  auto add = [](SourceEnergy& to, const SourceEnergy& from) {
    if (!from.measured()) {
      if (to.not_available.empty()) to.not_available = from.not_available;
      return;
    }
    to.joules += from.joules;
    to.kernel_joules += from.kernel_joules;
    to.joules_per_rep += from.joules_per_rep;
    to.kernel_joules_per_rep += from.kernel_joules_per_rep;
    to.mean_power_w += from.mean_power_w;
    to.seconds = std::max(to.seconds, from.seconds);
    to.reps = from.reps;
    to.reps_counted = to.reps_counted ? std::min(to.reps_counted, from.reps_counted)
                                      : from.reps_counted;
  };
  // A source not measured on one rank is not measured for the node.
  auto all_measured = [&](auto member) {
    return std::all_of(ranks.begin(), ranks.end(),
                       [&](const EntryEnergy& e) { return (e.*member).measured(); });
  };
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const EntryEnergy& e = ranks[k];
    const std::string host = k < hosts.size() ? hosts[k] : std::to_string(k);
    const std::string device = k < devices.size() ? devices[k] : std::to_string(k);
    if (gpus_seen.insert(host + "/" + device).second) add(sum.gpu, e.gpu);
    if (cpus_seen.insert(host).second) add(sum.cpu, e.cpu);
    for (const auto& r : e.reasons) reasons.insert(r);
    sum.throttled = sum.throttled || e.throttled;
    // The slowest clocks and the hottest GPU of the ranks.
    if (e.sm_mhz) sum.sm_mhz = sum.sm_mhz ? std::min(*sum.sm_mhz, *e.sm_mhz) : *e.sm_mhz;
    if (e.mem_mhz) sum.mem_mhz = sum.mem_mhz ? std::min(*sum.mem_mhz, *e.mem_mhz) : *e.mem_mhz;
    if (e.temperature_c)
      sum.temperature_c = sum.temperature_c ? std::max(*sum.temperature_c, *e.temperature_c)
                                            : *e.temperature_c;
    if (e.power_w) sum.power_w = sum.power_w.value_or(0) + *e.power_w;
    sum.start_unix_s = std::min(sum.start_unix_s, e.start_unix_s);
    sum.end_unix_s = std::max(sum.end_unix_s, e.end_unix_s);
  }
  if (!all_measured(&EntryEnergy::gpu) && sum.gpu.not_available.empty())
    sum.gpu.not_available = "not measured on every rank";
  if (!all_measured(&EntryEnergy::cpu) && sum.cpu.not_available.empty())
    sum.cpu.not_available = "not measured on every rank";
  if (!sum.gpu.not_available.empty()) sum.gpu = {sum.gpu.not_available};
  if (!sum.cpu.not_available.empty()) sum.cpu = {sum.cpu.not_available};
  sum.reasons.assign(reasons.begin(), reasons.end());
  return sum;
}

// ---- Reading around the repetitions --------------------------------------------

struct EnergyLog::Sampler {
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  std::thread thread;
};

EnergyLog::EnergyLog(EnergyMeters& meters, bool gpu, bool interleaved)
    : m_meters(meters), m_device_row(gpu), m_gpu(gpu && meters.gpu), m_interleaved(interleaved) {}

EnergyLog::~EnergyLog() { stop_sampler(); }

EnergyLog::Reading EnergyLog::read() {
  Reading r;
  if (m_meters.cpu && !m_cpu_lost) {
    r.cpu = m_meters.cpu->energy_j();
    m_cpu_lost = !r.cpu;
  }
  return r;
}

// A read before the thread starts and one after it stops bracket every
// repetition; in between, the counter every energy_every, the state every
// state_every (and once before the first repetition). A device without an
// energy counter, or one that stops answering, keeps its clocks.
//
// A read is placed at the middle of the call that made it: a thread the
// scheduler suspends between the read and its time stamp would otherwise put
// an early count at a late time (under load, half a window's joules lost).
// The sampler's reads that took longer than energy_every cannot be placed
// and are dropped; the two bracketing reads are kept, at their middles.
std::optional<EnergyLog::GpuSample> EnergyLog::timed_gpu_read(Clock::duration longest) {
  const auto before = Clock::now();
  const auto joules = m_meters.gpu->energy_j();
  const auto after = Clock::now();
  if (!joules) return std::nullopt;
  if (after - before > longest) return GpuSample{Clock::time_point::min(), *joules};
  return GpuSample{before + (after - before) / 2, *joules};
}

void EnergyLog::start_sampler() {
  GpuMeter& gpu = *m_meters.gpu;
  m_states.push_back(gpu.state());
  if (const auto first = timed_gpu_read(Clock::duration::max()))
    m_gpu_samples.push_back(*first);
  else
    m_gpu_lost = true;
  m_sampler = std::make_unique<Sampler>();
  m_sampler->thread = std::thread([this, &gpu, s = m_sampler.get()] {
    auto state_read = Clock::now();
    std::unique_lock lock(s->mutex);
    while (!s->wake.wait_for(lock, energy_every, [s] { return s->stop; })) {
      const bool lost = m_gpu_lost;
      lock.unlock();
      const auto sample = lost ? std::nullopt : timed_gpu_read(energy_every);
      const auto t = Clock::now();
      std::optional<GpuState> state;
      if (t - state_read >= state_every) {
        state = gpu.state();
        state_read = t;
      }
      lock.lock();
      if (!sample)
        m_gpu_lost = true;
      else if (sample->t != Clock::time_point::min())  // else a stretched read: dropped
        m_gpu_samples.push_back(*sample);
      if (state) m_states.push_back(*state);
    }
  });
}

void EnergyLog::stop_sampler() {
  if (!m_sampler) return;
  {
    std::lock_guard lock(m_sampler->mutex);
    m_sampler->stop = true;
  }
  m_sampler->wake.notify_all();
  m_sampler->thread.join();
  m_sampler.reset();
  if (m_gpu_lost) return;
  if (const auto last = timed_gpu_read(Clock::duration::max()))
    m_gpu_samples.push_back(*last);
  else
    m_gpu_lost = true;
}

double EnergyLog::gpu_joules_at(Clock::time_point t) const {
  const auto after = std::lower_bound(m_gpu_samples.begin(), m_gpu_samples.end(), t,
                                      [](const GpuSample& s, Clock::time_point at) {
                                        return s.t < at;
                                      });
  if (after == m_gpu_samples.begin()) return after->joules;
  if (after == m_gpu_samples.end()) return m_gpu_samples.back().joules;
  const GpuSample& before = *(after - 1);
  const double span = std::chrono::duration<double>(after->t - before.t).count();
  const double into = std::chrono::duration<double>(t - before.t).count();
  return span > 0 ? before.joules + (after->joules - before.joules) * into / span : after->joules;
}

void EnergyLog::rep_start() {
  const bool first = m_seconds.empty();
  if (first) {
    m_start_unix_s = unix_now_s();
    m_first = read();
    if (m_gpu && !m_sampler) start_sampler();
  }
  // Not read again: what ran since the last repetition's end (the gate
  // between repetitions) is in the window's joules either way; unless
  // another row's repetition ran since.
  m_rep_start = m_kernel_start = first ? m_first : m_interleaved ? read() : m_last;
  m_rep_started = m_kernel_started = Clock::now();
}

void EnergyLog::kernel_start() {
  m_kernel_start = read();
  m_kernel_started = Clock::now();
}

void EnergyLog::kernel_end() {
  const Reading now = read();
  m_kernel_spans.push_back({m_kernel_started, Clock::now()});
  if (now.cpu && m_kernel_start.cpu) m_cpu_kernel.push_back(*now.cpu - *m_kernel_start.cpu);
  m_kernel_end = now;
}

void EnergyLog::rep_end(bool copied_out) {
  const Reading now = copied_out ? read() : m_kernel_end;
  const auto t = Clock::now();
  m_rep_spans.push_back({m_rep_started, t});
  m_seconds.push_back(std::chrono::duration<double>(t - m_rep_started).count());
  m_end_unix_s = unix_now_s();
  if (now.cpu && m_rep_start.cpu) m_cpu_rep.push_back(*now.cpu - *m_rep_start.cpu);
  m_last = now;
}

EntryEnergy EnergyLog::finish() {
  stop_sampler();
  EntryEnergy e;
  e.gpu_read = m_device_row;
  e.start_unix_s = m_start_unix_s;
  e.end_unix_s = m_end_unix_s;
  double seconds = 0;
  for (double s : m_seconds) seconds += s;
  // The window from the first repetition's start to the last one's end.
  const double window_s = std::max(0.0, m_end_unix_s - m_start_unix_s);
  auto source = [&](const std::vector<double>& rep, const std::vector<double>& kernel, bool lost,
                    const std::optional<double>& first, const std::optional<double>& last,
                    const std::string& why_not, const std::string& lost_why) {
    SourceEnergy s;
    if (!why_not.empty()) return SourceEnergy{why_not};
    if (lost || rep.size() != m_seconds.size() || rep.empty() || !first || !last)
      return SourceEnergy{lost_why.empty() ? "the counter could not be read at every repetition"
                                           : lost_why};
    // The counter's whole move over the window, not the sum of each
    // repetition's: NVML's counter moves every few tens of ms, and a move
    // that fell between two repetitions was lost to the sum when each was
    // read in line (a sixth of a gemm's joules: docs/performance.md, "Energy").
    s.joules = *last - *first;
    if (m_interleaved) s.joules = std::accumulate(rep.begin(), rep.end(), 0.0);
    for (double j : kernel) s.kernel_joules += j;
    // All repetitions together, not the median one: NVML's counter moves
    // less often than a short repetition lasts, so most such repetitions read
    // 0 J and the median is 0.
    s.joules_per_rep = s.joules / static_cast<double>(rep.size());
    s.kernel_joules_per_rep = kernel.empty() ? 0.0
                                             : s.kernel_joules / static_cast<double>(kernel.size());
    s.seconds = window_s > 0 && !m_interleaved ? window_s : seconds;
    s.mean_power_w = s.seconds > 0 ? s.joules / s.seconds : 0;
    s.reps = static_cast<int>(rep.size());
    s.reps_counted = static_cast<int>(
        std::count_if(rep.begin(), rep.end(), [](double j) { return j > 0; }));
    return s;
  };
  e.cpu = source(m_cpu_rep, m_cpu_kernel, m_cpu_lost, m_first.cpu, m_last.cpu,
                 m_meters.cpu ? "" : m_meters.cpu_why_not,
                 "the RAPL counters stopped being readable");
  if (m_device_row && !m_gpu) e.gpu = SourceEnergy{m_meters.gpu_why_not};
  if (m_gpu) {
    std::vector<double> rep, kernel;
    std::optional<double> first, last;
    if (!m_gpu_lost && !m_gpu_samples.empty() && !m_rep_spans.empty()) {
      auto joules = [&](const Span& s) { return gpu_joules_at(s.end) - gpu_joules_at(s.start); };
      for (const Span& s : m_rep_spans) rep.push_back(joules(s));
      for (const Span& s : m_kernel_spans) kernel.push_back(joules(s));
      first = gpu_joules_at(m_rep_spans.front().start);
      last = gpu_joules_at(m_rep_spans.back().end);
    }
    e.gpu = source(rep, kernel, m_gpu_lost, first, last, "", m_meters.gpu->energy_why_not());
    std::vector<double> sm, mem, power;
    std::uint64_t bits = 0;
    for (const GpuState& s : m_states) {
      if (s.sm_mhz) sm.push_back(*s.sm_mhz);
      if (s.mem_mhz) mem.push_back(*s.mem_mhz);
      if (s.power_w) power.push_back(*s.power_w);
      if (s.temperature_c)
        e.temperature_c = std::max(e.temperature_c.value_or(*s.temperature_c), *s.temperature_c);
      if (s.reasons) bits |= *s.reasons;
    }
    if (!sm.empty()) e.sm_mhz = median(sm);
    if (!mem.empty()) e.mem_mhz = median(mem);
    if (!power.empty()) e.power_w = median(power);
    e.reasons = clock_event_reason_names(bits);
    e.throttled = clocks_held_down(bits);
  }
  return e;
}

}  // namespace portalab
