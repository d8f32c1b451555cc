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
  }
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
