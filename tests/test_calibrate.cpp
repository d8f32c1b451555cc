// Calibration: every field present and sane (positive, finite) in every
// compiled host space, a file that reads back the same, and result rows
// compared with the limits. No speed is asserted.
#include "limits/calibrate.hpp"
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "libraries/host_blas.hpp"
#include "libraries/library_probe.hpp"
#include "engine/runner.hpp"
#include "platform/spaces.hpp"
#include "kernels/dot.hpp"
#include "kernels/range.hpp"

#include <KokkosKernels_config.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

std::vector<std::string> host_spaces() {
  std::vector<std::string> out;
  for (const auto& s : portalab::enabled_space_names())
    if (portalab::is_host_space(s)) out.push_back(s);
  return out;
}

// A calibration of every host space but the last (left unmeasured), each
// space's choices set by `set` (told whether it is the first).
template <class Set>
portalab::Calibration measured_but_the_last_host(Set set) {
  portalab::Calibration c;
  for (const auto& name : host_spaces()) {
    portalab::SpaceLimits s;
    s.space = name;
    set(s, c.spaces.empty());
    c.spaces.push_back(s);
  }
  c.spaces.pop_back();
  return c;
}

const portalab::Calibration& quick_calibration() {
  static const portalab::Calibration cal = [] {
    portalab::CalibrationOptions o;
    o.quick = true;
    return portalab::calibrate(host_spaces(), o);
  }();
  return cal;
}

bool sane(double v) { return std::isfinite(v) && v > 0; }

TEST(Calibrate, JsonHasEveryFieldWithSaneValues) {
  const auto j = portalab::to_json(quick_calibration());
  EXPECT_EQ(j["mode"], "quick");
  EXPECT_TRUE(sane(j["seconds"].get<double>()));
  ASSERT_EQ(j["spaces"].size(), host_spaces().size());
  for (const auto& s : j["spaces"]) {
    SCOPED_TRACE(s["space"].get<std::string>());
    EXPECT_TRUE(s["host"].get<bool>());
    for (const char* k : {"memory_gbps", "copy_kernel_gbps", "copy_deep_copy_gbps", "triad_gbps",
                          "read_gbps", "launch_us"})
      EXPECT_TRUE(sane(s[k].get<double>())) << k << " = " << s[k];
    EXPECT_GT(s["stream_bytes"].get<std::size_t>(), 0u);
    EXPECT_GT(s["gemm_n"].get<std::size_t>(), 0u);
    for (const char* dtype : {"float32", "float64"}) {
      EXPECT_TRUE(sane(s["gemm_gflops"][dtype].get<double>())) << dtype;
      EXPECT_FALSE(s["gemm_library"][dtype].get<std::string>().empty()) << dtype;
    }
    EXPECT_TRUE(s["transfers"].empty());  // a host space has nothing to transfer
    // Plain or streaming stores, chosen on this machine or said why not.
    ASSERT_TRUE(s.contains("stores"));
    const auto& stores = s["stores"];
    for (const char* key : {"choice", "copy_choice"})
      EXPECT_TRUE(stores[key] == "plain" || stores[key] == "streaming") << key << stores;
    EXPECT_FALSE(stores["why"].get<std::string>().empty());
    if (stores["probe_bytes"] == 0) {
      EXPECT_NE(stores["why"].get<std::string>().find("not measured"), std::string::npos);
    } else if (portalab::kernels::streaming_stores_compiled &&
               !std::getenv("PORTALAB_STREAMING_STORES")) {
      EXPECT_TRUE(sane(stores["triad_plain_gbps"].get<double>())) << stores;
      EXPECT_TRUE(sane(stores["triad_streaming_gbps"].get<double>())) << stores;
      EXPECT_TRUE(sane(stores["copy_plain_gbps"].get<double>())) << stores;
      EXPECT_TRUE(sane(stores["copy_streaming_gbps"].get<double>())) << stores;
      EXPECT_GE(stores["probe_bytes"].get<double>(), 2.0 * s["cache_bytes"].get<double>());
    }
  }
}

