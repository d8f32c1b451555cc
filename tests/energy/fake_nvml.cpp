// A stand-in for the driver's libnvidia-ml.so.1, for the tests of
// miniapp/energy/energy.cpp (loaded through PORTALAB_NVML_LIBRARY): the few NVML
// calls portalab makes, with nvml.h's signatures, answering from variables
// read at each call:
//   FAKE_NVML_UUID     the device's UUID (default GPU-fake)
//   FAKE_NVML_PCI      its PCI bus id (default 00000000:3B:00.0)
//   FAKE_NVML_ENERGY   "unsupported": no energy counter (NVML_ERROR_NOT_SUPPORTED)
//   FAKE_NVML_STEP_MJ  millijoules the counter advances at each read (default 1000)
//   FAKE_NVML_EVERY    it advances only at every Nth read, by N steps (default 1)
//   FAKE_NVML_WATTS    instead, a board drawing this power: the counter is the
//                      energy since the first read (portalab reads it on a
//                      thread of its own, so a count of reads means nothing)
//   FAKE_NVML_UPDATE_MS  with FAKE_NVML_WATTS, the counter moves only at
//                      multiples of this (as an H100's, every few tens of ms)
//   FAKE_NVML_LOST_FILE  the counter is not supported from the moment this
//                      file exists (a test makes it while portalab's sampler
//                      reads, without changing the environment under it)
//   FAKE_NVML_STALL_MS with FAKE_NVML_WATTS, the Nth read (FAKE_NVML_STALL_READ,
//                      default 1) on a thread other than nvmlInit_v2's
//                      (portalab's sampler) returns its count this many ms
//                      late, as a thread the scheduler suspends between the
//                      read and its time stamp
//   FAKE_NVML_REASONS  the clock-event reason bits (default 0)
//   FAKE_NVML_INIT     "fail": nvmlInit_v2 says the driver is not loaded
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace {

constexpr int success = 0, invalid_argument = 2, not_supported = 3, not_found = 6,
              driver_not_loaded = 9;
int device_tag = 0;  // the one device's handle points here

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::thread::id init_thread;  // FAKE_NVML_STALL_MS: reads on other threads
std::atomic<int> other_thread_reads{0};

}  // namespace

extern "C" {

using nvmlDevice_t = void*;

int nvmlInit_v2() {
  init_thread = std::this_thread::get_id();
  other_thread_reads = 0;
  return env("FAKE_NVML_INIT", "") == "fail" ? driver_not_loaded : success;
}
int nvmlShutdown() { return success; }
const char* nvmlErrorString(int rc) {
  switch (rc) {
    case success: return "Success";
    case not_supported: return "Not Supported";
    case not_found: return "Not Found";
    case driver_not_loaded: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}
int nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  if (!uuid || !device) return invalid_argument;
  if (env("FAKE_NVML_UUID", "GPU-fake") != uuid) return not_found;
  *device = &device_tag;
  return success;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, nvmlDevice_t* device) {
  if (!bus || !device) return invalid_argument;
  if (env("FAKE_NVML_PCI", "00000000:3B:00.0") != bus) return not_found;
  *device = &device_tag;
  return success;
}
int nvmlDeviceGetName(nvmlDevice_t, char* name, unsigned length) {
  std::strncpy(name, "Fake H100", length);
  return success;
}
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t, unsigned long long* mj) {
  static unsigned long long counter = 5000000;
  if (env("FAKE_NVML_ENERGY", "") == "unsupported") return not_supported;
  if (const std::string lost = env("FAKE_NVML_LOST_FILE", ""); !lost.empty() && std::ifstream(lost))
    return not_supported;
  if (const std::string watts = env("FAKE_NVML_WATTS", ""); !watts.empty()) {
    static const auto since = std::chrono::steady_clock::now();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
    if (const double update = std::stod(env("FAKE_NVML_UPDATE_MS", "0")); update > 0)
      ms = std::floor(ms / update) * update;
    *mj = 5000000 + static_cast<unsigned long long>(std::stod(watts) * ms);  // W x ms = mJ
    if (std::this_thread::get_id() != init_thread && !env("FAKE_NVML_STALL_MS", "").empty() &&
        ++other_thread_reads == std::stoi(env("FAKE_NVML_STALL_READ", "1"))) {
      std::this_thread::sleep_for(
          std::chrono::duration<double, std::milli>(std::stod(env("FAKE_NVML_STALL_MS", "0"))));
    }
    return success;
  }
  static unsigned long long reads = 0;
  const unsigned long long every = std::stoull(env("FAKE_NVML_EVERY", "1"));
  if (++reads % every == 0) counter += every * std::stoull(env("FAKE_NVML_STEP_MJ", "1000"));
  *mj = counter;
  return success;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_t, unsigned* mw) {
  *mw = 300000;
  return success;
}
int nvmlDeviceGetClockInfo(nvmlDevice_t, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1980 : type == 2 ? 2619 : 0;
  return type == 1 || type == 2 ? success : not_supported;
}
int nvmlDeviceGetTemperature(nvmlDevice_t, int, unsigned* c) {
  *c = 55;
  return success;
}
int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t, unsigned long long* bits) {
  *bits = std::stoull(env("FAKE_NVML_REASONS", "0"), nullptr, 0);
  return success;
}
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t, unsigned* mw) {
  *mw = 700000;
  return success;
}
int nvmlDeviceGetApplicationsClock(nvmlDevice_t, int type, unsigned* mhz) {
  *mhz = type == 1 ? 1755 : 2619;
  return success;
}
int nvmlDeviceGetPersistenceMode(nvmlDevice_t, int* mode) {
  *mode = 1;
  return success;
}
int nvmlDeviceGetEccMode(nvmlDevice_t, int* current, int* pending) {
  *current = 1;
  *pending = 1;
  return success;
}
int nvmlDeviceGetTotalEccErrors(nvmlDevice_t, int, int, unsigned long long* count) {
  *count = 0;
  return success;
}
int nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t, unsigned* width) {
  *width = 16;
  return success;
}
int nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t, unsigned* width) {
  *width = 16;
  return success;
}
int nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t, unsigned* generation) {
  *generation = 5;
  return success;
}

}  // extern "C"
