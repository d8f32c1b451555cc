// The run's conclusions from synthetic rows: where a device space starts to
// beat the best host space, with and without copies, and float64/float32.
#include "results/analysis.hpp"
#include "platform/spaces.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using portalab::CopyMode;
using portalab::Result;
using portalab::Status;

// A passing row; "Cuda" counts as a device space whether compiled or not.
Result row(const std::string& space, std::size_t n, CopyMode copies, double kernel_ms,
           double total_ms, const std::string& dtype = "float32") {
  Result r;
  r.experiment = "squared_diff";
  r.variant = "fused";
  r.space = space;
  r.dtype = dtype;
  r.n = n;
  r.copies = copies;
  r.status = Status::pass;
  r.kernel.median = kernel_ms;
  r.total.median = total_ms;
  return r;
}

const std::string host = portalab::enabled_space_names().front();

TEST(Analysis, SmallestSizeWhereTheDeviceBeatsTheBestHostSpace) {
  std::vector<Result> rows;
  // Inputs, not measured. Host: 1, 10, 100 ms at n = 1e3, 1e4, 1e5. Device kernel alone wins from
  // 1e4; with copies it wins only at 1e5.
  for (auto [n, ms] : {std::pair{1000u, 1.0}, {10000u, 10.0}, {100000u, 100.0}})
    rows.push_back(row(host, n, CopyMode::none, ms, ms));
  rows.push_back(row("Cuda", 1000, CopyMode::pageable, 2.0, 5.0));
  rows.push_back(row("Cuda", 10000, CopyMode::pageable, 3.0, 20.0));
  rows.push_back(row("Cuda", 100000, CopyMode::pageable, 4.0, 50.0));
  const auto found = portalab::find_crossovers(rows);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].device, "Cuda");
  EXPECT_EQ(found[0].sizes, (std::vector<std::size_t>{1000, 10000, 100000}));
  ASSERT_TRUE(found[0].without_copies.smallest_n);
  EXPECT_EQ(*found[0].without_copies.smallest_n, 10000u);
  EXPECT_TRUE(found[0].without_copies.holds_above);
  ASSERT_TRUE(found[0].with_copies.smallest_n);
  EXPECT_EQ(*found[0].with_copies.smallest_n, 100000u);
  const auto json = portalab::gpu_crossover_json(found);
  EXPECT_EQ(json[0]["with_copies"]["smallest_n"], 100000);
  EXPECT_NE(portalab::format_analysis(rows).find("with copies from n = 100000"),
            std::string::npos)
      << portalab::format_analysis(rows);
}

// Rows may come from another build (a results file, a test): a host space this
// build lacks is still a host space, never a device to compare against.
TEST(Analysis, AHostSpaceThisBuildLacksIsStillAHost) {
  for (const char* name : {"Serial", "OpenMP", "Threads", "HPX"})
    EXPECT_TRUE(portalab::is_host_space(name)) << name;
  for (const char* name : {"Cuda", "HIP", "SYCL", "NoSuchSpace"})
    EXPECT_FALSE(portalab::is_host_space(name)) << name;
  std::vector<Result> rows{row("Serial", 1000, CopyMode::none, 1.0, 1.0),
                           row("OpenMP", 1000, CopyMode::none, 0.5, 0.5),
                           row("Threads", 1000, CopyMode::none, 0.7, 0.7),
                           row("Cuda", 1000, CopyMode::pageable, 0.6, 0.9)};
  const auto found = portalab::find_crossovers(rows);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].device, "Cuda");
  EXPECT_FALSE(found[0].without_copies.smallest_n);  // 0.6 ms against 0.5 (inputs, not measured)
}

TEST(Analysis, NeverInTheRangeAndNotMeasuredAreSaidSo) {
  std::vector<Result> rows{row(host, 1000, CopyMode::none, 1.0, 1.0),
                           row(host, 2000, CopyMode::none, 2.0, 2.0),
                           row("Cuda", 1000, CopyMode::none, 3.0, 3.0),
                           row("Cuda", 2000, CopyMode::none, 4.0, 4.0)};
  const auto found = portalab::find_crossovers(rows);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].without_copies.measured);
  EXPECT_FALSE(found[0].without_copies.smallest_n);
  EXPECT_FALSE(found[0].with_copies.measured);  // no copy mode ran on the device
  const std::string text = portalab::format_analysis(rows);
  EXPECT_NE(text.find("without copies never, n from 1000 to 2000"), std::string::npos) << text;
  EXPECT_NE(text.find("with copies not measured"), std::string::npos) << text;
}

TEST(Analysis, AFailedCheckIsNoTimeToCompare) {
  std::vector<Result> rows{row(host, 1000, CopyMode::none, 5.0, 5.0),
                           row("Cuda", 1000, CopyMode::none, 1.0, 1.0)};
  rows[1].status = Status::fail;
  EXPECT_TRUE(portalab::find_crossovers(rows).empty());
}

TEST(Analysis, Float64OverFloat32KernelTimePerSpaceAndSize) {
  std::vector<Result> rows{row(host, 1000, CopyMode::none, 1.0, 1.0, "float32"),
                           row(host, 1000, CopyMode::none, 2.5, 2.5, "float64"),
                           row("Cuda", 1000, CopyMode::none, 4.0, 4.0, "float32"),
                           row("Cuda", 1000, CopyMode::none, 3.0, 3.0, "float64"),
                           row("Cuda", 2000, CopyMode::none, 3.0, 3.0, "float64")};
  const auto ratios = portalab::find_dtype_ratios(rows);
  ASSERT_EQ(ratios.size(), 2u);  // n = 2000 has no float32 row
  EXPECT_EQ(ratios[0].space, host);
  EXPECT_DOUBLE_EQ(ratios[0].ratio, 2.5);
  EXPECT_EQ(ratios[1].space, "Cuda");
  EXPECT_DOUBLE_EQ(ratios[1].ratio, 0.75);
  EXPECT_EQ(portalab::dtype_ratios_json(ratios)[1]["kernel_ratio"], 0.75);
}

}  // namespace
