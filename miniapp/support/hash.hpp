// FNV-1a, 64 bits: seeds for input arrays and a fingerprint of deck files.
#pragma once

#include <cstdint>
#include <string_view>

namespace portalab {

constexpr std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

}  // namespace portalab
