// What the fuzzers share: the catalog of a host build, written out (the deck
// parser needs no Kokkos), and the way a broken invariant is reported.
#pragma once

#include "deck/catalog.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace portalab::fuzz {

inline const Catalog& fuzz_catalog() {
  static const Catalog c{{{"stream_copy",
                           "z = x",
                           {"kernel", "deep_copy"},
                           {1'000'000},
                           {"float64"},
                           {"float64", "float32"},
                           Bound::memory},
                          {"vector_poly",
                           "z = a*x^2 + b*y + c",
                           {"fused", "unfused"},
                           {1'000'000},
                           {"float64"},
                           {"float64", "float32"},
                           Bound::memory}},
                         {"Serial", "OpenMP", "Cuda"}};
  return c;
}

// A finding: abort, so that libFuzzer keeps the input.
[[noreturn]] inline void broken(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// Every message shows untrusted text quoted and cut (support/text.hpp): no
// control byte of the input reaches a terminal, no value is echoed whole.
inline void check_message(std::string_view m) {
  for (const char c : m)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) broken("a control byte in a message", m);
  if (m.size() > 8192) broken("a message of more than 8 kB", m.substr(0, 300));
}

}  // namespace portalab::fuzz
