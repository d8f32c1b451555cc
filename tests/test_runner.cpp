// The runner keeps going past a failed check: every entry is measured and
// written, the failure is listed in the summary, and the driver's exit code
// (from summary.failed) is non-zero.
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "libraries/vendor.hpp"
#include "platform/spaces.hpp"
#include "results/provenance.hpp"
#include "engine/runner.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <unistd.h>

namespace portalab {
namespace {

// Copies x into z but checks against x + 1: every run of it fails its check.
template <class Space, class T>
class WrongAnswer {
 public:
  WrongAnswer(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{0.0, 1.0}, n), m_z(ctx, "z", Out{}, n) {}
  static auto variants() {
    return std::array{Variant<WrongAnswer>{.name = "copy", .run = &WrongAnswer::copy}};
  }
  void copy(RunState<Space>& s) { Kokkos::deep_copy(s.exec(), m_z.device(), m_x.device()); }
  Check verify() const {
    const T* x = m_x.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) { return x[i] + 1.0; }, elementwise_tolerance<T>(1));
  }
  static Work work(std::size_t n, const Parameters&) { return {2.0 * sizeof(T) * n, 0}; }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 2 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_x, m_z;
};

// Copies x into z, in two variants: "portable", and "vendor", which declares
// that it needs the vendor BLAS (served for float64 in host spaces, for no
// integer type anywhere).
template <class Space, class T>
class Unserved {
 public:
  Unserved(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{0.0, 1.0}, n), m_z(ctx, "z", Out{}, n) {}
  static auto variants() {
    return std::array{
        Variant<Unserved>{.name = "portable", .run = &Unserved::copy},
        Variant<Unserved>{.name = "vendor",
                          .run = &Unserved::copy,
                          .missing_library = &libraries::why_no_vendor<Space, T>},
    };
  }
  void copy(RunState<Space>& s) { Kokkos::deep_copy(s.exec(), m_z.device(), m_x.device()); }
  Check verify() const {
    const T* x = m_x.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) { return static_cast<double>(x[i]); }, elementwise_tolerance<T>(1));
  }
  static Work work(std::size_t n, const Parameters&) { return {2.0 * sizeof(T) * n, 0}; }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 2 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_x, m_z;
};

// Copies x into z in three variants, each call written down in `calls` (the
// variant's index; a check: `checked`): the order in which a case's
// variants ran.
std::vector<int> calls;
constexpr int checked = 9;
template <class Space, class T>
class Logged {
 public:
  Logged(CaseContext<Space>& ctx, std::size_t n, const Parameters&)
      : m_x(ctx, "x", In{0.0, 1.0}, n), m_z(ctx, "z", Out{}, n) {}
  static auto variants() {
    return std::array{Variant<Logged>{.name = "a", .run = &Logged::a},
                      Variant<Logged>{.name = "b", .run = &Logged::b},
                      Variant<Logged>{.name = "c", .run = &Logged::c}};
  }
  void a(RunState<Space>& s) { copy(s, 0); }
  void b(RunState<Space>& s) { copy(s, 1); }
  void c(RunState<Space>& s) { copy(s, 2); }
  Check verify() const {
    calls.push_back(checked);
    const T* x = m_x.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) { return static_cast<double>(x[i]); }, elementwise_tolerance<T>(1));
  }
  static Work work(std::size_t n, const Parameters&) { return {2.0 * sizeof(T) * n, 0}; }
  static std::size_t footprint(std::size_t n, const Parameters&) { return 2 * sizeof(T) * n; }

 private:
  void copy(RunState<Space>& s, int variant) {
    calls.push_back(variant);
    Kokkos::deep_copy(s.exec(), m_z.device(), m_x.device());
  }
  Mirrored<T*, Space> m_x, m_z;
};

// Where test_journaled's relate reads the run's journal as it stands when a
// case closes (empty: it reads none), and what it found there: rows lines
// read, and each line that replaced rows or carried a row not yet related.
std::filesystem::path journal_to_read;
int journal_lines_read = 0;
std::vector<std::string> journal_problems;

