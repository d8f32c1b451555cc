// The energy meters behind their one interface (miniapp/energy/energy.hpp), against
// a fake NVML (tests/energy/fake_nvml.cpp, PORTALAB_FAKE_NVML) and a fake
// powercap folder: no library, no energy counter, a counter that wraps, a
// throttle reason that flags the row; the rows, files, tables and crossover
// made from the figures.
#include "results/analysis.hpp"
#include "deck/deck.hpp"
#include "energy/energy.hpp"
#include "experiment/experiment.hpp"
#include "results/result.hpp"
#include "engine/runner.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace portalab {
namespace {

namespace fs = std::filesystem;

// Sets an environment variable for one test; the old value comes back after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (m_old)
      setenv(m_name, m_old->c_str(), 1);
    else
      unsetenv(m_name);
  }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

ScopedEnv fake_nvml() { return ScopedEnv("PORTALAB_NVML_LIBRARY", PORTALAB_FAKE_NVML); }

void write_sysfs(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text << "\n";
}

// A powercap folder: two packages, a core zone within the first (not
// counted: part of its package) and a DRAM zone (counted).
fs::path fake_powercap(const std::string& name) {
  const fs::path root = fs::temp_directory_path() / ("portalab_powercap_" + name);
  fs::remove_all(root);
  auto zone = [&](const std::string& dir, const std::string& zone_name, std::uint64_t uj) {
    write_sysfs(root / dir / "name", zone_name);
    write_sysfs(root / dir / "energy_uj", std::to_string(uj));
    write_sysfs(root / dir / "max_energy_range_uj", "1000000000");
  };
  zone("intel-rapl:0", "package-0", 100);
  zone("intel-rapl:0:0", "core", 100);
  zone("intel-rapl:0:1", "dram", 100);
  zone("intel-rapl:1", "package-1", 100);
  return root;
}

// Three repetitions, with copies or without, read as the runner reads them;
// each phase lasts phase_ms at least.
EntryEnergy three_reps(EnergyMeters& meters, bool gpu, bool copies = true, int phase_ms = 0) {
  EnergyLog log(meters, gpu);
  auto phase = [&] { std::this_thread::sleep_for(std::chrono::milliseconds(phase_ms)); };
  for (int i = 0; i < 3; ++i) {
    log.rep_start();
    if (copies) {
      phase();
      log.kernel_start();
    }
    phase();
    log.kernel_end();
    if (copies) phase();
    log.rep_end(copies);
  }
  return log.finish();
}

// A board drawing a constant power: its counter moves in step with time.
ScopedEnv watts(const char* w) { return ScopedEnv("FAKE_NVML_WATTS", w); }

