// A small deck run through the runner into a temporary directory: both result
// files hold every required field, and provenance says where they came from.
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "platform/spaces.hpp"
#include "results/provenance.hpp"
#include "results/result.hpp"
#include "results/schema_version.hpp"
#include "engine/runner.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      out.push_back(std::exchange(cell, {}));
    else
      cell += c;
  }
  out.push_back(cell);
  return out;
}

const char* required[] = {"experiment", "variant", "library", "path",   "threads",   "space",
                          "dtype",      "n",       "reps",    "h2d_ms", "kernel_ms", "d2h_ms",
                          "total_ms",   "cold_ms", "gbps",    "gflops", "check",     "rel_error"};

class ResultFiles : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // One folder per process: ctest runs each test of this suite in its own
    // process, at once under -j, and each writes and reads its own files.
    dir = std::filesystem::path(PORTALAB_TEST_FILES_DIR) /
          ("portalab_test_results." + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const auto deck = portalab::parse_deck(
        "reps = 3\nwarmups = 1\n[vector_poly]\nsizes = [1000, 3]\ndtypes = [\"float64\", "
        "\"float32\"]\n",
        "inline.toml", portalab::catalog());
    portalab::RunOptions options;
    options.out_dir = dir.string();
    summary = portalab::run_deck(deck, options, portalab::collect_provenance(&deck, {"test"}));
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir); }
  static inline std::filesystem::path dir;
  static inline portalab::RunSummary summary;
};

TEST_F(ResultFiles, EveryEntryRanAndPassed) {
  EXPECT_EQ(summary.failed, 0);
  EXPECT_EQ(summary.errors, 0);
  EXPECT_FALSE(summary.results.empty());
}

TEST_F(ResultFiles, JsonHasEveryFieldAndProvenance) {
  const auto doc = nlohmann::json::parse(read(dir / "results.json"));
  EXPECT_EQ(doc["schema_version"], portalab::schema_version);
  ASSERT_EQ(doc["results"].size(), summary.results.size());
  for (const auto& row : doc["results"]) {
    for (const char* f : required) EXPECT_TRUE(row.contains(f)) << f;
    EXPECT_EQ(row["check"], "PASS");
    // Run without a calibration: the plain stores of portalab's own loops.
    EXPECT_EQ(row["path"], "loops") << row["variant"];
    // Numbers are numbers; objects are objects (schema/results.schema.json).
    for (const char* f : {"threads", "n", "reps", "warmups", "ranks"})
      EXPECT_TRUE(row[f].is_number_integer()) << f << ": " << row[f];
    EXPECT_TRUE(row["library_threads"].is_number_integer() || row["library_threads"].is_null())
        << row["library_threads"];
    EXPECT_TRUE(row["parameters"].is_object()) << row["parameters"];
    EXPECT_TRUE(row["metrics"].is_object()) << row["metrics"];
    EXPECT_TRUE(row["limit"].is_null()) << row["limit"];  // run without limits
    EXPECT_GE(row["total_ms"].get<double>(), row["kernel_ms"].get<double>());
    for (const char* phase : {"h2d", "kernel", "d2h", "total"}) {
      const auto& s = row["stats"][phase];
      EXPECT_LE(s["min_ms"].get<double>(), s["median_ms"].get<double>()) << phase;
      EXPECT_LE(s["median_ms"].get<double>(), s["max_ms"].get<double>()) << phase;
    }
    // A host space's mirror is its data: its copies are exactly zero.
    if (portalab::is_host_space(row["space"].get<std::string>())) {
      EXPECT_EQ(row["h2d_ms"].get<double>(), 0.0);
      EXPECT_EQ(row["d2h_ms"].get<double>(), 0.0);
      EXPECT_TRUE(row["copies_alias"].get<bool>());
    }
  }
  const auto& p = doc["provenance"];
  for (const char* k :
       {"kokkos", "kokkos_kernels", "build", "devices", "host", "slurm", "deck", "portalab"})
    EXPECT_TRUE(p.contains(k)) << k;
  EXPECT_EQ(p["kokkos"]["version"].get<std::string>().rfind("4.", 0), 0u);
  EXPECT_EQ(p["deck"]["path"], "inline.toml");
  EXPECT_FALSE(p["host"]["cpu_model"].get<std::string>().empty());
  EXPECT_TRUE(p["host"].contains("omp_env"));
}

