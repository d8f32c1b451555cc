// The run's conclusions from synthetic rows: where a device space starts to
// beat the best host space, with and without copies, and float64/float32.
#include "results/analysis.hpp"
#include "platform/spaces.hpp"

#include <gtest/gtest.h>

#include <cmath>
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
  EXPECT_NE(portalab::format_analysis(rows).find("with copies from n = 100000"), std::string::npos)
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

TEST(Analysis, EachCopyModeApartAndTheBestOfThem) {
  std::vector<Result> rows{row("Serial", 10, CopyMode::none, 4.0, 4.0),
                           row("OpenMP", 10, CopyMode::none, 2.0, 2.0),
                           row("Serial", 100, CopyMode::none, 30.0, 30.0),
                           row("OpenMP", 100, CopyMode::none, 20.0, 20.0),
                           // pageable pays at 100 only, pinned from 10
                           row("Cuda", 10, CopyMode::pageable, 1.0, 3.0),
                           row("Cuda", 100, CopyMode::pageable, 1.0, 10.0),
                           row("Cuda", 10, CopyMode::pinned, 1.0, 1.5),
                           row("Cuda", 100, CopyMode::pinned, 1.0, 9.0)};
  const auto found = portalab::find_crossovers(rows);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].with_pageable_copies.smallest_n, 100u);
  EXPECT_EQ(found[0].with_pinned_copies.smallest_n, 10u);
  EXPECT_EQ(found[0].with_copies.smallest_n, 10u);
  EXPECT_EQ(found[0].without_copies.smallest_n, 10u);
  const auto json = portalab::gpu_crossover_json(found);
  EXPECT_EQ(json[0]["with_pageable_copies"]["smallest_n"], 100);
  EXPECT_EQ(json[0]["with_pinned_copies"]["smallest_n"], 10);
  // Without pinned rows, that mode is not measured.
  rows.pop_back();
  rows.pop_back();
  EXPECT_FALSE(portalab::find_crossovers(rows)[0].with_pinned_copies.measured);
}

TEST(Analysis, KRanksAgainstOnePerCopyMode) {
  std::vector<Result> rows;
  for (auto copies : {CopyMode::pageable, CopyMode::pinned})
    for (auto [n, speedup] : {std::pair{1000u, 0.5}, {100000u, 1.5}}) {
      Result r = row("Cuda", n, copies, 1.0, 1.0);
      r.ranks = 2;
      r.set_metric("speedup_over_1_rank", copies == CopyMode::pinned ? 4 * speedup : speedup);
      rows.push_back(r);
    }
  const auto found = portalab::find_rank_crossovers(rows);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].copies, CopyMode::pageable);
  EXPECT_EQ(found[0].pays.smallest_n, 100000u);
  EXPECT_EQ(found[1].copies, CopyMode::pinned);
  EXPECT_EQ(found[1].pays.smallest_n, 1000u);
  const auto json = portalab::rank_crossover_json(found);
  EXPECT_EQ(json[1]["copies"], "pinned");
}

TEST(Analysis, SpeedupsAgainstTheBestHostSpaceAndParallelAgainstSerial) {
  std::vector<Result> rows{row("Serial", 10, CopyMode::none, 8.0, 8.0),
                           row("OpenMP", 10, CopyMode::none, 2.0, 4.0),
                           row("Serial", 100, CopyMode::none, 80.0, 80.0),
                           row("OpenMP", 100, CopyMode::none, 40.0, 40.0),
                           row("Cuda", 10, CopyMode::pageable, 1.0, 5.0),
                           row("Cuda", 10, CopyMode::pinned, 1.0, 2.0),
                           row("Cuda", 100, CopyMode::none, 0.5, 0.5)};
  const auto found = portalab::find_speedups(rows);
  ASSERT_EQ(found.size(), 2u);
  const auto& omp = found[0];
  EXPECT_EQ(omp.space, "OpenMP");
  EXPECT_EQ(omp.against, (std::vector<std::string>{"Serial"}));
  ASSERT_EQ(omp.sizes.size(), 2u);
  EXPECT_DOUBLE_EQ(*omp.sizes[0].total, 2.0);   // 8 / 4
  EXPECT_DOUBLE_EQ(*omp.sizes[0].kernel, 4.0);  // 8 / 2
  EXPECT_DOUBLE_EQ(*omp.sizes[1].total, 2.0);
  const auto& cuda = found[1];
  EXPECT_EQ(cuda.space, "Cuda");
  EXPECT_EQ(cuda.against, (std::vector<std::string>{"Serial", "OpenMP"}));
  ASSERT_EQ(cuda.sizes.size(), 2u);
  EXPECT_EQ(cuda.sizes[0].n, 10u);
  EXPECT_DOUBLE_EQ(*cuda.sizes[0].total, 2.0);   // OpenMP's 4 against pinned's 2
  EXPECT_DOUBLE_EQ(*cuda.sizes[0].kernel, 2.0);  // OpenMP's kernel 2 against 1
  EXPECT_FALSE(cuda.sizes[1].total);  // only copies "none" at n = 100: no total with copies
  EXPECT_DOUBLE_EQ(*cuda.sizes[1].kernel, 80.0);
  const auto json = portalab::speedups_json(found);
  EXPECT_TRUE(json[1]["sizes"][1]["total"].is_null());
  EXPECT_EQ(json[1]["sizes"][1]["kernel"], 80.0);
  // Serial alone has nothing to be set against.
  EXPECT_TRUE(portalab::find_speedups({rows[0], rows[2]}).empty());
}