TEST(Energy, WithoutTheLibraryTheGpuIsNotMeasuredAndSaysWhy) {
  ScopedEnv lib("PORTALAB_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  EnergyMeters meters = EnergyMeters::open(
      {{"uuid", "GPU-fake"}, {"pci_bus_id", "00000000:3b:00.0"}});
  EXPECT_EQ(meters.gpu, nullptr);
  EXPECT_NE(meters.gpu_why_not.find("NVML not loaded"), std::string::npos) << meters.gpu_why_not;
  EXPECT_NE(meters.gpu_why_not.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  // A device row says so, with no figure.
  const EntryEnergy e = three_reps(meters, /*gpu=*/true);
  EXPECT_TRUE(e.gpu_read);
  EXPECT_FALSE(e.gpu.measured());
  EXPECT_EQ(e.gpu.not_available, meters.gpu_why_not);
  EXPECT_EQ(e.gpu.joules, 0.0);
  EXPECT_EQ(to_json(e)["gpu"], nlohmann::json({{"not_available", meters.gpu_why_not}}));
}

TEST(Energy, ABuildWithoutAGpuSpaceNeverLoadsNvml) {
  ScopedEnv lib("PORTALAB_NVML_LIBRARY", PORTALAB_FAKE_NVML);
  const EnergyMeters meters = EnergyMeters::open(nlohmann::json());
  EXPECT_EQ(meters.gpu, nullptr);
  EXPECT_EQ(meters.gpu_why_not, "no GPU space in this build");
}

TEST(Energy, TheGpuIsFoundByUuidElseByPciBusId) {
  auto lib = fake_nvml();
  std::string why;
  EXPECT_NE(GpuMeter::open("GPU-fake", "", why), nullptr) << why;
  // CUDA writes the bus id in small letters, NVML in capitals.
  EXPECT_NE(GpuMeter::open("GPU-other", "00000000:3b:00.0", why), nullptr) << why;
  EXPECT_EQ(GpuMeter::open("GPU-other", "00000000:3c:00.0", why), nullptr);
  EXPECT_NE(why.find("NVML knows no GPU with UUID 'GPU-other'"), std::string::npos) << why;
  ScopedEnv init("FAKE_NVML_INIT", "fail");
  EXPECT_EQ(GpuMeter::open("GPU-fake", "", why), nullptr);
  EXPECT_NE(why.find("nvmlInit_v2 failed: Driver Not Loaded"), std::string::npos) << why;
}

// A counter that moves less often than a repetition lasts (an H100's, under
// 30 ms gemm repetitions; the test's inputs, not measured): many
// repetitions read 0 J, and the joules per
// repetition are all repetitions' joules over their number, never 0.
TEST(Energy, ACoarseCounterGivesTheMeanOfAllRepetitions) {
  auto lib = fake_nvml();
  auto power = watts("100");
  ScopedEnv update("FAKE_NVML_UPDATE_MS", "50");
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  ASSERT_NE(meters.gpu, nullptr) << meters.gpu_why_not;
  // Three 30 ms repetitions (set, not measured): a 90 ms window holds one move of the counter
  // at least (how much of it the interpolation gives depends on when the
  // sampler read: only that it is there is certain).
  const EntryEnergy e = three_reps(meters, true, true, 10);
  ASSERT_TRUE(e.gpu.measured()) << e.gpu.not_available;
  EXPECT_LE(e.gpu.reps_counted, e.gpu.reps);
  EXPECT_GT(e.gpu.joules, 0.0);
  EXPECT_DOUBLE_EQ(e.gpu.joules_per_rep, e.gpu.joules / 3);
  EXPECT_DOUBLE_EQ(e.gpu.kernel_joules_per_rep, e.gpu.kernel_joules / 3);
}

// The sampler's reads interpolated at the phases' edges: on a board drawing
// 200 W, joules are 200 W times the window, each kernel's a part of them.
TEST(Energy, TheGpuCounterGivesEachRepetitionsJoulesAndTheClocks) {
  auto lib = fake_nvml();
  auto power = watts("200");
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  ASSERT_NE(meters.gpu, nullptr) << meters.gpu_why_not;
  // 9 phases of 30 ms or more (set, not measured): long beside a sampler
  // thread the scheduler holds for a few ms between its read and its time
  // stamp on a loaded machine (10 ms phases came out 5.6% low on the 2-core
  // VM under a build).
  const EntryEnergy e = three_reps(meters, true, true, 30);
  ASSERT_TRUE(e.gpu.measured()) << e.gpu.not_available;
  EXPECT_GE(e.gpu.seconds, 0.270);
  EXPECT_NEAR(e.gpu.joules, 200 * e.gpu.seconds, 0.05 * 200 * e.gpu.seconds);
  EXPECT_NEAR(e.gpu.mean_power_w, 200.0, 10.0);
  EXPECT_DOUBLE_EQ(e.gpu.joules_per_rep, e.gpu.joules / 3);
  EXPECT_GE(e.gpu.kernel_joules,
            200 * 0.090 - 0.01);  // three kernels of 30 ms at least (not measured)
  EXPECT_LT(e.gpu.kernel_joules, e.gpu.joules);
  EXPECT_DOUBLE_EQ(e.gpu.kernel_joules_per_rep, e.gpu.kernel_joules / 3);
  EXPECT_EQ(e.gpu.reps, 3);
  EXPECT_EQ(e.gpu.reps_counted, 3);
  EXPECT_EQ(e.sm_mhz, 1980.0);
  EXPECT_EQ(e.mem_mhz, 2619.0);
  EXPECT_EQ(e.temperature_c, 55.0);
  EXPECT_EQ(e.power_w, 300.0);
  EXPECT_FALSE(e.throttled);
  EXPECT_TRUE(e.reasons.empty());
  EXPECT_GE(e.end_unix_s, e.start_unix_s);
  EXPECT_GT(e.start_unix_s, 1.7e9);  // wall-clock seconds, for nvidia-smi's samples
  // GFLOP/J from the kernel phase's joules: 2e9 FLOPs a repetition.
  EntryEnergy d = e;
  d.derive(2e9, 0);
  EXPECT_DOUBLE_EQ(d.gflop_per_j, 2.0 / e.gpu.kernel_joules_per_rep);
}

// A sampler read returned late (its thread suspended between the read and
// its time stamp) is not placed at the late time: the joules stay 200 W times
// the window. Placed late, its early count would lower the joules at every
// phase edge between the read and its return.
TEST(Energy, ASamplerReadReturnedLateIsNotPlacedLate) {
  auto lib = fake_nvml();
  auto power = watts("200");
  // The sampler's 6th read (one every energy_every) comes near the last
  // repetition's end, and returns after it.
  ScopedEnv stall_read("FAKE_NVML_STALL_READ", "6");
  ScopedEnv stall("FAKE_NVML_STALL_MS", "60");
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  ASSERT_NE(meters.gpu, nullptr) << meters.gpu_why_not;
  const EntryEnergy e = three_reps(meters, true, true, 10);
  ASSERT_TRUE(e.gpu.measured()) << e.gpu.not_available;
  EXPECT_NEAR(e.gpu.joules, 200 * e.gpu.seconds, 0.05 * 200 * e.gpu.seconds);
  EXPECT_NEAR(e.gpu.mean_power_w, 200.0, 10.0);
}

// Without copies the kernel is the repetition: its joules are the
// repetitions' (the gaps between them apart).
TEST(Energy, WithoutCopiesTheKernelsJoulesAreTheRepetitions) {
  auto lib = fake_nvml();
  auto power = watts("200");
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  ASSERT_NE(meters.gpu, nullptr) << meters.gpu_why_not;
  const EntryEnergy e = three_reps(meters, true, /*copies=*/false, 20);
  ASSERT_TRUE(e.gpu.measured()) << e.gpu.not_available;
  EXPECT_GE(e.gpu.joules, 200 * 0.060 - 0.01);
  EXPECT_NEAR(e.gpu.kernel_joules, e.gpu.joules, 0.05 * e.gpu.joules);
  EXPECT_LE(e.gpu.kernel_joules, e.gpu.joules + 1e-9);
  EXPECT_EQ(e.gpu.reps_counted, 3);
}

// A counter that stops answering while the repetitions run: no figure, and why.
TEST(Energy, ACounterLostDuringTheRepetitionsGivesNoFigure) {
  auto lib = fake_nvml();
  const fs::path lost = fs::temp_directory_path() / "portalab_fake_nvml_lost";
  fs::remove(lost);
  ScopedEnv lost_file("FAKE_NVML_LOST_FILE", lost.string());
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  ASSERT_NE(meters.gpu, nullptr) << meters.gpu_why_not;
  EnergyLog log(meters, true);
  log.rep_start();
  std::ofstream(lost) << "lost\n";
  std::this_thread::sleep_for(3 * EnergyLog::energy_every);
  log.kernel_end();
  log.rep_end(false);
  const EntryEnergy e = log.finish();
  fs::remove(lost);
  EXPECT_FALSE(e.gpu.measured());
  EXPECT_NE(e.gpu.not_available.find("Not Supported"), std::string::npos) << e.gpu.not_available;
  EXPECT_EQ(e.gpu.joules, 0.0);
}

TEST(Energy, ADeviceWithoutAnEnergyCounterKeepsItsClocks) {
  auto lib = fake_nvml();
  ScopedEnv unsupported("FAKE_NVML_ENERGY", "unsupported");
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  ASSERT_NE(meters.gpu, nullptr) << meters.gpu_why_not;
  const EntryEnergy e = three_reps(meters, true);
  EXPECT_FALSE(e.gpu.measured());
  EXPECT_NE(e.gpu.not_available.find("Not Supported"), std::string::npos) << e.gpu.not_available;
  EXPECT_NE(e.gpu.not_available.find("no energy counter"), std::string::npos);
  EXPECT_EQ(e.gpu.joules, 0.0);
  EXPECT_EQ(e.sm_mhz, 1980.0);
  // The provenance says it too.
  EXPECT_EQ(meters.describe()["gpu"]["energy_counter"], false);
}

TEST(Energy, TheProvenanceRecordsWhatBoundsTheGpusClocks) {
  auto lib = fake_nvml();
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  const nlohmann::json gpu = meters.describe()["gpu"];
  EXPECT_EQ(gpu["name"], "Fake H100");
  EXPECT_DOUBLE_EQ(gpu["power_limit_w"].get<double>(), 700.0);
  EXPECT_EQ(gpu["applications_sm_mhz"], 1755);
  EXPECT_EQ(gpu["applications_mem_mhz"], 2619);
  EXPECT_EQ(gpu["persistence_mode"], true);
  EXPECT_EQ(gpu["ecc"], true);
  EXPECT_EQ(gpu["energy_counter"], true);
  // What `portalab db fleet` sets beside its peers'.
  EXPECT_EQ(gpu["ecc_uncorrected_errors"], 0);
  EXPECT_EQ(gpu["pcie_link_width"], 16);
  EXPECT_EQ(gpu["pcie_link_max_width"], 16);
  EXPECT_EQ(gpu["pcie_link_generation"], 5);
}

TEST(Energy, AClockEventReasonThatHoldsClocksDownFlagsTheRow) {
  auto lib = fake_nvml();
  EnergyMeters meters = EnergyMeters::open({{"uuid", "GPU-fake"}});
  ASSERT_NE(meters.gpu, nullptr);
  {
    ScopedEnv idle("FAKE_NVML_REASONS", "0x1");  // idle: reported, not a flag
    const EntryEnergy e = three_reps(meters, true);
    EXPECT_EQ(e.reasons, std::vector<std::string>{"gpu_idle"});
    EXPECT_FALSE(e.throttled);
  }
  ScopedEnv cap("FAKE_NVML_REASONS", "0x44");  // software power cap, hardware thermal
  Result r;
  r.experiment = "gemm";
  r.variant = "vendor";
  r.space = "Cuda";
  r.dtype = "float64";
  r.n = 8192;
  r.reps = 3;
  r.status = Status::pass;
  auto power = watts("200");
  r.energy = three_reps(meters, true);
  EXPECT_EQ(r.energy->reasons, (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_TRUE(r.energy->throttled);
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["energy"]["throttled"], true);
  EXPECT_EQ(j["energy"]["clock_event_reasons"],
            nlohmann::json({"sw_power_cap", "hw_thermal_slowdown"}));
  const auto header = csv_header();
  const auto row = csv_row(r);
  const auto at = std::find(header.begin(), header.end(), "throttled") - header.begin();
  ASSERT_LT(at, static_cast<long>(row.size()));
  EXPECT_EQ(row[at], "true");
  const std::string table = format_table(std::vector<Result>{r}, "gemm");
  EXPECT_NE(table.find("THROTTLED Cuda vendor pageable: clocks held down (sw_power_cap, "
                       "hw_thermal_slowdown)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find(fmt::format("{:.4g} J/rep (GPU)", r.energy->gpu.joules_per_rep)),
            std::string::npos)
      << table;
}

TEST(Energy, RaplSumsThePackagesAndTheirDram) {
  const fs::path root = fake_powercap("sum");
  std::string why;
  auto cpu = CpuMeter::open(root.string(), why);
  ASSERT_NE(cpu, nullptr) << why;
  EXPECT_EQ(cpu->zones(), (std::vector<std::string>{"intel-rapl:0 package-0", "intel-rapl:0:1 dram",
                                                    "intel-rapl:1 package-1"}));
  write_sysfs(root / "intel-rapl:0" / "energy_uj", "1000100");    // +1 J
  write_sysfs(root / "intel-rapl:0:0" / "energy_uj", "9000100");  // core: part of package-0
  write_sysfs(root / "intel-rapl:0:1" / "energy_uj", "500100");   // +0.5 J
  write_sysfs(root / "intel-rapl:1" / "energy_uj", "2000100");    // +2 J
  EXPECT_NEAR(*cpu->energy_j(), 3.5, 1e-9);
  fs::remove_all(root);
}

TEST(Energy, ARaplCounterThatWrapsCountsFromItsRange) {
  const fs::path root = fake_powercap("wrap");
  write_sysfs(root / "intel-rapl:0" / "energy_uj", "999999900");  // 100 µJ before the end
  std::string why;
  auto cpu = CpuMeter::open(root.string(), why);
  ASSERT_NE(cpu, nullptr) << why;
  write_sysfs(root / "intel-rapl:0" / "energy_uj", "400");  // wrapped: 100 + 400 µJ
  EXPECT_NEAR(*cpu->energy_j(), 500e-6, 1e-12);
  write_sysfs(root / "intel-rapl:0" / "energy_uj", "1000400");  // then 1 J more
  EXPECT_NEAR(*cpu->energy_j(), 1.0005, 1e-12);
  fs::remove_all(root);
}

TEST(Energy, RaplThatCannotBeReadSaysWhy) {
  std::string why;
  EXPECT_EQ(CpuMeter::open("/nonexistent/powercap", why), nullptr);
  EXPECT_NE(why.find("no /nonexistent/powercap: this kernel exposes no powercap (RAPL)"),
            std::string::npos)
      << why;
  const fs::path root = fake_powercap("unreadable");
  fs::remove(root / "intel-rapl:1" / "energy_uj");
  fs::create_directories(root / "intel-rapl:1" / "energy_uj");  // no file to read
  EXPECT_EQ(CpuMeter::open(root.string(), why), nullptr);
  EXPECT_NE(why.find("cannot read " + (root / "intel-rapl:1" / "energy_uj").string()),
            std::string::npos)
      << why;
  for (const char* zone : {"intel-rapl:0", "intel-rapl:0:0", "intel-rapl:0:1", "intel-rapl:1"})
    fs::remove_all(root / zone);
  EXPECT_EQ(CpuMeter::open(root.string(), why), nullptr);
  EXPECT_NE(why.find("has no intel-rapl package zone"), std::string::npos) << why;
  fs::remove_all(root);
}

TEST(Energy, SeveralRanksCountEachGpuAndEachHostsCpuOnce) {
  EntryEnergy a;
  a.gpu_read = true;
  a.gpu = {"", 10, 5, 4, 20, 1, 10, 2, 2};
  a.cpu = {"", 6, 3, 2, 12, 1, 6, 2, 2};
  a.sm_mhz = 1980;
  EntryEnergy b = a;
  b.sm_mhz = 1500;  // the slower clock is the group's
  b.reasons = {"sw_power_cap"};
  b.throttled = true;
  // Ranks 0 and 1 on one host with their own GPUs, rank 2 sharing rank 1's.
  const EntryEnergy s = sum_over_ranks({a, b, a}, {"n1", "n1", "n1"}, {"GPU-0", "GPU-1", "GPU-1"});
  EXPECT_DOUBLE_EQ(s.gpu.joules, 20.0);
  EXPECT_DOUBLE_EQ(s.gpu.joules_per_rep, 10.0);
  EXPECT_DOUBLE_EQ(s.cpu.joules, 6.0);  // one host: its packages once
  EXPECT_EQ(s.sm_mhz, 1500.0);
  EXPECT_TRUE(s.throttled);
  EXPECT_EQ(s.reasons, std::vector<std::string>{"sw_power_cap"});
  // Two hosts: two CPUs.
  EXPECT_DOUBLE_EQ(sum_over_ranks({a, a}, {"n1", "n2"}, {"GPU-0", "GPU-0"}).cpu.joules, 12.0);
  // A rank without figures: the node has none.
  EntryEnergy none = a;
  none.gpu = {"NVML not loaded"};
  EXPECT_FALSE(sum_over_ranks({a, none}, {"n1", "n1"}, {"GPU-0", "GPU-1"}).gpu.measured());
}

// A row as the runner fills it: its own side's joules per repetition.
Result energy_row(const std::string& space, std::size_t n, double joules_per_rep,
                  double kernel_joules_per_rep, CopyMode copies = CopyMode::pageable) {
  Result r;
  r.experiment = "vector_poly";
  r.variant = "fused";
  r.dtype = "float64";
  r.space = space;
  r.n = n;
  r.copies = copies;
  r.status = Status::pass;
  r.total.median = r.kernel.median = 1.0;
  EntryEnergy e;
  e.gpu_read = space == "Cuda";
  SourceEnergy& s = e.gpu_read ? e.gpu : e.cpu;
  s.reps = s.reps_counted = 4;
  s.joules = 4 * joules_per_rep;
  s.kernel_joules = 4 * kernel_joules_per_rep;
  r.energy = e;
  return r;
}

TEST(Energy, TheCrossoverInJoulesIsTheSmallestSizeTheGpuTakesFewer) {
  const std::vector<Result> rows{
      energy_row("Serial", 1000, 1.0, 1.0), energy_row("OpenMP", 1000, 0.8, 0.8),
      energy_row("Cuda", 1000, 2.0, 0.5),   energy_row("Serial", 100000, 10, 10),
      energy_row("Cuda", 100000, 5.0, 1.0),
  };
  const auto found = find_crossovers(rows);
  ASSERT_EQ(found.size(), 1u);
  const Crossover& c = found.front();
  ASSERT_TRUE(c.energy_with_copies.measured);
  EXPECT_EQ(c.energy_with_copies.smallest_n, 100000u);   // 2 J against the host's best 0.8 J
  EXPECT_EQ(c.energy_without_copies.smallest_n, 1000u);  // 0.5 J
  EXPECT_TRUE(c.energy_without_copies.holds_above);
  const auto j = gpu_crossover_json(found);
  EXPECT_EQ(j[0]["energy_with_copies"]["smallest_n"], 100000);
  const std::string text = format_analysis(rows);
  EXPECT_NE(text.find("vector_poly fused float64 on Cuda, in joules (GPU against CPU): with "
                      "copies from n = 100000; without copies from n = 1000"),
            std::string::npos)
      << text;
  // Without the CPU's energy there is nothing to compare.
  std::vector<Result> gpu_only{rows[2], rows[4]};
  gpu_only.push_back(rows[0]);
  gpu_only.back().energy.reset();
  EXPECT_FALSE(find_crossovers(gpu_only).front().energy_with_copies.measured);
  EXPECT_EQ(format_analysis(gpu_only).find("in joules"), std::string::npos);
}

TEST(Energy, TheDeckKeySwitchesItOff) {
  const Deck on = parse_deck("[vector_poly]\n", "on.toml", catalog());
  EXPECT_TRUE(on.energy);
  const Deck off = parse_deck("energy = \"off\"\n[vector_poly]\n", "off.toml", catalog());
  EXPECT_FALSE(off.energy);
  try {
    parse_deck("energy = \"maybe\"\n[vector_poly]\n", "bad.toml", catalog());
    FAIL() << "energy = \"maybe\" accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.toml:1"), std::string::npos) << e.what();
  }
}

// Through the runner: a host row reads the CPU (the fake powercap) around
// each repetition and its files carry the figures; with no meters, none.
TEST(Energy, TheRunnerFillsEachRowsEnergy) {
  const fs::path root = fake_powercap("runner");
  ScopedEnv powercap("PORTALAB_POWERCAP_ROOT", root.string());
  EnergyMeters meters = EnergyMeters::open(nlohmann::json());
  ASSERT_NE(meters.cpu, nullptr) << meters.cpu_why_not;
  const Deck deck = parse_deck(
      "reps = 3\nwarmups = 0\nspaces = [\"Serial\"]\ncopies = "
      "[\"none\"]\ncalibrate = \"none\"\n[vector_poly]\nsizes = "
      "[100]\nvariants = [\"fused\"]\n",
      "energy.toml", catalog());
  RunOptions options;
  options.energy = &meters;
  const RunSummary with = run_deck(deck, options, nlohmann::json::object());
  ASSERT_EQ(with.results.size(), 1u);
  ASSERT_TRUE(with.results[0].energy.has_value());
  const EntryEnergy& e = *with.results[0].energy;
  EXPECT_FALSE(e.gpu_read);  // a host space reads its CPU alone
  EXPECT_TRUE(e.cpu.measured()) << e.cpu.not_available;
  EXPECT_EQ(e.cpu.reps, 3);
  EXPECT_EQ(e.cpu.joules, 0.0);  // the fake counters stand still: 0 J, not a made-up figure
  EXPECT_EQ(to_json(with.results[0])["energy"]["cpu"]["reps"], 3);
  options.energy = nullptr;
  const RunSummary without = run_deck(deck, options, nlohmann::json::object());
  EXPECT_FALSE(without.results[0].energy.has_value());
  EXPECT_TRUE(to_json(without.results[0])["energy"].is_null());
  fs::remove_all(root);
}

}  // namespace
}  // namespace portalab
