// What the fuzzers share: the catalog of a host build, written out (the deck
// parser needs no Kokkos), and the way a broken invariant is reported.
#pragma once

#include "deck/catalog.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace portalab::fuzz {

inline const Catalog& fuzz_catalog() {
  static const Catalog c{
      {{"stream_copy", "z = x", {"kernel", "deep_copy"}, {1'000'000}, {"float64"},
        {"float64", "float32"}, Bound::memory},
       {"vector_poly", "z = a*x^2 + b*y + c", {"fused", "unfused"}, {1'000'000}, {"float64"},
        {"float64", "float32"}, Bound::memory}},
      {"Serial", "OpenMP", "Cuda"}};
  return c;
}

// A finding: abort, so that libFuzzer keeps the input.
[[noreturn]] inline void broken(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace portalab::fuzz