TEST_F(ResultFiles, CsvHasTheSameRowsAndEveryField) {
  std::istringstream csv(read(dir / "results.csv"));
  std::string line;
  std::getline(csv, line);
  const auto header = split(line);
  for (const char* f : required)
    EXPECT_NE(std::find(header.begin(), header.end(), f), header.end()) << f;
  std::size_t rows = 0;
  while (std::getline(csv, line)) {
    EXPECT_EQ(split(line).size(), header.size()) << line;
    ++rows;
  }
  EXPECT_EQ(rows, summary.results.size());
}

TEST_F(ResultFiles, SpeedupIsRelativeToTheFirstHostSpace) {
  const std::string baseline = portalab::enabled_space_names().front();
  for (const auto& r : summary.results) {
    EXPECT_EQ(r.baseline, baseline);
    if (r.space == baseline) EXPECT_DOUBLE_EQ(r.speedup_over_baseline, 1.0);
  }
}

// A 4-rank run printed "scaling=0" for a deck that said scaling = "strong".
TEST(Parameters, NamedChoicesReadAsTheDeckGivesThem) {
  using portalab::Parameters;
  const Parameters strong{{"scaling", 0}}, weak{{"scaling", 1}}, chunks{{"chunks", 16}};
  EXPECT_EQ(portalab::to_string(strong, "dot_distributed"), "scaling=strong");
  EXPECT_EQ(portalab::to_string(weak, "dot_distributed"), "scaling=weak");
  EXPECT_EQ(portalab::parameters_json(weak, "dot_distributed")["scaling"], "weak");
  EXPECT_EQ(portalab::to_string(chunks, "copy_overlap"), "chunks=16");
  EXPECT_EQ(portalab::parameters_json(chunks, "copy_overlap")["chunks"], 16);
  EXPECT_EQ(portalab::to_string(strong), "scaling=0");  // no experiment: the number
}

// A failed check's error can be infinite: the CSV holds no number there, as
// the JSON holds null (the schema allows a number or nothing).
// A row's path: what its kernels reported; else a library's call; else none.
TEST(RowPath, KernelsFirstThenALibrary) {
  EXPECT_EQ(portalab::row_path("dot-chain", "native"), "dot-chain");
  EXPECT_EQ(portalab::row_path("loops+streaming-stores", "OpenBLAS"), "loops+streaming-stores");
  EXPECT_EQ(portalab::row_path("", "cuBLAS"), "library");
  EXPECT_EQ(portalab::row_path("", "native"), "");
  EXPECT_EQ(portalab::row_path("", ""), "");
}

TEST(Csv, NonFiniteNumbersAreEmptyCells) {
  portalab::Result r;
  r.experiment = "vector_poly";
  r.check.rel_error = std::numeric_limits<double>::infinity();
  const auto header = portalab::csv_header();
  const auto row = portalab::csv_row(r);
  const auto at = std::find(header.begin(), header.end(), "rel_error") - header.begin();
  ASSERT_LT(static_cast<std::size_t>(at), row.size());
  EXPECT_EQ(row[at], "");
  EXPECT_TRUE(portalab::to_json(r)["rel_error"].is_null());
  r.check.rel_error = std::nan("");
  EXPECT_EQ(portalab::csv_row(r)[at], "");
}

TEST(Summaries, MedianMinMaxAndSampleStdDev) {
  const auto s = portalab::summarize({4.0, 1.0, 3.0, 2.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_NEAR(s.stddev, 1.2909944487358056, 1e-12);
  EXPECT_DOUBLE_EQ(portalab::summarize({5.0, 1.0, 3.0}).median, 3.0);
}

}  // namespace
