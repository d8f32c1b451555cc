// "Did you mean": the known name nearest to a mistyped one, for the messages
// that refuse an unknown command, option, key or name. No Kokkos.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// Edits (insert, delete, substitute, swap two neighbours) from a to b,
// letters compared without case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word` when it is near enough to be a slip (at
// most a third of its letters off, at least one) or starts with it; "" when
// none is. The first in `candidates` wins a tie.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

// "; did you mean 'X'?" for the nearest candidate, or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace portalab
