// What a deck is checked against: the experiments registered and the
// execution spaces compiled in. Plain data, no Kokkos, so that the deck
// parser builds with the host compiler alone.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

struct ExperimentSpec {
  std::string name;
  std::string summary;
  std::vector<std::string> variants;       // the first is the default to compare
  std::vector<std::size_t> default_sizes;  // when a deck gives none
  std::vector<std::string> default_dtypes;
  std::vector<std::string> dtypes;  // every type the experiment is built for
  // What limits it: "memory" (its GB/s against the copy bandwidth) or
  // "compute" (its GFLOP/s against the vendor gemm rate of its type).
  std::string bound = "memory";
};

struct Catalog {
  std::vector<ExperimentSpec> experiments;  // sorted by name
  std::vector<std::string> spaces;          // Kokkos' spelling, host spaces first

  const ExperimentSpec* find(std::string_view name) const {
    for (const auto& e : experiments)
      if (e.name == name) return &e;
    return nullptr;
  }
};

}  // namespace portalab