void read_journal_so_far() {
  if (journal_to_read.empty()) return;
  std::ifstream in(journal_to_read);
  std::string line;
  std::size_t rows = 0;
  journal_lines_read = 0;
  for (bool first = true; std::getline(in, line); first = false) {
    const auto update = nlohmann::json::parse(line);
    if (first || !update.contains("first")) continue;  // the provenance
    ++journal_lines_read;
    if (update["first"].get<std::size_t>() != rows) journal_problems.push_back("replaces: " + line);
    for (const auto& r : update["rows"]) {
      if (!r.contains("metrics") || r["metrics"].value("rows", 0.0) != 2.0)
        journal_problems.push_back("not related: " + r.dump());
      ++rows;
    }
  }
}

// The program's experiments and those of the tests, in a registry of the
// tests': the program's registry never sees them.
const Registry& test_registry() {
  static const Registry registry = [] {
    Registry r = global_registry();
    register_experiment<WrongAnswer, double>(r,
                                             {
                                                 .name = "test_wrong_answer",
                                                 .summary = "a result that never passes its check",
                                                 .default_sizes = {100},
                                                 .default_dtypes = {"float64"},
                                             });
    register_experiment<Unserved, double, std::int64_t>(
        r, {
               .name = "test_unserved",
               .summary = "a variant no library serves for int64",
               .default_sizes = {100},
               .default_dtypes = {"float64"},
           });
    // Its relate sees each row of a case (passed or not) and what it adds
    // stays in the rows.
    register_experiment<Unserved, double, std::int64_t>(
        r,
        {
            .name = "test_related",
            .summary = "Unserved, its rows related",
            .default_sizes = {100},
            .default_dtypes = {"float64"},
        },
        [](std::span<CaseRow> rows) {
          const bool vendor = passing_row(rows, "vendor") != nullptr;
          for (auto& row : rows) {
            row.set_metric("rows", static_cast<double>(rows.size()));
            row.set_metric("bytes", static_cast<double>(row.n * dtype_bytes(row.dtype)));
            row.set_metric("vendor_passed", vendor);
            row.set_metric("passed", row.passed);
            row.set_metric("kernel_ms", row.kernel_ms);
          }
        });
    // test_related whose relate also reads the journal (read_journal_so_far).
    register_experiment<Unserved, double, std::int64_t>(
        r,
        {
            .name = "test_journaled",
            .summary = "Unserved, related, reading the journal at each case's close",
            .default_sizes = {100},
            .default_dtypes = {"float64"},
        },
        [](std::span<CaseRow> rows) {
          read_journal_so_far();
          for (auto& row : rows) row.set_metric("rows", static_cast<double>(rows.size()));
        });
    register_experiment<Logged, double>(r, {
                                               .name = "test_logged",
                                               .summary = "three variants whose calls are logged",
                                               .default_sizes = {100},
                                               .default_dtypes = {"float64"},
                                           });
    return r;
  }();
  return registry;
}

TEST(Registry, ATestsExperimentStaysInItsOwnRegistry) {
  EXPECT_NE(test_registry().find("test_wrong_answer"), nullptr);
  EXPECT_EQ(find_experiment("test_wrong_answer"), nullptr);
  Registry copy = test_registry();
  auto again = [&] {
    register_experiment<WrongAnswer, double>(copy, {.name = "test_wrong_answer"});
  };
  EXPECT_THROW(again(), std::logic_error);
}

// A variant whose library is missing in a space and type is not applicable
// there, with the reason its declaration gives; the facts come from the build,
// before anything runs.
TEST(Runner, AVariantNoLibraryServesIsNotApplicableWithTheReason) {
  const Deck deck = parse_deck(R"(
reps = 1
warmups = 0
copies = ["none"]
[test_unserved]
sizes = [10]
dtypes = ["float64", "int64"]
)",
                               "unserved.toml", test_registry().catalog());
  RunOptions options;
  options.registry = &test_registry();
  const RunSummary summary = run_deck(deck, options, nlohmann::json::object());
  ASSERT_FALSE(summary.results.empty());
  for (const auto& r : summary.results) {
    SCOPED_TRACE(r.space + " " + r.dtype + " " + r.variant);
    // CBLAS on the host and cuBLAS on Cuda serve float64; nothing serves
    // int64, and no vendor library is wired in for HIP.
    const bool vendor_space = is_host_space(r.space) || r.space == "Cuda";
    const bool served = r.variant == "portable" || (r.dtype == "float64" && vendor_space);
    if (served) {
      EXPECT_EQ(r.status, Status::pass) << r.note;
    } else {
      EXPECT_EQ(r.status, Status::not_applicable);
      EXPECT_NE(r.note.find("no vendor BLAS/LAPACK serves " + r.space), std::string::npos)
          << r.note;
    }
  }
  EXPECT_EQ(summary.failed + summary.errors, 0);
  EXPECT_GT(summary.not_applicable, 0);
}

