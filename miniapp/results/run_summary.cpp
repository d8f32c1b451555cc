#include "results/run_summary.hpp"

#include "results/analysis.hpp"
#include "support/exit_status.hpp"
#include "support/interrupt.hpp"

namespace portalab {

nlohmann::json RunSummary::to_json(bool analysis) const {
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& r : results)
    if (r.status == Status::fail || r.status == Status::error)
      failures.push_back({{"experiment", r.experiment},
                          {"variant", r.variant},
                          {"space", r.space},
                          {"dtype", r.dtype},
                          {"n", r.n},
                          {"copies", std::string(portalab::to_string(r.copies))},
                          {"check", std::string(portalab::to_string(r.status))},
                          {"detail", r.note.empty() ? r.check.detail : r.note}});
  nlohmann::json j = {{"entries", results.size()},
                      {"failed", failed},
                      {"errors", errors},
                      {"skipped", skipped},
                      {"not_applicable", not_applicable},
                      {"failures", failures}};
  if (analysis) j.update(analysis_json(results));
  if (!limits_rechecked.empty()) j["limits_rechecked"] = limits_rechecked;
  if (!incomplete.empty()) j["incomplete"] = incomplete;
  if (interrupted_by != 0)
    j["interrupted"] = {{"signal", signal_name(interrupted_by)},
                        {"abandoned", abandoned},
                        {"not_run", not_run}};
  return j;
}

bool nothing_measured(const RunSummary& summary) {
  return static_cast<int>(summary.results.size()) == summary.skipped + summary.not_applicable;
}

int exit_status(const RunSummary& summary) {
  if (summary.interrupted_by != 0) return 128 + summary.interrupted_by;
  if (summary.failed + summary.errors > 0 || !summary.incomplete.empty()) return exit_check_failed;
  // A run that measured nothing has nothing to report, whatever its cause.
  if (nothing_measured(summary)) return exit_nothing_measured;
  return 0;
}

}  // namespace portalab
