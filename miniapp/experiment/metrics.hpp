// Figures measured beside a row's phases, by name: what a variant reports
// (CallRecord), what a row keeps (results/result.hpp), and those relating a
// case's variants to each other (experiment/relate.hpp).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portalab {

using Metrics = std::vector<std::pair<std::string, double>>;  // in the order first set

// The value of `name` in metrics, or absent where it has none.
inline double metric(const Metrics& metrics, std::string_view name, double absent = 0.0) {
  for (const auto& [k, v] : metrics)
    if (k == name) return v;
  return absent;
}

// Sets `name` to value; a name metrics does not have yet goes last.
inline void set_metric(Metrics& metrics, std::string_view name, double value) {
  for (auto& [k, v] : metrics)
    if (k == name) {
      v = value;
      return;
    }
  metrics.emplace_back(std::string(name), value);
}

}  // namespace portalab
