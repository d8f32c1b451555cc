// The smallest useful kernel, for measuring what a launch costs: launch k
// writes out(k) = k + 1, so a check sees that every launch ran.
#pragma once

#include "range.hpp"

#include <Kokkos_Core.hpp>
#include <Kokkos_Graph.hpp>

#include <cstdint>

namespace portalab::kernels {

// A named functor rather than a lambda: graph nodes are built inside a
// generic lambda, where CUDA allows no extended lambda.
template <class V>
struct WriteIndex {
  V out;
  KOKKOS_FUNCTION void operator()(std::int64_t i) const { out(i) = i + 1; }
};

// One launch of one iteration: out(k) = k + 1. 8 bytes written.
template <class Exec, class V>
void write_index(const Exec& exec, const V& out, std::int64_t k) {
  Kokkos::parallel_for("portalab::write_index", Range<Exec>(exec, k, k + 1), WriteIndex<V>{out});
}

// The same launches, one per element of out, as the nodes of one Kokkos
// Graph: independent nodes hanging from the root, submitted together.
template <class Exec, class V>
Kokkos::Experimental::Graph<Exec> write_index_graph(const Exec& exec, const V& out) {
  return Kokkos::Experimental::create_graph(exec, [&](const auto& root) {
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(out.extent(0)); ++k)
      root.then_parallel_for("portalab::write_index", Range<Exec>(k, k + 1), WriteIndex<V>{out});
  });
}

}  // namespace portalab::kernels
