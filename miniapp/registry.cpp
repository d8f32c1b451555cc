#include "experiment.hpp"

#include <algorithm>
#include <stdexcept>

namespace portalab {
namespace {
// Function-local so that registration at static initialisation, from any
// translation unit, finds it constructed.
std::vector<ExperimentInfo>& registry() {
  static std::vector<ExperimentInfo> all;
  return all;
}
}  // namespace

const std::vector<ExperimentInfo>& experiments() {
  return registry();
}

const ExperimentInfo* find_experiment(std::string_view name) {
  for (const auto& e : registry())
    if (e.name == name) return &e;
  return nullptr;
}

Catalog catalog() {
  Catalog c;
  for (const auto& e : registry()) c.experiments.push_back(e);
  c.spaces = enabled_space_names();
  return c;
}

bool detail::add_experiment(ExperimentInfo info) {
  if (find_experiment(info.name))
    throw std::logic_error("experiment registered twice: " + info.name);
  auto& all = registry();  // kept sorted by name for listings
  auto at = std::lower_bound(all.begin(), all.end(), info.name,
                             [](const ExperimentInfo& e, const std::string& n) { return e.name < n; });
  all.insert(at, std::move(info));
  return true;
}

}  // namespace portalab