TEST(Expand, OneEntryPerRowCasesAdjacent) {
  const Deck deck = parse_deck(R"(
spaces = ["Serial"]
copies = ["pageable", "none"]
[vector_poly]
sizes = [10, 20]
variants = ["unfused", "fused"]
)",
                               "expand.toml", catalog());
  const auto entries = expand(deck, global_registry());
  ASSERT_EQ(entries.size(), count_entries(deck));
  ASSERT_EQ(entries.size(), 8u);
  EXPECT_EQ(entries[0].variant_name(), "unfused");
  EXPECT_EQ(entries[1].variant_name(), "fused");
  EXPECT_EQ(entries[0].case_id, entries[1].case_id);
  EXPECT_NE(entries[1].case_id, entries[2].case_id);
  EXPECT_EQ(entries[2].copies, CopyMode::none);
  EXPECT_EQ(entries[7].n, 20u);
  EXPECT_EQ(entries[0].describe(), "vector_poly unfused Serial float64 n=10 copies=pageable");
}

TEST(Runner, AFailedCheckIsListedAndTheRunGoesOn) {
  const Deck deck = parse_deck(R"(
reps = 2
warmups = 0
spaces = ["Serial"]
copies = ["none"]
[test_wrong_answer]
sizes = [10, 20]
[vector_poly]
sizes = [100]
variants = ["fused"]
)",
                               "failing.toml", test_registry().catalog());
  const auto dir = std::filesystem::path(PORTALAB_TEST_FILES_DIR) / "portalab_test_runner";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunOptions options;
  options.out_dir = dir.string();
  options.registry = &test_registry();
  const RunSummary summary = run_deck(deck, options, portalab::collect_provenance(&deck, {"test"}));

  ASSERT_EQ(summary.results.size(), 3u);  // the entries after the failure ran
  EXPECT_EQ(summary.failed, 2);
  EXPECT_EQ(summary.results[0].status, Status::fail);
  EXPECT_EQ(summary.results[1].status, Status::fail);
  EXPECT_EQ(summary.results[2].status, Status::pass);
  EXPECT_GT(summary.results[0].kernel.median, 0.0);  // measured, then failed

  std::ifstream in(dir / "results.json");
  const auto doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["results"].size(), 3u);
  const auto& failures = doc["summary"]["failures"];
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0]["experiment"], "test_wrong_answer");
  EXPECT_EQ(failures[1]["n"], 20);
  // The folder is left for results.schema to validate (tests/CMakeLists.txt).
}

// The stopping rule on known times: a fixed count; at least min_reps; the
// median's interval within the target; else the budget, which makes a row
// noisy.
TEST(Runner, AdaptiveRepetitionsStopWhenTheMedianIsSteadyOrTheBudgetRunsOut) {
  Entry fixed;
  fixed.reps = 3;
  std::string why;
  EXPECT_TRUE(wants_another(fixed, std::vector<double>(2, 1.0), 100.0, why));
  EXPECT_FALSE(wants_another(fixed, std::vector<double>(3, 1.0), 0.0, why));
  EXPECT_EQ(why, "reps");

  Entry e;
  e.adaptive =
      AdaptiveReps{.noise = 0.01, .min_reps = 6, .max_reps = 20, .max_time_s = 1.0, .passes = 1};
  const std::vector<double> steady(6, 2.0), five(5, 2.0);
  why.clear();
  EXPECT_TRUE(wants_another(e, five, 5.0, why));  // min_reps first, whatever the time
  EXPECT_FALSE(wants_another(e, steady, 0.0, why));
  EXPECT_EQ(why, "noise");
  // Six made-up times (not measured): the interval 1..6 about a median of 3.5.
  const std::vector<double> spread{1, 2, 3, 4, 5, 6};
  why.clear();
  EXPECT_TRUE(wants_another(e, spread, 0.5, why));
  EXPECT_EQ(why, "");
  EXPECT_FALSE(wants_another(e, spread, 1.0, why));
  EXPECT_EQ(why, "max_time");
  std::vector<double> twenty;
  for (int i = 0; i < 20; ++i) twenty.push_back(1.0 + i % 7);
  EXPECT_FALSE(wants_another(e, twenty, 0.0, why));
  EXPECT_EQ(why, "max_reps");
}