TEST(Analysis, UnfusedOverFusedKernelTheBestOverCopyModes) {
  std::vector<Result> rows{row("Cuda", 10, CopyMode::pageable, 2.0, 5.0),
                           row("Cuda", 10, CopyMode::pinned, 1.0, 5.0),
                           row("Cuda", 10, CopyMode::pageable, 3.0, 6.0),
                           row("Cuda", 20, CopyMode::pageable, 3.0, 6.0)};
  rows[2].variant = rows[3].variant = "unfused";
  const auto found = portalab::find_fusion_ratios(rows);
  ASSERT_EQ(found.size(), 1u);  // n = 20 has no fused row
  EXPECT_EQ(found[0].n, 10u);
  EXPECT_DOUBLE_EQ(found[0].ratio, 3.0);  // 3 against the best fused, 1
  EXPECT_EQ(portalab::fusion_json(found)[0]["unfused_over_fused"], 3.0);
}

TEST(Analysis, TheSummaryHoldsEveryConclusion) {
  const auto j = portalab::analysis_json({row("Serial", 10, CopyMode::none, 8.0, 8.0)});
  for (const char* key : {"gpu_crossover", "multi_rank_crossover", "float64_over_float32",
                          "speedup_over_host", "fusion", "hockney"})
    EXPECT_TRUE(j.at(key).is_array()) << key;
  EXPECT_EQ(j.size(), 6u);
}

// Rows whose kernel times are Hockney's t = (n + n_half) / r_inf exactly:
// 16 bytes and 2 FLOPs per element, in `space`.
std::vector<Result> hockney_rows(const std::string& space, double r_inf, double n_half,
                                 std::vector<std::size_t> sizes) {
  std::vector<Result> rows;
  for (std::size_t n : sizes) {
    const double ms = 1e3 * (static_cast<double>(n) + n_half) / r_inf;
    rows.push_back(row(space, n, CopyMode::pinned, ms, 2 * ms));
    rows.back().bytes = 16.0 * static_cast<double>(n);
    rows.back().flops = 2.0 * static_cast<double>(n);
  }
  return rows;
}

TEST(Analysis, HockneysRateAndHalfSizeFromTheKernelMedians) {
  // Inputs, not measured: 5e9 elements/s reached half-way at n = 2e5.
  auto rows = hockney_rows("Cuda", 5e9, 2e5, {1000, 10000, 100000, 1000000, 100000000});
  // A slower copy mode at one size: the best kernel median is the one fitted.
  rows.push_back(rows[2]);
  rows.back().copies = CopyMode::pageable;
  rows.back().kernel.median *= 3;
  const auto found = portalab::fit_hockney(rows);
  ASSERT_EQ(found.size(), 1u);
  const auto& f = found[0];
  EXPECT_EQ(f.space, "Cuda");
  EXPECT_EQ(f.sizes, (std::vector<std::size_t>{1000, 10000, 100000, 1000000, 100000000}));
  EXPECT_NEAR(f.r_inf / 5e9, 1.0, 1e-9);
  EXPECT_NEAR(f.n_half / 2e5, 1.0, 1e-9);
  EXPECT_NEAR(f.r_inf_gbps, 80.0, 1e-6);  // 16 bytes an element
  EXPECT_NEAR(f.r_inf_gflops, 10.0, 1e-6);
  EXPECT_LT(f.rms_error, 1e-9);
  const auto j = portalab::hockney_json(found);
  EXPECT_EQ(j[0]["sizes"].size(), 5u);
  EXPECT_DOUBLE_EQ(j[0]["n_half"].get<double>(), f.n_half);
}

TEST(Analysis, HockneysFitSaysHowFarTheTimesAreFromIt) {
  // Every other time 10% above the model: the fit is off by some percent.
  auto rows = hockney_rows("Cuda", 1e9, 1e4, {1000, 10000, 100000, 1000000});
  rows[1].kernel.median *= 1.1;
  rows[3].kernel.median *= 1.1;
  const auto found = portalab::fit_hockney(rows);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_GT(found[0].rms_error, 0.02);
  EXPECT_LT(found[0].rms_error, 0.1);
}

TEST(Analysis, HockneysFitOnlyWhereItMeansSomething) {
  // Two sizes are no fit.
  EXPECT_TRUE(portalab::fit_hockney(hockney_rows("Cuda", 1e9, 1e4, {1000, 2000})).empty());
  // Work that is not the same per element (gemm's n^3): not a vector's model.
  auto cubic = hockney_rows("Cuda", 1e9, 1e4, {100, 200, 400});
  for (auto& r : cubic) r.flops = 2.0 * std::pow(static_cast<double>(r.n), 3);
  EXPECT_TRUE(portalab::fit_hockney(cubic).empty());
  // A time that does not grow with n has no rate.
  auto flat = hockney_rows("Cuda", 1e9, 1e4, {1000, 10000, 100000});
  for (auto& r : flat) r.kernel.median = 1.0;
  EXPECT_TRUE(portalab::fit_hockney(flat).empty());
  // A failed row is left out (two sizes remain).
  auto failed = hockney_rows("Cuda", 1e9, 1e4, {1000, 10000, 100000});
  failed[0].status = Status::fail;
  EXPECT_TRUE(portalab::fit_hockney(failed).empty());
  // Time that grows faster than n (a cache left): no negative start-up;
  // n_half is 0 and the rate the best through the origin.
  auto steep = hockney_rows("Cuda", 1e9, 0, {1000, 10000, 100000});
  steep[2].kernel.median *= 4;
  const auto found = portalab::fit_hockney(steep);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].n_half, 0.0);
  EXPECT_GT(found[0].r_inf, 0.0);
  EXPECT_TRUE(portalab::hockney_json(found)[0]["r_inf_gbps"].is_number());
}

}  // namespace
