// The runner keeps going past a failed check: every entry is measured and
// written, the failure is listed in the summary, and the driver's exit code
// (from summary.failed) is non-zero.
#include "deck.hpp"
#include "experiment.hpp"
#include "runner.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace portalab {
namespace {

// Copies x into z but checks against x + 1: every run of it fails its check.
template <class Space, class T>
class WrongAnswer {
 public:
  WrongAnswer(CaseContext<Space>& ctx, std::size_t n)
      : m_x(ctx, "x", In{0.0, 1.0}, n), m_z(ctx, "z", Out{}, n) {}
  void run(const Space& exec, std::string_view) {
    Kokkos::deep_copy(exec, m_z.device(), m_x.device());
  }
  Check verify(std::string_view) const {
    const T* x = m_x.host().data();
    return compare_elementwise(
        m_z.host().data(), static_cast<std::int64_t>(m_z.size()),
        [&](std::int64_t i) { return x[i] + 1.0; }, elementwise_tolerance<T>(1));
  }
  static Work work(std::size_t n, std::string_view) { return {2.0 * sizeof(T) * n, 0}; }
  static std::size_t footprint(std::size_t n) { return 2 * sizeof(T) * n; }

 private:
  Mirrored<T*, Space> m_x, m_z;
};

[[maybe_unused]] const bool registered = register_experiment<WrongAnswer, double>({
    .name = "test_wrong_answer",
    .summary = "tests only: a result that never passes its check",
    .variants = {"copy"},
    .default_sizes = {100},
    .default_dtypes = {"float64"},
});

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
                               "failing.toml", catalog());
  const auto dir = std::filesystem::temp_directory_path() / "portalab_test_runner";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RunOptions options;
  options.out_dir = dir.string();
  const RunSummary summary = run_deck(deck, options, nlohmann::json::object());

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
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace portalab