// Named as result rows name it: the library providing BLAS here
// ("OpenBLAS"), not Kokkos Kernels' TPL name "BLAS".
TEST(Calibrate, GemmLibraryIsReadFromTheRegionKokkosKernelsPushed) {
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  for (const auto& s : quick_calibration().spaces)
    if (s.host)
      EXPECT_EQ(s.gemm_library.at("float64"), portalab::vendor_library("BLAS")) << s.space;
#else
  GTEST_SKIP() << "Kokkos Kernels built without a BLAS TPL";
#endif
}

TEST(Calibrate, FileReadsBackTheSame) {
  const auto& cal = quick_calibration();
  const auto back = portalab::calibration_from_json(portalab::to_json(cal), "mem.json");
  EXPECT_EQ(portalab::to_json(back), portalab::to_json(cal));
  EXPECT_THROW(portalab::calibration_from_json(nlohmann::json{{"mode", "quick"}}, "bad.json"),
               portalab::InputError);
}

// The rows of a one-entry deck run against made-up limits, the same in every space.
std::vector<portalab::Result> rows_against(const std::string& entry,
                                           const portalab::SpaceLimits& limits) {
  const auto deck = portalab::parse_deck("reps = 2\nwarmups = 0\ncopies = \"none\"\n" + entry,
                                         "inline.toml", portalab::catalog());
  portalab::Calibration cal;
  for (const auto& s : portalab::enabled_space_names()) {
    cal.spaces.push_back(limits);
    cal.spaces.back().space = s;
  }
  portalab::RunOptions options;
  options.limits = &cal;
  return portalab::run_deck(deck, options, nlohmann::json::object()).results;
}

TEST(Calibrate, RowsAreComparedWithTheirSpacesLimit) {
  portalab::SpaceLimits lim;
  lim.copy_kernel_gbps = 10.0;
  lim.copy_deep_copy_gbps = 20.0;  // the best streaming rate is the limit
  lim.triad_gbps = 15.0;
  const auto rows = rows_against("[vector_poly]\nsizes = [1000]\nvariants = [\"fused\"]\n", lim);
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_EQ(r.limit.text(), "memory 20 GB/s");
    EXPECT_DOUBLE_EQ(r.pct_of_limit, r.gbps / 20.0);
    // The files hold the limit as data: its name, value and unit.
    auto j = portalab::to_json(r);
    // No ladder: no level; a row in a cache above 105% of the memory's
    // limit makes it suspect, and says why.
    EXPECT_EQ(j["limit"].contains("suspect"), r.pct_of_limit > 1.05);
    j["limit"].erase("suspect");
    EXPECT_EQ(j["limit"], (nlohmann::json{{"name", "memory"}, {"value", 20.0}, {"unit", "GB/s"}}));
    const auto header = portalab::csv_header();
    const auto row = portalab::csv_row(r);
    auto column = [&](const char* name) {
      const auto at = std::find(header.begin(), header.end(), name) - header.begin();
      return at < static_cast<long>(row.size()) ? row[at] : std::string("(no column)");
    };
    EXPECT_EQ(column("limit_name"), "memory");
    EXPECT_EQ(column("limit_value"), "20");
    EXPECT_EQ(column("limit_unit"), "GB/s");
    EXPECT_EQ(column("limit_copies"), "");
    EXPECT_EQ(column("limit"), "(no column)");
  }
}

