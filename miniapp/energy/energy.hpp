// Energy, clocks and power of what a row ran on, read outside its timed
// region: the GPU through NVML (the driver's libnvidia-ml.so.1, loaded at run
// time: a build without a driver says why it has no figures), the CPU
// packages through RAPL's powercap files. A counter that cannot be read
// gives no figure and the reason, never a made-up one.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace portalab {

// NVML's clock-event ("throttle") reasons by bit, as nvml.h names them; the
// five that hold the clocks down (power cap, thermal, hardware slowdown,
// power brake) flag a row as throttled.
std::vector<std::string> clock_event_reason_names(std::uint64_t bits);
bool clocks_held_down(std::uint64_t bits);

// One look at a GPU; a field the device does not tell stays empty.
struct GpuState {
  std::optional<double> power_w, sm_mhz, mem_mhz, temperature_c;
  std::optional<std::uint64_t> reasons;  // clock-event reason bits
};

// A GPU through NVML.
class GpuMeter {
 public:
  // The GPU with this UUID ("GPU-..." as CUDA reports it) or, failing that,
  // PCI bus id ("00000000:3b:00.0"): the one Kokkos chose, however
  // CUDA_VISIBLE_DEVICES renumbered it. nullptr, with why_not, when NVML
  // cannot be loaded or does not know the device. The library is
  // PORTALAB_NVML_LIBRARY where set (the tests' fake), else libnvidia-ml.so.1.
  static std::unique_ptr<GpuMeter> open(const std::string& uuid, const std::string& pci_bus_id,
                                        std::string& why_not);
  ~GpuMeter();
  GpuMeter(const GpuMeter&) = delete;
  GpuMeter& operator=(const GpuMeter&) = delete;

  // The board's energy counter since the driver loaded, in joules; empty
  // (and energy_why_not() says why) where the device has none.
  std::optional<double> energy_j();
  const std::string& energy_why_not() const { return m_energy_why_not; }
  GpuState state();
  // What bounds its clocks, for the provenance: name, UUID, enforced power
  // limit, application clocks, persistence mode, ECC (current and pending).
  nlohmann::json settings();

  struct Library;

 private:
  GpuMeter() = default;
  std::unique_ptr<Library> m_nvml;
  void* m_device = nullptr;  // nvmlDevice_t
  std::string m_energy_why_not;
};

// The CPU packages (and their DRAM, where RAPL has a zone for it) through
// /sys/class/powercap/intel-rapl:* (AMD's as well); PORTALAB_POWERCAP_ROOT
// replaces /sys/class/powercap (the tests' fake).
class CpuMeter {
 public:
  // nullptr, with why_not, when no zone can be read.
  static std::unique_ptr<CpuMeter> open(std::string& why_not);
  static std::unique_ptr<CpuMeter> open(const std::string& root, std::string& why_not);
  // Joules since open, summed over the zones; a counter that passed its
  // max_energy_range_uj since the last read is counted as wrapped once.
  // Empty when a zone stopped being readable.
  std::optional<double> energy_j();
  // "intel-rapl:0 package-0", ...
  const std::vector<std::string>& zones() const { return m_names; }

 private:
  struct Zone {
    std::string file;
    std::uint64_t range_uj = 0, last_uj = 0;
  };
  std::vector<Zone> m_zones;
  std::vector<std::string> m_names;
  double m_joules = 0;
};

// The meters a run reads, each with the reason where it has none.
struct EnergyMeters {
  std::unique_ptr<GpuMeter> gpu;
  std::unique_ptr<CpuMeter> cpu;
  std::string gpu_why_not, cpu_why_not;

  // This rank's: the GPU of `device` (rank_provenance()'s "device", with
  // "uuid" and "pci_bus_id"; null in a build without a GPU space) and the CPU.
  static EnergyMeters open(const nlohmann::json& device);
  // What the provenance records: each GPU's settings, the CPU zones, or why not.
  nlohmann::json describe() const;
  // One line for the console: what is read, and why not where nothing is.
  std::string summary() const;
};

// One source's figures over an entry's timed repetitions.
struct SourceEnergy {
  std::string not_available;         // set: nothing measured, and why
  double joules = 0;                 // all the timed repetitions together
  double joules_per_rep = 0;         // median over the repetitions
  double kernel_joules_per_rep = 0;  // median of the kernel phase alone
  double kernel_joules = 0;          // the kernel phases together
  double seconds = 0;                // the repetitions' windows together
  double mean_power_w = 0;           // joules / seconds
  int reps = 0;
  int reps_counted = 0;  // repetitions over which the counter moved (a coarse counter: few)

