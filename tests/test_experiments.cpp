// Every registered experiment, in every space, type, copy mode and variant:
// the framework's case runs and its check passes; an unwritten output fails;
// variants that compute the same outputs (sequentially or concurrently on
// several instances) give bit-identical ones, so a race shows as a failure.
#include "experiment/experiment.hpp"
#include "kernels/range.hpp"
#include "platform/spaces.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include <string>
#include <tuple>
#include <vector>

namespace {

struct Param {
  std::string experiment, space, dtype;
  portalab::CopyMode mode;
};

std::vector<Param> all_cases() {
  std::vector<Param> out;
  for (const auto& e : portalab::experiments()) {
    for (const auto& space : portalab::enabled_space_names())
      for (const auto& dtype : e.dtypes)
        for (auto mode :
             {portalab::CopyMode::pageable, portalab::CopyMode::pinned, portalab::CopyMode::none}) {
          if (mode == portalab::CopyMode::pinned && portalab::is_host_space(space)) continue;
          out.push_back({e.name, space, dtype, mode});
        }
  }
  return out;
}

// The experiment's parameters, capped at 8 (chunks, kernels, degree) so that
// the test stays quick and still splits work over several instances.
portalab::Parameters small_parameters(const portalab::ExperimentInfo& info) {
  portalab::Parameters p;
  for (const auto& d : info.parameters)
    p[d.name] = std::min<std::int64_t>(d.default_value, std::max<std::int64_t>(d.min, 8));
  return p;
}

// Variant v of c as the runner runs one repetition, outputs poisoned first.
void run_variant(portalab::Case& c, std::size_t v) {
  auto& a = c.arrays();
  a.poison_outputs();
  a.h2d();
  portalab::CallRecord record;
  c.run(v, {}, record);
  a.d2h();
  a.fence();
}

class EveryExperiment : public ::testing::TestWithParam<Param> {};

TEST_P(EveryExperiment, EachVariantPassesItsCheckAtAwkwardSizes) {
  const Param& p = GetParam();
  const auto* info = portalab::find_experiment(p.experiment);
  ASSERT_NE(info, nullptr);
  // O(n³) experiments stop at 130: beyond one 128-wide tile, a multiple of
  // no tile or vector width, and quick on the host.
  const bool cubic = info->bound == portalab::Bound::compute;
  const auto params = small_parameters(*info);
  int ran = 0;
  for (std::size_t n : {std::size_t(1), std::size_t(33), std::size_t(cubic ? 130 : 4099)}) {
    auto c = info->make(p.space, p.dtype, n, p.mode, params, portalab::world());
    ASSERT_NE(c, nullptr);
    std::optional<std::uint64_t> first_digest;
    auto& a = c->arrays();
    for (std::size_t v = 0; v < info->variants.size(); ++v) {
      const std::string& variant = info->variants[v];
      // Not applicable (an OpenMP of 2 threads in 4 instances, no library for
      // the space): said, with a reason.
      if (!info->not_applicable(p.space, p.dtype, v, p.mode).empty()) continue;
      ++ran;
      run_variant(*c, v);
      const auto check = c->verify(v);
      EXPECT_TRUE(check.pass) << variant << " n=" << n << ": rel_error " << check.rel_error << " > "
                              << check.tolerance << " " << check.detail;
      if (info->same_outputs) {
        if (!first_digest) first_digest = a.output_digest();
        EXPECT_EQ(a.output_digest(), *first_digest)
            << variant << " n=" << n << ": outputs differ from " << info->variants.front() << "'s";
      }
    }
  }
  if (ran == 0)
    GTEST_SKIP() << "no variant applies to " << p.space << " with copies=" << to_string(p.mode);
}

TEST_P(EveryExperiment, CheckFailsWhenTheKernelDidNotRun) {
  const Param& p = GetParam();
  const auto* info = portalab::find_experiment(p.experiment);
  auto c = info->make(p.space, p.dtype, 100, p.mode, small_parameters(*info), portalab::world());
  c->arrays().poison_outputs();
  c->arrays().fence();
  const auto check = c->verify(0);
  EXPECT_FALSE(check.pass);
}

TEST_P(EveryExperiment, DeclaresWorkAndFootprint) {
  const Param& p = GetParam();
  const auto* info = portalab::find_experiment(p.experiment);
  const auto params = small_parameters(*info);
  EXPECT_GT(info->footprint(p.dtype, 1000, params), 0u);
  for (std::size_t v = 0; v < info->variants.size(); ++v)
    EXPECT_GT(info->work(p.dtype, 1000, v, params).bytes, 0.0) << info->variants[v];
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryExperiment, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           std::string name = info.param.experiment + "_" + info.param.space + "_" +
                                              info.param.dtype + "_" +
                                              std::string(to_string(info.param.mode));
                           return name;
                         });