// A limit re-measured (a row beyond the cache ran above it): the higher of
// each bandwidth is kept, what was measured is recorded, and the file reads
// it back.
TEST(Calibrate, RecheckKeepsTheHigherBandwidthsAndRecordsThem) {
  portalab::Calibration cal = quick_calibration();
  auto& s = cal.spaces.front();
  s.copy_kernel_gbps = s.copy_deep_copy_gbps = s.triad_gbps = s.read_gbps = 1e-3;
  const double high_launch = s.launch_us;
  const auto& r = portalab::recheck_bandwidth(cal, s.space, "stream_copy kernel float64 n=9", 1.5,
                                              "memory");
  EXPECT_EQ(r.after, "stream_copy kernel float64 n=9");
  EXPECT_DOUBLE_EQ(r.row_pct, 1.5);
  EXPECT_DOUBLE_EQ(r.limit_before, 1e-3);
  for (double v : {r.copy_kernel_gbps, r.copy_deep_copy_gbps, r.triad_gbps, r.read_gbps, r.seconds})
    EXPECT_TRUE(sane(v)) << v;
  EXPECT_DOUBLE_EQ(s.copy_kernel_gbps, r.copy_kernel_gbps);
  EXPECT_DOUBLE_EQ(s.read_gbps, r.read_gbps);
  EXPECT_DOUBLE_EQ(s.launch_us, high_launch);  // only the bandwidths are measured again
  ASSERT_EQ(s.rechecks.size(), 1u);
  EXPECT_NE(portalab::format_calibration(cal).find("memory limit re-measured after stream_copy"),
            std::string::npos);
  // A limit already higher than the measurement stays.
  s.read_gbps = 1e9;
  portalab::recheck_bandwidth(cal, s.space, "dot native float64 n=9", 1.2, "read");
  EXPECT_DOUBLE_EQ(s.read_gbps, 1e9);
  EXPECT_EQ(s.rechecks.size(), 2u);
  const auto back = portalab::calibration_from_json(portalab::to_json(cal), "mem.json");
  EXPECT_EQ(portalab::to_json(back), portalab::to_json(cal));
  // What cannot be measured again says why.
  EXPECT_THROW(portalab::recheck_bandwidth(cal, "NoSuchSpace", "x", 2.0, "memory"),
               std::runtime_error);
  cal.spaces.push_back(s);
  cal.spaces.back().space = "NoSuchSpace";
  EXPECT_THROW(portalab::recheck_bandwidth(cal, "NoSuchSpace", "x", 2.0, "memory"),
               portalab::InputError);
}

// A run whose row beyond the cache outruns its memory limit re-measures the
// space's bandwidths and holds its rows to them; off, or where the space
// cannot be measured, the limits stay and the run goes on.
TEST(Calibrate, RunReMeasuresALimitARowBeyondTheCacheOutran) {
  const auto deck = portalab::parse_deck(
      "reps = 2\nwarmups = 0\ncopies = \"none\"\ncalibrate = \"none\"\nspaces = [\"Serial\"]\n"
      "[stream_copy]\nsizes = [100000]\nvariants = [\"kernel\"]\n",
      "inline.toml", portalab::catalog());
  auto run = [&](portalab::Calibration& cal, bool recheck) {
    portalab::RunOptions options;
    options.limits = &cal;
    options.recheck_limits = recheck;
    return portalab::run_deck(deck, options, nlohmann::json::object());
  };
  auto low_limits = [](std::size_t stream_bytes) {
    portalab::Calibration cal;
    cal.mode = "quick";
    portalab::SpaceLimits lim;
    lim.space = "Serial";
    lim.copy_kernel_gbps = lim.copy_deep_copy_gbps = lim.triad_gbps = lim.read_gbps = 1e-6;
    lim.cache_bytes = 1;  // every row is beyond it
    lim.stream_bytes = stream_bytes;
    cal.spaces.push_back(lim);
    return cal;
  };
  {
    auto cal = low_limits(1 << 20);
    const auto summary = run(cal, true);
    ASSERT_EQ(summary.results.size(), 1u);
    const auto& r = summary.results.front();
    ASSERT_EQ(summary.limits_rechecked.size(), 1u);
    const auto& done = summary.limits_rechecked.front();
    EXPECT_EQ(done["space"], "Serial");
    EXPECT_EQ(done["after"], "stream_copy kernel float64 n=100000");
    EXPECT_EQ(done["limit"], "memory");
    EXPECT_FALSE(done.contains("error")) << done;
    EXPECT_TRUE(r.limit.beyond_cache);
    EXPECT_GT(r.limit.value, 1e-6);
    EXPECT_DOUBLE_EQ(r.limit.value, cal.find("Serial")->memory_gbps());
    EXPECT_DOUBLE_EQ(r.pct_of_limit, r.gbps / r.limit.value);
    EXPECT_EQ(summary.to_json()["limits_rechecked"], summary.limits_rechecked);
  }
  {
    auto cal = low_limits(1 << 20);
    const auto summary = run(cal, false);
    EXPECT_TRUE(summary.limits_rechecked.empty());
    EXPECT_DOUBLE_EQ(summary.results.front().limit.value, 1e-6);
  }
  {
    auto cal = low_limits(0);  // no size to measure at: said, and the run goes on
    const auto summary = run(cal, true);
    ASSERT_EQ(summary.limits_rechecked.size(), 1u);
    EXPECT_TRUE(summary.limits_rechecked.front().contains("error"));
    EXPECT_EQ(summary.results.front().status, portalab::Status::pass);
    EXPECT_DOUBLE_EQ(summary.results.front().limit.value, 1e-6);
  }
}