// In passes, each stops by the rule on its own repetitions with its share of
// the budgets: 13 least and 41 most repetitions split 7+6 and 21+20 (the
// first passes take the rest), 1 s of them 0.5 s each.
TEST(Runner, EachPassHasItsShareOfTheBudgets) {
  Entry e;
  e.adaptive =
      AdaptiveReps{.noise = 0.01, .min_reps = 13, .max_reps = 41, .max_time_s = 1.0, .passes = 2};
  EXPECT_EQ(e.adaptive->share(0).min_reps, 7);
  EXPECT_EQ(e.adaptive->share(1).min_reps, 6);
  EXPECT_EQ(e.adaptive->share(0).max_reps, 21);
  EXPECT_EQ(e.adaptive->share(1).max_reps, 20);
  EXPECT_DOUBLE_EQ(e.adaptive->share(1).max_time_s, 0.5);
  std::string why;
  const std::vector<double> six(6, 2.0), seven(7, 2.0);
  EXPECT_TRUE(wants_another(e, six, 0.0, why, 0));  // the first pass's least is 7
  EXPECT_FALSE(wants_another(e, six, 0.0, why, 1));
  EXPECT_EQ(why, "noise");
  std::vector<double> spread;
  for (int i = 0; i < 12; ++i) spread.push_back(1.0 + i % 7);
  why.clear();
  EXPECT_TRUE(wants_another(e, spread, 0.4, why, 1));
  EXPECT_FALSE(wants_another(e, spread, 0.5, why, 1));
  EXPECT_EQ(why, "max_time");
  for (int i = 12; i < 21; ++i) spread.push_back(1.0 + i % 7);
  EXPECT_FALSE(wants_another(e, std::span(spread).first(20), 0.0, why, 1));
  EXPECT_EQ(why, "max_reps");
  EXPECT_TRUE(wants_another(e, std::span(spread).first(20), 0.0, why, 0));
  // One pass takes every repetition; neither count goes below one.
  e.adaptive->passes = 1;
  EXPECT_EQ(e.adaptive->share(0).max_reps, 41);
  e.adaptive->passes = 41;
  EXPECT_EQ(e.adaptive->share(40).min_reps, 1);
  EXPECT_EQ(e.adaptive->share(40).max_reps, 1);
}

// Warm-ups: the deck's count; with adaptive repetitions, until they have
// lasted min_warmup_s too (times made up, not measured).
TEST(Runner, WarmupsRunTheirCountAndAdaptiveOnesTheirLeastTime) {
  Entry fixed;
  fixed.warmups = 2;
  EXPECT_TRUE(wants_warmup(fixed, 1, 100.0));
  EXPECT_FALSE(wants_warmup(fixed, 2, 0.0));

  Entry e;
  e.warmups = 2;
  e.adaptive = AdaptiveReps{.min_warmup_s = 0.01};
  EXPECT_TRUE(wants_warmup(e, 1, 1.0));      // the count first, whatever the time
  EXPECT_TRUE(wants_warmup(e, 500, 0.005));  // then the time
  EXPECT_FALSE(wants_warmup(e, 2, 0.01));
  e.adaptive->min_warmup_s = 0;
  EXPECT_FALSE(wants_warmup(e, 2, 0.0));
  e.warmups = 0;
  EXPECT_FALSE(wants_warmup(e, 0, 0.0));
}

