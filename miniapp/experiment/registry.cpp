#include "experiment/experiment.hpp"
#include "platform/instances.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace portalab {

Registry& global_registry() {
  // Function-local so that registration at static initialisation, from any
  // translation unit, finds it constructed.
  static Registry registry;
  return registry;
}

void Registry::add(ExperimentInfo info) {
  if (find(info.name)) throw std::logic_error("experiment registered twice: " + info.name);
  auto at = std::lower_bound(m_all.begin(), m_all.end(), info.name,
                             [](const ExperimentInfo& e, const std::string& n) {
                               return e.name < n;
                             });
  m_all.insert(at, std::move(info));
}

const ExperimentInfo* Registry::find(std::string_view name) const {
  for (const auto& e : m_all)
    if (e.name == name) return &e;
  return nullptr;
}

Catalog Registry::catalog() const {
  Catalog c;
  for (const auto& e : m_all) c.experiments.push_back(e);
  c.spaces = enabled_space_names();
  return c;
}

std::size_t ExperimentInfo::variant_index(std::string_view name) const {
  const auto it = std::find(variants.begin(), variants.end(), name);
  if (it == variants.end())
    throw std::invalid_argument(fmt::format("{} has no variant '{}'", this->name, name));
  return static_cast<std::size_t>(it - variants.begin());
}

std::string ExperimentInfo::not_applicable(std::string_view space, std::string_view dtype,
                                           std::size_t v, CopyMode mode) const {
  const VariantTraits& t = traits.at(v);
  for (const auto& u : t.unserved)
    if (u.space == space && u.dtype == dtype) return u.why;
  if (t.needs_copies && mode == CopyMode::none)
    return fmt::format("{} times its own copies; copies = none makes none", variants[v]);
  if (unavailable)
    if (std::string why = unavailable(space, v); !why.empty()) return why;
  std::string why;
  if (t.instances > 1)
    for_each_space([&](auto tag) {
      using Space = typename decltype(tag)::type;
      if (space == Space::name()) why = why_not_partitionable(Space(), t.instances);
    });
  return why;
}

}  // namespace portalab
