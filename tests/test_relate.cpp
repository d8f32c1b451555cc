// The figures that relate rows (engine/relate.hpp), on a run made up of
// cases: speedup over the baseline space, over one rank, and the variants'
// own (copy_overlap's relate), each as the run computed them before they had
// one owner, byte for byte.
#include "engine/relate.hpp"

#include "experiment/experiment.hpp"
#include "platform/spaces.hpp"
#include "results/result.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

namespace {

using portalab::CopyMode;
using portalab::Result;
using portalab::Status;

const std::string host = portalab::enabled_space_names().front();

// A run of copy_overlap's two variants (made-up times, not measured): two
// sizes; the host space and a device; a device's three copy modes; one and
// two ranks; one device row that failed its check.
std::vector<std::vector<Result>> cases() {
  std::vector<std::vector<Result>> out;
  for (std::size_t n : {1000u, 100000u})
    for (const std::string space : {host, std::string("SomeDevice")})
      for (CopyMode copies :
           space == host ? std::vector{CopyMode::none}
                         : std::vector{CopyMode::pageable, CopyMode::pinned, CopyMode::none})
        for (int ranks : {1, 2}) {
          std::vector<Result>& rows = out.emplace_back();
          for (const char* variant : {"serial", "pipelined"}) {
            Result& r = rows.emplace_back();
            r.experiment = "copy_overlap";
            r.variant = variant;
            r.space = space;
            r.dtype = "float32";
            r.n = n;
            r.copies = copies;
            r.ranks = ranks;
            r.status = Status::pass;
            const double scale = static_cast<double>(n) / 1000 *
                                 (space == host ? 4.0 : 1.0 + static_cast<int>(copies)) /
                                 (ranks == 2 ? 1.5 : 1.0);
            r.kernel.median = scale * (r.variant == "serial" ? 3.0 : 2.0);
            r.total.median = r.kernel.median + (copies == CopyMode::none ? 0.0 : scale);
            r.bytes = 8.0 * static_cast<double>(n * ranks);
            if (r.variant == "serial") {
              portalab::set_metric(r.metrics, "perfect_overlap_ms", scale * 1.25);
              portalab::set_metric(r.metrics, "duplex_overlap_ms", scale * 1.5);
            }
          }
          if (space != host && copies == CopyMode::pinned && n == 1000 && ranks == 1)
            rows.back().status = Status::fail;
        }
  return out;
}

// What the relations wrote into the rows, a line each, the host space
// named "host".
std::string figures(const std::vector<Result>& rows) {
  std::string out;
  for (const Result& r : rows)
    out += nlohmann::json{{"variant", r.variant},
                          {"space", r.space == host ? "host" : r.space},
                          {"n", r.n},
                          {"copies", portalab::to_string(r.copies)},
                          {"ranks", r.ranks},
                          {"baseline", r.baseline == host ? "host" : r.baseline},
                          {"speedup_over_baseline", r.speedup_over_baseline},
                          {"metrics", r.metrics}}
               .dump() +
           "\n";
  return out;
}

// What the run's code computed of cases() before the figures had one owner
// (engine/runner.cpp's relate_to_one_rank and experiment hook,
// results/result.cpp's Speedups), as figures() printed it then.
std::string before() {
  std::ifstream in(PORTALAB_SOURCE_DIR "/tests/golden/relations.jsonl");
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(Relations, TheFiguresAreThoseOfTheRunBeforeTheyHadOneOwner) {
  const portalab::ExperimentInfo* copy_overlap = portalab::find_experiment("copy_overlap");
  ASSERT_NE(copy_overlap, nullptr);
  portalab::Relations relations;
  std::vector<Result> written;
  for (std::vector<Result>& rows : cases()) {
    relations.close_case(rows, copy_overlap->relate, nullptr);
    written.insert(written.end(), rows.begin(), rows.end());
  }
  EXPECT_EQ(figures(written), before());
}

// A passing row of one speedup group (e v float64 n=10).
portalab::Result speedup_row(std::string space, portalab::CopyMode mode, double total) {
  portalab::Result r;
  r.experiment = "e";
  r.variant = "v";
  r.dtype = "float64";
  r.n = 10;
  r.space = std::move(space);
  r.copies = mode;
  r.status = portalab::Status::pass;
  r.total.median = total;
  return r;
}

TEST(Relations, DeviceRowsWithoutAHostCounterpartUseTheHostBaseline) {
  const std::string host = portalab::enabled_space_names().front();
  const auto row = speedup_row;
  std::vector<portalab::Result> rows{
      row(host, portalab::CopyMode::pageable, 10.0),
      row(host, portalab::CopyMode::none, 8.0),
      row("SomeDevice", portalab::CopyMode::pinned, 2.0),  // host spaces run no pinned mode
      row("SomeDevice", portalab::CopyMode::none, 1.0),
  };
  rows.back().status = portalab::Status::fail;  // a failed row gets no speedup
  portalab::Relations{}.close_case(rows, {}, nullptr);
  EXPECT_DOUBLE_EQ(rows[0].speedup_over_baseline, 1.0);
  EXPECT_DOUBLE_EQ(rows[1].speedup_over_baseline, 1.0);
  EXPECT_EQ(rows[2].baseline, host);
  EXPECT_DOUBLE_EQ(rows[2].speedup_over_baseline, 5.0);
  EXPECT_EQ(rows[3].speedup_over_baseline, 0.0);
  EXPECT_EQ(rows[3].baseline, "");
}

// A row written keeps its figure: a baseline that comes after it (the run
// puts the baseline space first, so only rows made out of order) leaves it.
TEST(Relations, ARowAddedNeverChangesOneBeforeIt) {
  const std::string host = portalab::enabled_space_names().front();
  auto row = [](std::string space, double total) {
    return speedup_row(std::move(space), portalab::CopyMode::none, total);
  };
  std::vector<portalab::Result> rows{row("SomeDevice", 2.0)};
  portalab::Relations relations;  // a case a row
  auto add = [&](std::size_t i) {
    relations.close_case(std::span(rows).subspan(i, 1), {}, nullptr);
  };
  add(0);
  EXPECT_EQ(rows[0].baseline, "SomeDevice");
  EXPECT_DOUBLE_EQ(rows[0].speedup_over_baseline, 1.0);
  rows.push_back(row(host, 10.0));
  add(1);
  EXPECT_EQ(rows[1].baseline, host);
  EXPECT_EQ(rows[0].baseline, "SomeDevice");  // as written
  EXPECT_DOUBLE_EQ(rows[0].speedup_over_baseline, 1.0);
  rows.push_back(row("SomeDevice", 1.0));  // after the host's row: against it
  add(2);
  EXPECT_EQ(rows[2].baseline, host);
  EXPECT_DOUBLE_EQ(rows[2].speedup_over_baseline, 10.0);
}

}  // namespace