// A row records each repetition and how its count was chosen.
TEST(Runner, ARowKeepsItsRepetitionsAndTheIntervalOfItsMedian) {
  const Deck deck = parse_deck(R"(
warmups = 0
spaces = ["Serial"]
copies = ["none"]
[vector_poly]
sizes = [1000]
variants = ["fused"]
reps = 3
[stream_copy]
sizes = [1000]
variants = ["kernel"]
min_reps = 6
max_time_s = 1e-9
)",
                               "adaptive.toml", test_registry().catalog());
  RunOptions options;
  options.registry = &test_registry();
  const RunSummary summary = run_deck(deck, options, nlohmann::json::object());
  ASSERT_EQ(summary.results.size(), 2u);
  const Result& fixed = summary.results[0];
  EXPECT_EQ(fixed.reps, 3);
  EXPECT_EQ(fixed.kernel_reps_ms.size(), 3u);
  EXPECT_EQ(fixed.total_reps_ms.size(), 3u);
  EXPECT_EQ(fixed.stopped_by, "reps");
  EXPECT_EQ(fixed.warmups, 0);  // a fixed count keeps the deck's warm-ups too
  EXPECT_EQ(fixed.noise_target, 0.0);
  EXPECT_FALSE(std::isfinite(fixed.rel_ci95));  // 3 repetitions cannot bound a median
  const Result& adaptive = summary.results[1];
  // Its budget spent at once: it stops at min_reps, steady or noisy.
  EXPECT_EQ(adaptive.reps, 6);
  EXPECT_EQ(adaptive.kernel_reps_ms.size(), 6u);
  EXPECT_GT(adaptive.warmups, 0);  // warmups = 0, but they last min_warmup_s
  EXPECT_TRUE(adaptive.stopped_by == "noise" || adaptive.stopped_by == "max_time")
      << adaptive.stopped_by;
  EXPECT_EQ(adaptive.noisy(), adaptive.stopped_by == "max_time");
  EXPECT_DOUBLE_EQ(adaptive.noise_target, AdaptiveReps{}.noise);
  EXPECT_LE(adaptive.median_ci_low_ms, adaptive.kernel.median);
  EXPECT_GE(adaptive.median_ci_high_ms, adaptive.kernel.median);
  EXPECT_TRUE(std::isfinite(adaptive.rel_ci95));
  const auto row = to_json(adaptive);
  EXPECT_EQ(row["repetitions"]["kernel_ms"].size(), 6u);
  EXPECT_EQ(row["reps"], 6);
  // Two passes (the default) of three each: each one's median kept, the
  // fixed count's row in one pass.
  ASSERT_EQ(adaptive.pass_kernel_ms.size(), 2u);
  EXPECT_EQ(row["repetitions"]["pass_kernel_ms"].size(), 2u);
  EXPECT_EQ(row["repetitions"]["pass_total_ms"].size(), 2u);
  for (int p = 0; p < 2; ++p) {
    std::vector<double> own(adaptive.kernel_reps_ms.begin() + 3 * p,
                            adaptive.kernel_reps_ms.begin() + 3 * p + 3);
    EXPECT_EQ(adaptive.pass_kernel_ms[p], summarize(own).median);
  }
  EXPECT_TRUE(fixed.pass_kernel_ms.empty());
  EXPECT_FALSE(to_json(fixed)["repetitions"].contains("pass_kernel_ms"));
}

// An experiment's relate gets the rows of one case, every variant's, with
// their status, size and type, and the metrics it sets are the rows'.
TEST(Runner, RelateSeesEachCaseAndItsFiguresStayInTheRows) {
  const Deck deck = parse_deck(R"(
reps = 1
warmups = 0
copies = ["none"]
[test_related]
sizes = [10, 20]
dtypes = ["float64", "int64"]
)",
                               "related.toml", test_registry().catalog());
  RunOptions options;
  options.registry = &test_registry();
  const RunSummary summary = run_deck(deck, options, nlohmann::json::object());
  ASSERT_FALSE(summary.results.empty());
  for (const auto& r : summary.results) {
    SCOPED_TRACE(r.space + " " + r.dtype + " " + std::to_string(r.n) + " " + r.variant);
    bool vendor_passed = false;
    for (const auto& other : summary.results)
      if (other.space == r.space && other.dtype == r.dtype && other.n == r.n &&
          other.variant == "vendor")
        vendor_passed = other.status == Status::pass;
    EXPECT_EQ(r.metric("rows"), 2.0);
    EXPECT_EQ(r.metric("bytes"), static_cast<double>(r.n * dtype_bytes(r.dtype)));
    EXPECT_EQ(r.metric("vendor_passed"), vendor_passed ? 1.0 : 0.0);
    EXPECT_EQ(r.metric("passed"), r.status == Status::pass ? 1.0 : 0.0);
    EXPECT_EQ(r.metric("kernel_ms"), r.kernel.median);
  }
  EXPECT_GT(summary.not_applicable, 0);  // int64's vendor rows: related too
}