// Limits of transfers name their copy mode; a row without a limit has null.
TEST(Calibrate, LimitsAreDataInTheFiles) {
  portalab::Limit duplex{portalab::Bound::transfer, 110.0, portalab::CopyMode::pinned};
  EXPECT_EQ(duplex.text(), "duplex pinned copies 110 GB/s");
  EXPECT_EQ(duplex.to_json(), (nlohmann::json{{"name", "duplex"},
                                              {"value", 110.0},
                                              {"unit", "GB/s"},
                                              {"copies", "pinned"}}));
  portalab::Limit gemm{portalab::Bound::compute, 51000.0, portalab::CopyMode::none};
  EXPECT_EQ(gemm.to_json(),
            (nlohmann::json{{"name", "gemm"}, {"value", 51000.0}, {"unit", "GFLOP/s"}}));
  EXPECT_TRUE(portalab::Limit{}.to_json().is_null());
  portalab::Result r;
  r.parameters = {{"chunks", 16}, {"degree", 2000}};
  r.set_metric("overlap", 0.25);
  const auto j = portalab::to_json(r);
  EXPECT_TRUE(j["limit"].is_null());
  EXPECT_EQ(j["parameters"], (nlohmann::json{{"chunks", 16}, {"degree", 2000}}));
  EXPECT_EQ(j["metrics"], (nlohmann::json{{"overlap", 0.25}}));
}

// Unsteady limits are named by their field, with the type or size measured.
TEST(Calibrate, UnsteadyLimitsAreDataInTheFile) {
  portalab::Calibration cal;
  cal.mode = "quick";
  portalab::SpaceLimits s;
  s.space = "Serial";
  s.unsteady = {{"gemm_gflops", 100, 50, 3, "float32", 0},
                {"h2d_pinned_gbps", 20, 10, 5, "", 1u << 20},
                {"launch_us", 2, 4, 3, "", 0}};
  cal.spaces.push_back(s);
  const auto j = portalab::to_json(cal)["spaces"][0]["unsteady"];
  EXPECT_EQ(j[0], (nlohmann::json{{"limit", "gemm_gflops"},
                                  {"unit", "GFLOP/s"},
                                  {"dtype", "float32"},
                                  {"fastest", 100.0},
                                  {"slowest", 50.0},
                                  {"repetitions", 3}}));
  EXPECT_EQ(j[1]["bytes"], 1u << 20);
  EXPECT_EQ(j[1]["unit"], "GB/s");
  EXPECT_FALSE(j[1].contains("dtype"));
  EXPECT_EQ(j[2]["unit"], "us");
  EXPECT_EQ(s.unsteady[1].text(), "h2d_pinned_gbps at 1048576 bytes");
  const auto back = portalab::calibration_from_json(portalab::to_json(cal), "mem.json");
  EXPECT_EQ(portalab::to_json(back), portalab::to_json(cal));
}

