#include "engine/expand.hpp"

#include "experiment/registry.hpp"
#include "platform/space_names.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace portalab {
namespace {

bool applies(const std::string& space, CopyMode mode) {
  // Pinned memory speeds copies to a device; a host space has nothing to copy.
  return !(mode == CopyMode::pinned && is_host_space(space));
}

}  // namespace

const std::string& Entry::variant_name() const { return experiment->variants.at(variant); }

std::string Entry::describe() const {
  return fmt::format("{} {} {} {} n={} copies={}{}", experiment->name, variant_name(), space, dtype,
                     n, to_string(copies),
                     ranks > 1 ? fmt::format(" ranks={}", ranks) : std::string());
}

std::string Entry::too_few_ranks(int world_size) const {
  if (ranks <= world_size) return {};
  return fmt::format("not applicable: runs on {} ranks; this run has {}", ranks, world_size);
}

Parameters Entry::case_parameters() const {
  Parameters p = parameters;
  p["ranks"] = ranks;
  return p;
}

std::vector<Entry> expand(const Deck& deck, const Registry& registry, int world_size) {
  std::vector<Entry> entries;
  std::size_t case_id = 0;
  for (const auto& plan : deck.plans) {
    const ExperimentInfo* info = registry.find(plan.experiment);
    if (!info) throw InputError(fmt::format("{}: no experiment '{}'", deck.path, plan.experiment));
    const std::vector<int> ranks = plan.ranks.empty() ? std::vector<int>{world_size} : plan.ranks;
    for (std::size_t n : plan.sizes)
      for (const auto& dtype : plan.dtypes)
        for (const auto& space : plan.spaces)
          for (CopyMode mode : plan.copies) {
            if (!applies(space, mode)) continue;
            // Ranks innermost but for the variants: a row on k ranks follows
            // its one-rank row, to which its scaling is compared.
            for (int k : ranks) {
              for (const auto& variant : plan.variants) {
                entries.push_back({.experiment = info,
                                   .variant = info->variant_index(variant),
                                   .space = space,
                                   .dtype = dtype,
                                   .n = n,
                                   .copies = mode,
                                   .reps = plan.reps,
                                   .warmups = plan.warmups,
                                   .parameters = plan.parameters,
                                   .case_id = case_id,
                                   .ranks = k,
                                   .adaptive = plan.adaptive});
              }
              ++case_id;
            }
          }
  }
  return entries;
}

std::vector<std::string> entry_lines(const std::vector<Entry>& entries) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    std::string line = fmt::format("entry {}: {} {} warmups={}", i + 1, e.describe(),
                                   repetitions_text(e.reps, e.adaptive), e.warmups);
    for (const auto& [key, value] : e.parameters) line += fmt::format(" {}={}", key, value);
    lines.push_back(std::move(line));
  }
  return lines;
}

std::size_t count_entries(const Deck& deck) {
  std::size_t n = 0;
  for (const auto& p : deck.plans)
    for (const auto& space : p.spaces)
      for (auto mode : p.copies)
        if (applies(space, mode))
          n += p.sizes.size() * p.dtypes.size() * p.variants.size() *
               std::max<std::size_t>(1, p.ranks.size());
  return n;
}

}  // namespace portalab
