// What relates a case's variants to each other once all are measured
// (ExperimentInfo::relate): the overlap one variant gained over another, the
// rate against one instance. The rows are the engine's (results/result.hpp,
// a layer above); an experiment sees each through a CaseRow, the little of a
// row it compares, and adds its figures to the row's metrics.
#pragma once

#include "experiment/metrics.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>

namespace portalab {

// One row of the case, as the experiment's relate sees it.
struct CaseRow {
  std::string_view variant;
  std::string_view dtype;
  std::size_t n = 0;
  bool passed = false;     // its check passed
  double kernel_ms = 0.0;  // the kernel phase's median
  Metrics& metrics;        // the row's own: what relate sets, the row keeps

  double metric(std::string_view name, double absent = 0.0) const {
    return portalab::metric(metrics, name, absent);
  }
  void set_metric(std::string_view name, double value) {
    portalab::set_metric(metrics, name, value);
  }
};

// The row of `variant` among rows, if its check passed; else nullptr.
inline const CaseRow* passing_row(std::span<const CaseRow> rows, std::string_view variant) {
  for (const auto& r : rows)
    if (r.variant == variant && r.passed) return &r;
  return nullptr;
}

// Adds the figures comparing a case's variants to its rows: one row per
// variant the deck runs (whatever its status), of one size, type, space, copy
// mode and count of ranks.
using Relate = std::function<void(std::span<CaseRow> rows)>;

}  // namespace portalab
