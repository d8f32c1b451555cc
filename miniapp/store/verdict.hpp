// Whether a row got faster, slower or stayed the same, as
// scripts/portalab/compare.py decides for two files (its docstring says why): the
// repetitions' ranges must not overlap, and the change of the median must
// exceed `sigmas` times the run-to-run noise combined with each side's
// standard error of the median. tests/scripts/test_store.py holds both to
// the same cases.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace portalab::store {

constexpr double default_sigmas = 4.0;
constexpr double default_min_noise = 0.01;
constexpr int min_group = 12;  // entries a decade needs for a noise of its own
// The most the noise between two runs may be, in times the noise between
// each run's own passes (Noise::cap).
constexpr double default_within_ratio = 3.0;

// One side of a comparison: a row's check and one phase's statistics.
struct Measure {
  std::string check;
  std::optional<double> ms, min_ms, max_ms, std_ms;
  std::optional<double> reps;
};

// The run-to-run noise of one phase (relative, as a log deviation), per
// decade of the base time, from pairs (base ms, new ms) of passing rows.
class Noise {
 public:
  Noise(const std::vector<std::pair<double, double>>& pairs, double floor = default_min_noise);
  double sigma(double base_ms) const;
  // Held to at most `ratio` times `within`'s sigma at each time: the noise
  // between two runs measured on the runs' own repeats (each side's passes
  // or runs), which a real change to many rows cannot widen. Two runs that
  // differ by more than that have changed, not drifted (judge_pairs).
  void cap(const Noise& within, double ratio);
  // Whether the cap lowers the sigma at this time.
  bool capped(double base_ms) const;
  double pooled() const { return m_pooled; }
  int count() const { return m_count; }
  const std::map<int, double>& by_decade() const { return m_by_decade; }
  double floor() const { return m_floor; }

 private:
  double raw(double base_ms) const;  // without the floor or the cap

  double m_floor, m_pooled = 0;
  int m_count = 0;
  std::map<int, double> m_by_decade;
  std::shared_ptr<const Noise> m_within;
  double m_ratio = 0;
};

double robust_sigma(std::vector<double> xs);
// The median (0 for none).
double median_of(std::vector<double> xs);
// A figure in these units is better lower (a latency); a rate otherwise.
bool lower_is_better(const std::string& unit);

// compare.py's classify: ("faster"|"slower"|"same"|"broken"|the new check in
// lower case, relative change of the median). noise_sigma: the run-to-run
// noise for this entry; none: the repetitions' spread alone decides.
std::pair<std::string, std::optional<double>> classify(const Measure& base, const Measure& now,
                                                       std::optional<double> noise_sigma,
                                                       double sigmas = default_sigmas);

// ---- Verdicts by a test (issue 57): the rule for rows that kept their
// repetitions (results schema 5). ----
constexpr double default_alpha = 0.01;      // the family-wise error rate, after Holm
constexpr double default_tolerance = 0.03;  // a change of the median smaller is no change

// One entry of both runs: each side's check and per-repetition times.
struct RepeatedPair {
  std::string base_check, now_check;
  std::vector<double> base_ms, now_ms;
  // The run-to-run noise the change must also exceed (relative): two runs
  // of one build differ by more than their repetitions' spread, and with
  // hundreds of repetitions the test is sure of any such drift.
  double min_change = 0.0;
};

struct TestedVerdict {
  // "faster", "slower", "same", "broken", the new check in lower case, or
  // "untested" where a side kept no repetitions (a file before version 5)
  // or too few for the test ever to reject at alpha (2 against 2).
  std::string verdict;
  std::optional<double> change;      // of the median, relative to the base's
  std::optional<double> p;           // the Mann-Whitney U test's, two-sided
  std::optional<double> p_adjusted;  // Holm's, over the pairs tested together
};

// Faster or slower only where the Mann-Whitney U test on the two sides'
// repetitions rejects at alpha after Holm's correction over every pair
// tested here, and the medians differ by more than `tolerance` (relative);
// otherwise the same. A check that passed in the base and not now is broken.
std::vector<TestedVerdict> verdicts_by_test(const std::vector<RepeatedPair>& pairs,
                                            double alpha = default_alpha,
                                            double tolerance = default_tolerance);

// One entry of two runs as `portalab verdicts` (compare.py) and `db
// history` judge it: each side's statistics and repetitions, and the
// entry's own run-to-run noise where its history measures it.
struct JudgedPair {
  Measure base, now;
  std::vector<double> base_ms, now_ms;  // empty: none kept
  // The entry's own run-to-run noise (of the difference of two runs, as a
  // log deviation), where its history measures it.
  std::optional<double> own_noise;
  // The run-to-run noise at its time measured on the pairs judged with it,
  // where those come from more than two runs (db history: per latest run).
  std::optional<double> run_noise;
  // Where a side was run more than once: each run's median (ms), its
  // repetitions above all its runs' together. A side of one run measured
  // in passes: each pass's median.
  std::vector<double> base_runs, now_runs;
};

// The deviation of the difference of the two sides' mean log medians, from
// how each side's runs spread about their own mean (pooled); none where
// neither side has two runs. A process keeps one state for all its
// repetitions (its CPU's clock, its neighbours, its placement), so one
// entry's runs can differ by far more than its repetitions or the other
// entries say: only runs repeated show it.
std::optional<double> runs_sigma(const std::vector<double>& base_runs,
                                 const std::vector<double>& now_runs);

struct Judgement : TestedVerdict {
  std::string rule;             // "test", "check" (a check decided) or "spread" (the older rule)
  std::optional<double> noise;  // the run-to-run noise the older rule used
  double min_change = 0.0;      // the test's: the change of the median had to exceed this
};

// Every pair's verdict, one rule for both commands: by the test
// (verdicts_by_test) where both sides kept enough repetitions, else by
// classify. Either way the change must exceed `sigmas` times the run-to-run
// noise at the base's time (`noise`, or the pair's run_noise where larger:
// measured on earlier runs, and on the pairs judged, which move together
// where the machine did), the pair's own_noise, and runs_sigma where the
// sides were repeated.
std::vector<Judgement> judge_pairs(const std::vector<JudgedPair>& pairs, const Noise& noise,
                                   double alpha, double tolerance, double sigmas);

}  // namespace portalab::store