// A case's rows are related before they are written: at each case's close
// the journal has only ever appended (each line's "first" is the count of
// rows before it), and every row in it carries what relate set. Without
// limits, nothing is re-measured.
TEST(Runner, TheJournalOnlyAppendsRowsAlreadyRelated) {
  const Deck deck = parse_deck(R"(
reps = 2
warmups = 0
copies = ["none"]
[test_journaled]
sizes = [10, 20]
dtypes = ["float64", "int64"]
)",
                               "journaled.toml", test_registry().catalog());
  const auto dir = std::filesystem::temp_directory_path() /
                   ("portalab_append_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  RunOptions options;
  options.registry = &test_registry();
  options.out_dir = dir.string();
  journal_to_read = dir / "results.jsonl";
  journal_problems.clear();
  const RunSummary summary = run_deck(deck, options, nlohmann::json::object());
  journal_to_read.clear();
  // A case per size, type and space, of two variants: at the last close,
  // every other case's line was read.
  const std::size_t cases = summary.results.size() / 2;
  EXPECT_GE(cases, 4u);
  EXPECT_GE(journal_lines_read, static_cast<int>(cases) - 1);
  EXPECT_TRUE(journal_problems.empty()) << journal_problems.front();
  std::filesystem::remove_all(dir);
}

#if defined(KOKKOS_ENABLE_SERIAL) && defined(KOKKOS_ENABLE_OPENMP)
// The streams experiments through the runner: parameters reach the case,
// variants a space cannot run are rows saying why, and relate() adds the
// figures that compare a case's variants.
TEST(Runner, StreamExperimentsRelateTheirVariantsAndSayWhatIsNotApplicable) {
  const Deck deck = parse_deck(R"(
reps = 2
warmups = 1
calibrate = "none"
spaces = ["Serial", "OpenMP"]
[copy_overlap]
sizes = [1000]
copies = ["pageable", "none"]
chunks = 5
degree = 3
[concurrent_small]
sizes = [64]
copies = "none"
kernels = 6
degree = 3
)",
                               "streams.toml", catalog());
  RunOptions options;
  const RunSummary summary = run_deck(deck, options, nlohmann::json::object());
  EXPECT_EQ(summary.failed + summary.errors, 0);
  const int openmp_threads = Kokkos::OpenMP().concurrency();
  int not_applicable = 0;
  for (const auto& r : summary.results) {
    SCOPED_TRACE(r.experiment + " " + r.variant + " " + r.space + " " +
                 std::string(to_string(r.copies)));
    if (r.status == Status::not_applicable) {
      ++not_applicable;
      EXPECT_EQ(r.note.rfind("not applicable: ", 0), 0u) << r.note;
      continue;
    }
    ASSERT_EQ(r.status, Status::pass) << r.note;
    EXPECT_FALSE(r.metrics.empty());
    if (r.experiment == "copy_overlap") {
      EXPECT_EQ(to_string(r.parameters), "chunks=5 degree=3");
      EXPECT_EQ(r.metric("chunks"), 5.0);
      if (r.variant == "serial") {
        EXPECT_GT(r.metric("perfect_overlap_ms"), 0.0);
      } else {
        EXPECT_GT(r.metric("of_perfect"), 0.0);
        EXPECT_GT(r.metric("speedup_over_serial"), 0.0);
        EXPECT_NE(r.timed_by.find("instances"), std::string::npos) << r.timed_by;
      }
    } else {
      EXPECT_GT(r.metric("kernels_per_ms"), 0.0);
      EXPECT_GT(r.metric("vs_1"), 0.0);
      EXPECT_EQ(r.metric("of_perfect") > 0.0, r.variant != "instances_1");
      EXPECT_EQ(r.launches, 6.0);
    }
  }
  // copies = none has nothing to overlap (6 rows); an OpenMP of fewer threads
  // than instances cannot be split (concurrent_small 2/4/8, copy_overlap 2/3).
  int expected = 6;
  for (int k : {2, 4, 8}) expected += openmp_threads < k;
  for (int k : {2, 3}) expected += openmp_threads < k;
  EXPECT_EQ(not_applicable, expected);
  EXPECT_EQ(summary.not_applicable, expected);
  EXPECT_EQ(summary.to_json()["not_applicable"], expected);
}
#endif

}  // namespace
}  // namespace portalab