// A kernel that only reads (dot) is held to the read bandwidth, and to the
// memory limit where a calibration file has none (written before it was).
TEST(Calibrate, ReadOnlyRowsAreComparedWithTheReadLimit) {
  for (const double read : {30.0, 0.0}) {
    portalab::SpaceLimits lim;
    lim.copy_kernel_gbps = lim.copy_deep_copy_gbps = lim.triad_gbps = 20.0;
    lim.read_gbps = read;
    const auto rows = rows_against("[dot]\nsizes = [1000]\nvariants = [\"native\"]\n", lim);
    ASSERT_FALSE(rows.empty());
    for (const auto& r : rows) {
      EXPECT_EQ(r.limit.text(), read > 0 ? "read 30 GB/s" : "read 20 GB/s");
      EXPECT_DOUBLE_EQ(r.pct_of_limit, r.gbps / (read > 0 ? read : 20.0));
    }
  }
}

// STREAM's rule (each array 4x the last-level cache) broken: the table says
// the bandwidths may have come from the cache.
TEST(Calibrate, LimitsTableSaysWhenArraysMayFitInTheCache) {
  portalab::Calibration c;
  c.mode = "quick";
  portalab::SpaceLimits s;
  s.space = "OpenMP";
  s.host = true;
  s.cache_bytes = 300'000'000;
  s.stream_bytes = 67'108'864;
  c.spaces.push_back(s);
  const std::string said = "OpenMP bandwidths on arrays of 67 MB, less than 4x the 300 MB";
  EXPECT_NE(portalab::format_calibration(c).find(said), std::string::npos)
      << portalab::format_calibration(c);
  c.spaces[0].stream_bytes = 1'200'000'000;
  EXPECT_EQ(portalab::format_calibration(c).find("less than 4x"), std::string::npos);
}

