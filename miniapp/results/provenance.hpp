// Where a result came from: software, build, machine, job and deck.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace portalab {

struct Deck;

// The facts that let someone repeat or compare a run. Needs Kokkos initialised.
nlohmann::json collect_provenance(const Deck* deck, const std::vector<std::string>& command);

// The git commit portalab was built from, with "-dirty" if the tree had changes.
std::string build_commit();

// This rank: host, rank, node-local rank, CPUs it may run on, MPI, and the
// device Kokkos gave it (id, PCI bus id, UUID). Needs Kokkos initialised.
nlohmann::json rank_provenance();

}  // namespace portalab
