// What a deck is checked against: the experiments registered and the
// execution spaces compiled in. Plain data, no Kokkos, so that the deck
// parser builds with the host compiler alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// What limits an experiment, and so which calibrated limit its rate is held
// to: memory (GB/s against the copy bandwidth), read (a kernel that reads and
// writes nothing back: GB/s against the read bandwidth, which a copy's write
// traffic keeps a copy from reaching), compute (GFLOP/s against the
// vendor gemm rate of its type), transfer (GB/s against host<->device copies
// both ways at once), peer and peer_duplex (GB/s against the copy engines
// between two GPUs, one way or both at once), collective (bus GB/s against
// the allreduce calibrated among the run's ranks).
enum class Bound { memory, read, compute, transfer, peer, peer_duplex, collective };

constexpr std::string_view to_string(Bound b) {
  switch (b) {
    case Bound::memory: return "memory";
    case Bound::read: return "read";
    case Bound::compute: return "compute";
    case Bound::transfer: return "transfer";
    case Bound::peer: return "peer";
    case Bound::peer_duplex: return "peer_duplex";
    case Bound::collective: return "collective";
  }
  return "?";
}

// An integer setting of one experiment that a deck may give in its table
// (copy_overlap's chunks): a single value per plan, not a sweep axis.
struct ParameterSpec {
  std::string name;
  std::int64_t default_value = 0;
  std::int64_t min = 1, max = 1 << 30;
  std::string meaning;
  // Names a deck may give instead of the numbers 0, 1, ... (scaling =
  // "strong" for 0); the parameter then takes those numbers alone.
  std::vector<std::string> choices;
};
// The values of an experiment's parameters, by name, all present.
using Parameters = std::map<std::string, std::int64_t, std::less<>>;

struct ExperimentSpec {
  std::string name;
  std::string summary;
  std::vector<std::string> variants;       // from the experiment's table of variants
  std::vector<std::size_t> default_sizes;  // when a deck gives none
  std::vector<std::string> default_dtypes;
  std::vector<std::string> dtypes;  // every type the experiment is built for
  Bound bound = Bound::memory;
  std::vector<ParameterSpec> parameters;
  // Every variant computes bit-identical outputs (the same arithmetic run
  // sequentially or concurrently): the tests compare their digests.
  bool same_outputs = false;
  // It moves data between ranks: its declared work is the whole group's,
  // and it has no meaning without the other ranks. Otherwise every rank of
  // an entry runs an independent case of size n (weak scaling).
  bool distributed = false;

  Parameters default_parameters() const {
    Parameters p;
    for (const auto& d : parameters) p[d.name] = d.default_value;
    return p;
  }
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
