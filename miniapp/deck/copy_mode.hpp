// How an experiment's inputs reach the execution space it runs in.
#pragma once

#include <optional>
#include <string_view>

namespace portalab {

enum class CopyMode {
  pageable,  // created on the host in ordinary memory, copied in and out
  pinned,    // created on the host in page-locked memory, copied in and out
  none,      // created where the kernel runs: the kernel is timed alone
};

constexpr std::string_view to_string(CopyMode mode) {
  switch (mode) {
    case CopyMode::pageable: return "pageable";
    case CopyMode::pinned: return "pinned";
    case CopyMode::none: return "none";
  }
  return "?";
}

constexpr std::optional<CopyMode> parse_copy_mode(std::string_view s) {
  for (auto m : {CopyMode::pageable, CopyMode::pinned, CopyMode::none})
    if (s == to_string(m)) return m;
  return std::nullopt;
}

}  // namespace portalab