// What a variant declares: array_ops shows the lab's values, launch_overhead
// times its dispatch variants itself and leaves the others to the runner's
// fence, the concurrent variants run on the instances they declare.
TEST(VariantTables, ArrayOpsShowsTheLabsValues) {
  const auto* info = portalab::find_experiment("array_ops");
  ASSERT_NE(info, nullptr);
  const std::string space = portalab::enabled_space_names().front();
  auto c = info->make(space, "float64", 5, portalab::CopyMode::pageable, {}, portalab::world());
  const std::size_t v = info->variant_index("arithmetic");
  run_variant(*c, v);
  ASSERT_TRUE(c->verify(v).pass);
  const std::string shown = c->show(v);
  EXPECT_NE(shown.find("x+10: [11 13 15 17 19]"), std::string::npos) << shown;
  EXPECT_NE(shown.find("x/y: [0.5 0.75 0.83333333 0.875 0.9]"), std::string::npos) << shown;
  const auto* squared = portalab::find_experiment("squared_diff");
  EXPECT_EQ(
      squared->make(space, "float64", 5, portalab::CopyMode::none, {}, portalab::world())->show(0),
      "");
}

// The run's policy reaches the kernels through the run state, and the call
// records the path they took: a host's copy by memcpy or, from byte 0, with
// streaming stores (where compiled); a device's own loop; "" for a variant
// without a choice.
TEST(VariantTables, TheCallRecordsThePathItsKernelsTook) {
  const auto* info = portalab::find_experiment("stream_copy");
  ASSERT_NE(info, nullptr);
  const std::size_t kernel = info->variant_index("kernel"), deep = info->variant_index("deep_copy");
  portalab::kernels::HostPolicy streaming;
  streaming.streaming_from = streaming.copy_streaming_from = 0;
  for (const auto& space : portalab::enabled_space_names()) {
    const bool host = portalab::is_host_space(space);
    auto c = info->make(space, "float64", 1000, portalab::CopyMode::none, {}, portalab::world());
    auto path = [&](std::size_t v, const portalab::kernels::HostPolicy& policy) {
      portalab::CallRecord record;
      c->run(v, policy, record);
      c->arrays().fence();
      return record.path;
    };
    EXPECT_EQ(path(kernel, {}), host ? "memcpy" : "loops") << space;
    const bool streams = host && portalab::kernels::streaming_stores_compiled;
    EXPECT_EQ(path(kernel, streaming), streams ? "streaming-stores"
                                       : host  ? "memcpy"
                                               : "loops")
        << space;
    EXPECT_EQ(path(deep, streaming), "") << space;
  }
}

TEST(VariantTables, LaunchOverheadTimesItsDispatchVariantsItself) {
  const auto* info = portalab::find_experiment("launch_overhead");
  ASSERT_NE(info, nullptr);
  for (const auto& space : portalab::enabled_space_names()) {
    auto c = info->make(space, "int64", 10, portalab::CopyMode::none, {}, portalab::world());
    for (std::size_t v = 0; v < info->variants.size(); ++v) {
      portalab::CallRecord record;
      c->run(v, {}, record);
      c->arrays().fence();
      const bool dispatch = info->variants[v].find("dispatch") != std::string::npos;
      EXPECT_EQ(record.kernel_ms.has_value(), dispatch) << space << " " << info->variants[v];
      EXPECT_EQ(record.timed_by.empty(), !dispatch) << space << " " << info->variants[v];
    }
    EXPECT_EQ(info->work("int64", 10, info->variant_index("dispatch"), {}).launches, 10.0);
  }
}