// What the calibration chose is each host space's policy (what its loops
// then do); a space it did not measure, or no calibration, keeps plain
// stores; the environment overrides both; an unknown value is refused by
// name.
TEST(Calibrate, HostStoresFollowTheCalibrationOrTheEnvironment) {
  const char* was = std::getenv("PORTALAB_STREAMING_STORES");
  const std::string saved = was ? was : "";
  unsetenv("PORTALAB_STREAMING_STORES");
  const auto hosts = host_spaces();
  // The first host space streams in its loops, the others in their copies.
  const auto c = measured_but_the_last_host([](portalab::SpaceLimits& s, bool first) {
    s.stores = first ? "streaming" : "plain";
    s.copy_stores = first ? "plain" : "streaming";
    s.stores_why = "made up";
  });
  auto stores_of = [](const nlohmann::json& applied, const std::string& space,
                      const char* what = "stores") {
    return applied.at(space).at(what).get<std::string>();
  };
  const bool compiled = portalab::kernels::streaming_stores_compiled;
  auto policies = portalab::host_policies(&c);
  auto applied = policies.described;
  ASSERT_EQ(applied.size(), hosts.size());
  ASSERT_EQ(policies.by_space.size(), hosts.size());
  EXPECT_EQ(stores_of(applied, hosts.front()),
            hosts.size() > 1 && compiled ? "streaming" : "plain");
  EXPECT_EQ(stores_of(applied, hosts.front(), "copy_stores"), "plain");
  if (hosts.size() > 2)
    EXPECT_EQ(stores_of(applied, hosts[1], "copy_stores"), compiled ? "streaming" : "plain");
  EXPECT_EQ(stores_of(applied, hosts.back()), "plain");
  EXPECT_EQ(stores_of(applied, hosts.back(), "copy_stores"), "plain");
  EXPECT_EQ(applied.at(hosts.back()).at("why"), "the calibration did not measure them");
  // The policy the kernels get says what the provenance says.
  for (const auto& name : hosts) {
    const auto p = policies.of(name);
    EXPECT_EQ(p, portalab::host_policy_of(c.find(name))) << name;
    EXPECT_EQ(p.streaming_from >= 0, stores_of(applied, name) == "streaming") << name;
    EXPECT_EQ(p.copy_streaming_from >= 0, stores_of(applied, name, "copy_stores") == "streaming")
        << name;
  }
  EXPECT_EQ(policies.of("Cuda"), portalab::kernels::HostPolicy{});  // a device's: none
  policies = portalab::host_policies(nullptr);
  applied = policies.described;
  for (const auto& name : hosts) {
    EXPECT_EQ(policies.of(name), portalab::kernels::HostPolicy{}) << name;
    EXPECT_EQ(stores_of(applied, name), "plain") << name;
    EXPECT_EQ(stores_of(applied, name, "copy_stores"), "plain") << name;
  }

  setenv("PORTALAB_STREAMING_STORES", "1", 1);
  applied = portalab::host_policies(&c).described;
  for (const auto& name : hosts) {
    EXPECT_EQ(stores_of(applied, name), compiled ? "streaming" : "plain") << name;
    EXPECT_EQ(stores_of(applied, name, "copy_stores"), compiled ? "streaming" : "plain") << name;
    EXPECT_EQ(applied.at(name).at("why"), "PORTALAB_STREAMING_STORES=1");
  }
  setenv("PORTALAB_STREAMING_STORES", "yes", 1);
  try {
    portalab::host_policies(&c);
    ADD_FAILURE() << "PORTALAB_STREAMING_STORES=yes accepted";
  } catch (const portalab::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("PORTALAB_STREAMING_STORES=yes: expected 0"),
              std::string::npos)
        << e.what();
  }
  if (was)
    setenv("PORTALAB_STREAMING_STORES", saved.c_str(), 1);
  else
    unsetenv("PORTALAB_STREAMING_STORES");
}

// A calibration file's stores come back as written; a choice it cannot
// mean is refused naming the file.
TEST(Calibrate, FileWithAnUnknownStoresChoiceIsRefused) {
  auto j = portalab::to_json(quick_calibration());
  ASSERT_TRUE(j["spaces"][0].contains("stores"));
  const auto back = portalab::calibration_from_json(j, "limits.json");
  const auto& written = j["spaces"][0]["stores"];
  EXPECT_EQ(back.spaces[0].stores, written["choice"].get<std::string>());
  EXPECT_EQ(back.spaces[0].copy_stores, written["copy_choice"].get<std::string>());
  EXPECT_EQ(back.spaces[0].copy_plain_gbps, written["copy_plain_gbps"].get<double>());
  for (const char* key : {"choice", "copy_choice"}) {
    auto bad = j;
    bad["spaces"][0]["stores"][key] = "sometimes";
    try {
      portalab::calibration_from_json(bad, "limits.json");
      ADD_FAILURE() << "stores." << key << " \"sometimes\" accepted";
    } catch (const portalab::InputError& e) {
      EXPECT_NE(std::string(e.what()).find("limits.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string("stores.") + key + " is \"sometimes\""),
                std::string::npos)
          << e.what();
    }
  }
}