namespace portalab {
namespace {

// The order a seed gives is the generator's, written in once: the same in
// every build and standard library (a seed in a results file repeats it).
TEST(Order, ASeedGivesOneOrderInEveryBuild) {
  std::vector<std::size_t> order{0, 1, 2, 3, 4};
  std::mt19937_64 rng(42);
  shuffle(order, rng);
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3, 4}));  // a permutation
  EXPECT_EQ(order, (std::vector<std::size_t>{2, 3, 4, 0, 1}));
  std::vector<std::size_t> again{0, 1, 2, 3, 4};
  std::mt19937_64 same(42);
  shuffle(again, same);
  EXPECT_EQ(again, order);
  // Every one of the 6 orders of three turns up within a few draws.
  std::set<std::vector<std::size_t>> seen;
  std::mt19937_64 more(7);
  for (int i = 0; i < 200; ++i) {
    std::vector<std::size_t> three{0, 1, 2};
    shuffle(three, more);
    seen.insert(three);
  }
  EXPECT_EQ(seen.size(), 6u);
}

// The calls a run of test_logged made: its three variants at `reps` each,
// with the order given (or in order, without).
std::vector<int> logged_calls(std::optional<std::uint64_t> seed, int reps = 8) {
  const Deck deck = parse_deck(fmt::format(R"(
warmups = 2
spaces = ["Serial"]
copies = ["none"]
[test_logged]
sizes = [100]
reps = {}
)",
                                           reps),
                               "logged.toml", test_registry().catalog());
  RunOptions options;
  options.registry = &test_registry();
  options.order_seed = seed;
  calls.clear();
  const RunSummary summary = run_deck(deck, options, nlohmann::json::object());
  EXPECT_EQ(summary.results.size(), 3u);
  for (const Result& r : summary.results) {
    EXPECT_EQ(r.status, Status::pass) << r.variant << ": " << r.note;
    EXPECT_EQ(r.kernel_reps_ms.size(), static_cast<std::size_t>(reps));
  }
  // The rows in the deck's order, whatever order they ran in.
  if (summary.results.size() == 3) {
    EXPECT_EQ(summary.results[0].variant, "a");
    EXPECT_EQ(summary.results[2].variant, "c");
  }
  return calls;
}

// Each variant's cold call and warm-ups come first, in the listed order, each
// then checked (the check before the timed calls, which overwrite the
// outputs); the timed repetitions follow in rounds, each round every
// variant once in a shuffled order: the same for the same seed; without one,
// each variant whole.
TEST(Order, TheVariantsOfACaseTakeTurnsInASeededShuffledOrder) {
  const std::vector<int> got = logged_calls(123);
  // The cold call and two warm-ups, then the check.
  const std::vector<int> prepared{0, 0, 0, checked, 1, 1, 1, checked, 2, 2, 2, checked};
  const std::size_t p = prepared.size();
  ASSERT_EQ(got.size(), p + 3 * 8);
  EXPECT_EQ(std::vector<int>(got.begin(), got.begin() + p), prepared);
  int shuffled_rounds = 0;
  for (std::size_t round = 0; round < 8; ++round) {
    std::vector<int> turn(got.begin() + p + 3 * round, got.begin() + p + 3 * (round + 1));
    if (turn != std::vector<int>{0, 1, 2}) ++shuffled_rounds;
    std::sort(turn.begin(), turn.end());
    EXPECT_EQ(turn, (std::vector<int>{0, 1, 2})) << "round " << round;
  }
  EXPECT_GT(shuffled_rounds, 0);  // 8 rounds in the listed order: (1/6)^8
  EXPECT_EQ(logged_calls(123), got);
  EXPECT_NE(logged_calls(124), got);
  // Without a seed: each variant whole, its repetitions in one block and
  // then its check (of their outputs), as a profile's ranges expect.
  std::vector<int> blocks;
  for (int v = 0; v < 3; ++v) {
    blocks.insert(blocks.end(), 3 + 8, v);
    blocks.push_back(checked);
  }
  EXPECT_EQ(logged_calls(std::nullopt), blocks);
}

}  // namespace
}  // namespace portalab