  bool measured() const { return not_available.empty() && reps > 0; }
};

// The figures of one entry: its GPU's and its CPU's energy, the GPU's clocks
// sampled after each repetition, and the wall-clock window of the timed
// repetitions (to compare with an outside sampler such as nvidia-smi).
struct EntryEnergy {
  SourceEnergy gpu, cpu;
  bool gpu_read = false;  // a device row: its GPU was read (host rows read the CPU alone)
  std::optional<double> sm_mhz, mem_mhz, power_w;  // medians of the samples
  std::optional<double> temperature_c;             // the highest
  std::vector<std::string> reasons;                // every clock-event reason seen
  bool throttled = false;                          // a reason that holds clocks down was seen
  double start_unix_s = 0, end_unix_s = 0;
  double gflop_per_j = 0, gb_per_j = 0;  // the row's own side's (GPU for device rows)

  // The row's own side: the GPU's for a device row, else the CPU's.
  const SourceEnergy& own() const { return gpu_read ? gpu : cpu; }
  // Derived rates from the row's work per repetition.
  void derive(double flops, double bytes);
};
nlohmann::json to_json(const EntryEnergy& e);
EntryEnergy entry_energy_from_json(const nlohmann::json& j);

// Several ranks' figures as one row's: the energies summed over the GPUs
// (by UUID) and CPUs (by host) the ranks ran on, each counted once; clocks
// the slowest; reasons every rank's. `hosts`, `devices`: each rank's.
EntryEnergy sum_over_ranks(const std::vector<EntryEnergy>& ranks,
                           const std::vector<std::string>& hosts,
                           const std::vector<std::string>& devices);

// Reads the meters over an entry's timed repetitions, outside its timed
// regions. The CPU's counters are read in line, at the phases' edges, after
// the fence that ends a phase and before the next phase's timer starts. The
// GPU is read by a thread of its own while the repetitions run back to back:
// read in line (milliseconds a read) the queries spaced the repetitions, and
// a GPU at its power cap then ran each one faster than with --energy off
// (docs/performance.md, "Energy"). The phases' GPU
// joules are the sampled counter interpolated at their edges; the window's
// run from a read just before the first repetition to one just after the
// last.
class EnergyLog {
 public:
  // gpu: read the GPU too (a device row). interleaved: other rows'
  // repetitions run between this one's, so its joules are the sum over its
  // own repetitions rather than the counters' move over its whole window.
  EnergyLog(EnergyMeters& meters, bool gpu, bool interleaved = false);
  ~EnergyLog();  // stops the sampler
  EnergyLog(const EnergyLog&) = delete;
  EnergyLog& operator=(const EnergyLog&) = delete;

  void rep_start();     // before the repetition's first phase
  void kernel_start();  // after the copy in (where there is one)
  void kernel_end();
  void rep_end(bool copied_out);
  EntryEnergy finish();  // stops the sampler

  // How often the sampler reads the GPU's energy counter, and its clocks,
  // power, temperature and clock events (five NVML calls).
  static constexpr std::chrono::milliseconds energy_every{10}, state_every{50};

 private:
  using Clock = std::chrono::steady_clock;
  struct Reading {
    std::optional<double> cpu;
  };
  struct Span {
    Clock::time_point start, end;
  };
  struct GpuSample {
    Clock::time_point t;
    double joules;
  };
  Reading read();
  // The GPU's counter and the middle of the call that read it; a call longer
  // than `longest` gets time_point::min() (it cannot be placed in time).
  std::optional<GpuSample> timed_gpu_read(Clock::duration longest);
  void start_sampler();
  void stop_sampler();
  double gpu_joules_at(Clock::time_point t) const;  // interpolated between samples

  EnergyMeters& m_meters;
  bool m_device_row;  // the row's GPU is to be read
  bool m_gpu;         // ... and can be
  bool m_interleaved;
  // The CPU: a repetition's start is the last one's end, and without a copy
  // out its end is its kernel's.
  Reading m_rep_start, m_kernel_start, m_kernel_end, m_first, m_last;
  std::vector<double> m_cpu_rep, m_cpu_kernel, m_seconds;
  bool m_cpu_lost = false;
  Clock::time_point m_rep_started, m_kernel_started;
  std::vector<Span> m_rep_spans, m_kernel_spans;
  double m_start_unix_s = 0, m_end_unix_s = 0;
  // The GPU: written by the sampler until stop_sampler() joins it.
  struct Sampler;
  std::unique_ptr<Sampler> m_sampler;
  std::vector<GpuSample> m_gpu_samples;
  std::vector<GpuState> m_states;
  bool m_gpu_lost = false;
};

}  // namespace portalab
