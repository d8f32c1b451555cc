// Calibration: every field present and sane (positive, finite) in every
// compiled host space, a file that reads back the same, and result rows
// compared with the limits. No speed is asserted.
#include "limits/calibrate.hpp"
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "platform/host_blas.hpp"
#include "platform/library_probe.hpp"
#include "run/runner.hpp"
#include "platform/spaces.hpp"

#include <KokkosKernels_config.h>
#include <gtest/gtest.h>

#include <cmath>

namespace {

std::vector<std::string> host_spaces() {
  std::vector<std::string> out;
  for (const auto& s : portalab::enabled_space_names())
    if (portalab::is_host_space(s)) out.push_back(s);
  return out;
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
  }
}

// Named as result rows name it: the library providing BLAS here
// ("OpenBLAS"), not Kokkos Kernels' TPL name "BLAS".
TEST(Calibrate, GemmLibraryIsReadFromTheRegionKokkosKernelsPushed) {
#if defined(KOKKOSKERNELS_ENABLE_TPL_BLAS)
  for (const auto& s : quick_calibration().spaces)
    if (s.host) EXPECT_EQ(s.gemm_library.at("float64"), portalab::vendor_library("BLAS")) << s.space;
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
  const auto deck = portalab::parse_deck(
      "reps = 2\nwarmups = 0\ncopies = \"none\"\n" + entry, "inline.toml", portalab::catalog());
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
    const auto j = portalab::to_json(r);
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

// Limits of transfers name their copy mode; a row without a limit has null.
TEST(Calibrate, LimitsAreDataInTheFiles) {
  portalab::Limit duplex{portalab::Bound::transfer, 110.0, portalab::CopyMode::pinned};
  EXPECT_EQ(duplex.text(), "duplex pinned copies 110 GB/s");
  EXPECT_EQ(duplex.to_json(), (nlohmann::json{{"name", "duplex"}, {"value", 110.0},
                                              {"unit", "GB/s"}, {"copies", "pinned"}}));
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
  EXPECT_EQ(j[0], (nlohmann::json{{"limit", "gemm_gflops"}, {"unit", "GFLOP/s"}, {"dtype", "float32"},
                                  {"fastest", 100.0}, {"slowest", 50.0}, {"repetitions", 3}}));
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
  EXPECT_NE(portalab::narrow_kernels_warning(k, "Prescott").find("OPENBLAS_CORETYPE=Prescott is set"),
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
