// Between run_case and the Sink (engine/runner.hpp): every figure that
// relates rows, computed when a case closes, before any of its rows is
// written, from the case's rows and the figures kept of the rows before:
//   - a row on k > 1 ranks against the same entry on one rank
//     (speedup_over_1_rank, parallel_efficiency), which expand puts in an
//     earlier case;
//   - the case's variants to each other (ExperimentInfo::relate);
//   - on one rank, the case's rows against a space's limits measured again
//     because one of them outran them (recheck_bandwidth, limits/calibrate.hpp);
//   - each row's speedup over the baseline space (speedup_over_baseline),
//     against the rows of its group so far: the run puts the baseline space
//     first.
// A row leaves here final: the Sink writes it and nothing changes it after.
#pragma once

#include "experiment/relate.hpp"
#include "results/result.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace portalab {

struct Calibration;

// Limits measured again mid-run (one rank): where they are, and the run's
// hooks: free the case's arrays first, then say and record each recheck.
struct LimitsRecheck {
  Calibration* limits = nullptr;
  std::function<void()> free_case;
  std::function<void(nlohmann::json record, const std::string& said)> rechecked;
};

class Relations {
 public:
  // A case's rows, measured: their figures filled in. relate: the
  // experiment's (may be empty); recheck: none, or none of its limits,
  // where limits are not re-measured (several ranks, no calibration,
  // RunOptions::recheck_limits off).
  void close_case(std::span<Result> rows, const Relate& relate, const LimitsRecheck* recheck);

 private:
  // Of each passing one-rank row: its work and kernel median.
  struct OneRank {
    double work = 0.0, kernel_ms = 0.0;
  };
  // Of each row of a speedup group: what choosing its baseline reads.
  struct Member {
    std::string space;
    CopyMode copies = CopyMode::none;
    bool passed = false;
    double total_ms = 0.0;
  };
  void relate_to_one_rank(Result& r) const;
  void speedup_over_baseline(Result& r);

  std::map<std::string, OneRank> m_one_rank;
  std::map<std::tuple<std::string, std::string, std::string, std::size_t, int>, std::vector<Member>>
      m_groups;
};

}  // namespace portalab