// The float64 dot's choice (one chain or vector sums) comes back as
// written, a choice it cannot mean is refused naming the file, and it is
// the policy each host space's dot then gets.
TEST(Calibrate, DotReadsComeBackAndAreApplied) {
  auto j = portalab::to_json(quick_calibration());
  ASSERT_TRUE(j["spaces"][0].contains("dot_reads"));
  const auto& written = j["spaces"][0]["dot_reads"];
  const auto back = portalab::calibration_from_json(j, "limits.json");
  EXPECT_EQ(back.spaces[0].dot_reads, written["choice"].get<std::string>());
  EXPECT_EQ(back.spaces[0].dot_chain_gbps, written["chain_gbps"].get<double>());
  EXPECT_GT(back.spaces[0].dot_vectors_gbps, 0.0);
  auto bad = j;
  bad["spaces"][0]["dot_reads"]["choice"] = "sometimes";
  try {
    portalab::calibration_from_json(bad, "limits.json");
    ADD_FAILURE() << "dot_reads.choice \"sometimes\" accepted";
  } catch (const portalab::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("limits.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dot_reads.choice is \"sometimes\""), std::string::npos)
        << e.what();
  }

  // The first host space in one chain, the others as measured or not at all.
  const auto hosts = host_spaces();
  const auto c = measured_but_the_last_host(
      [](portalab::SpaceLimits& s, bool first) { s.dot_reads = first ? "chain" : "vectors"; });
  const auto policies = portalab::host_policies(&c);
  for (const auto& name : hosts) {
    const bool chain = policies.of(name).dot_chain_from >= 0;
    EXPECT_EQ(chain, name == hosts.front() && hosts.size() > 1) << name;
    EXPECT_EQ(policies.described.at(name).at("dot_reads"), chain ? "chain" : "vectors") << name;
  }
}

TEST(HostBlas, KnowsTheVectorWidthOfOpenBlasKernels) {
  EXPECT_EQ(portalab::openblas_core_vector_bits("Prescott"), 128);
  EXPECT_EQ(portalab::openblas_core_vector_bits("Haswell"), 256);
  EXPECT_EQ(portalab::openblas_core_vector_bits("Cooperlake"), 512);
  EXPECT_EQ(portalab::openblas_core_vector_bits("SkylakeX"), 512);
  EXPECT_EQ(portalab::openblas_core_vector_bits("armv8"), 0);  // unknown: no warning
}

TEST(HostBlas, WarnsOfKernelsNarrowerThanTheCpuNamingOpenBlasCoretype) {
  portalab::HostBlasKernels k;
  k.library = "OpenBLAS 0.3.21";
  k.core = "Prescott";
  k.core_vector_bits = 128;
  k.cpu_vector_bits = 512;
  const auto fallback = portalab::narrow_kernels_warning(k, nullptr);
  EXPECT_NE(fallback.find("generic fallback"), std::string::npos) << fallback;
  EXPECT_NE(fallback.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos) << fallback;
  EXPECT_NE(
      portalab::narrow_kernels_warning(k, "Prescott").find("OPENBLAS_CORETYPE=Prescott is set"),
      std::string::npos);
  k.cpu_vector_bits = 256;
  EXPECT_NE(portalab::narrow_kernels_warning(k, nullptr).find("OPENBLAS_CORETYPE=Haswell"),
            std::string::npos);
  k.core = "Haswell";
  k.core_vector_bits = 256;
  EXPECT_EQ(portalab::narrow_kernels_warning(k, nullptr), "");  // as wide as the CPU
  k.core_vector_bits = 0;
  EXPECT_EQ(portalab::narrow_kernels_warning(k, nullptr), "");  // unknown kernels
}

// The BLAS this binary linked is read at run time: OpenBLAS names its kernels.
TEST(HostBlas, ReadsTheLinkedLibrarysKernels) {
  const auto& k = portalab::host_blas_kernels();
  if (portalab::vendor_library("BLAS") != "OpenBLAS") GTEST_SKIP() << "not OpenBLAS";
  EXPECT_EQ(k.library.rfind("OpenBLAS", 0), 0u) << k.library;
  EXPECT_FALSE(k.core.empty());
  EXPECT_NE(k.describe().find(k.core), std::string::npos);
  EXPECT_EQ(portalab::to_json(k)["core"], k.core);
}

}  // namespace