TEST(VariantTables, InstancesAndCopiesAreDeclaredNotParsed) {
  const auto* small = portalab::find_experiment("concurrent_small");
  ASSERT_NE(small, nullptr);
  std::vector<int> instances;
  for (const auto& t : small->traits) instances.push_back(t.instances);
  EXPECT_EQ(instances, (std::vector<int>{1, 2, 4, 8}));
  const auto* overlap = portalab::find_experiment("copy_overlap");
  ASSERT_NE(overlap, nullptr);
  const std::string space = portalab::enabled_space_names().front();
  for (std::size_t v = 0; v < overlap->variants.size(); ++v)
    EXPECT_NE(overlap->not_applicable(space, overlap->dtypes.front(), v, portalab::CopyMode::none),
              "")
        << overlap->variants[v];
  EXPECT_THROW(overlap->variant_index("pipelined_7"), std::invalid_argument);
}

// The streams experiments' relate sets each multi-instance row's ideal:
// perfect_overlap_ms (inverse_pair: the sequential time over 2;
// concurrent_small: instances_1's over k) and of_perfect, that over the row's
// time; the report reads them and computes neither (issue 46).
TEST(VariantTables, RelateSetsThePerfectOverlapOfEachRowOnSeveralInstances) {
  struct Row {
    const char* variant;
    double kernel_ms;
    bool passed = true;
    portalab::Metrics metrics{};
  };
  const auto relate = [](const char* experiment, std::vector<Row>& rows) {
    const auto* info = portalab::find_experiment(experiment);
    ASSERT_NE(info, nullptr);
    ASSERT_TRUE(info->relate);
    std::vector<portalab::CaseRow> seen;
    for (auto& r : rows)
      seen.push_back({.variant = r.variant,
                      .dtype = "float32",
                      .n = 100,
                      .passed = r.passed,
                      .kernel_ms = r.kernel_ms,
                      .metrics = r.metrics});
    info->relate(seen);
  };
  std::vector<Row> pair{{"sequential", 10.0}, {"concurrent", 8.0}};
  relate("inverse_pair", pair);
  EXPECT_EQ(portalab::metric(pair[1].metrics, "perfect_overlap_ms", -1), 5.0);
  EXPECT_EQ(portalab::metric(pair[1].metrics, "of_perfect", -1), 5.0 / 8.0);
  EXPECT_EQ(portalab::metric(pair[1].metrics, "overlap", -1), 1.0 - 8.0 / 10.0);
  EXPECT_EQ(portalab::metric(pair[0].metrics, "perfect_overlap_ms", -1), -1);

  std::vector<Row> small{{"instances_1", 12.0},
                         {"instances_2", 8.0},
                         {"instances_4", 4.0},
                         {"instances_8", 3.0, false}};
  relate("concurrent_small", small);
  EXPECT_EQ(portalab::metric(small[1].metrics, "perfect_overlap_ms", -1), 6.0);
  EXPECT_EQ(portalab::metric(small[1].metrics, "of_perfect", -1), 6.0 / 8.0);
  EXPECT_EQ(portalab::metric(small[2].metrics, "perfect_overlap_ms", -1), 3.0);
  EXPECT_EQ(portalab::metric(small[2].metrics, "of_perfect", -1), 3.0 / 4.0);
  EXPECT_EQ(portalab::metric(small[2].metrics, "vs_1", -1), 3.0);
  // instances_1 is its own reference; a failed row gets no figure.
  EXPECT_EQ(portalab::metric(small[0].metrics, "of_perfect", -1), -1);
  EXPECT_TRUE(small[3].metrics.empty());

  // No passing reference row: no ideal to set.
  std::vector<Row> alone{{"sequential", 10.0, false}, {"concurrent", 8.0}};
  relate("inverse_pair", alone);
  EXPECT_TRUE(alone[1].metrics.empty());
}

}  // namespace
