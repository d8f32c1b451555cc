// `portalab health`: one node's figures from a run of the health deck (its
// calibrated limits, each GPU's and the node's, and the links between its
// GPUs), each judged against the reference for its GPU or CPU model
// (references.hpp) and, where a store is given, against the same GPU's or
// node's own earlier runs. docs/health.md says how a site installs it.
#pragma once

#include "store/references.hpp"
#include "store/sqlite.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace portalab::store {

struct HealthOptions {
  // A rate below (1 - tolerance) of its reference or own median is
  // degraded; a latency above (1 + latency_slack * tolerance) of it.
  double tolerance_pct = 20;
  int history_runs = 10;  // the latest earlier runs of the same GPU or node looked at
  int min_history = 3;    // fewer earlier runs than this: no judgement from history
};
// Launch latencies wander more than bandwidths between quiet moments.
constexpr double latency_slack = 2.5;

struct HealthFigure {
  std::string kind;  // "gpu", "node" or "link"
  std::string id;    // the GPU's UUID; a node's host name
  std::string peer;  // a link: the UUID of the GPU at its other end
  std::string host, model;
  std::string space;     // the execution space that measured it
  std::string quantity;  // as the references name it: a node's with its space first
  std::string unit;
  double value = 0;
  std::optional<double> unsteady;  // slowest / fastest, where calibration found it unsteady
  std::optional<Reference> reference, published;
  std::optional<double> history;  // the median of the earlier runs
  int history_runs = 0;
  std::string verdict;  // "healthy", "degraded" or "unjudged"
  std::vector<std::string> reasons;
};

struct Health {
  std::string host, cpu_model, run_id, started_at, references;
  double tolerance_pct = 0;
  std::vector<HealthFigure> figures;
  std::vector<std::string> problems;  // what makes the node degraded beside its figures
  std::vector<std::string> notes;     // what was not judged, and why
  bool degraded() const;
};

// Judges the run in `results` (a results.json document of the health deck)
// against `refs` and, where db is given, the earlier runs it holds (the
// run itself left out). Throws StoreError(2) for a document that is no run.
Health judge_health(const nlohmann::json& results, const References& refs, Connection* db,
                    const HealthOptions& options);

nlohmann::json to_json(const Health& h);

}  // namespace portalab::store
