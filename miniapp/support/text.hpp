// Untrusted text in a message: a deck's names and keys, a path or an option
// from the command line, a file's contents. Echoed raw, an ESC or BEL byte
// retitles or clears the terminal that shows the message, and a megabyte
// name is printed whole. No Kokkos: part of portalab_base.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace portalab {

// The longest value a message shows whole.
inline constexpr std::size_t shown_max_bytes = 200;

// `text` as a message shows it: control bytes, DEL, C1 controls, invalid
// UTF-8 and the bidirectional overrides as \xNN (\n, \t and \r for those),
// text past `max_bytes` cut at a character's start and followed by "... (N
// bytes)". Printable text, UTF-8 included, is left as it is.
std::string shown(std::string_view text, std::size_t max_bytes = shown_max_bytes);

// A whole message (its lines kept) made safe for a terminal: every line's
// bytes quoted as shown() quotes them, the message cut past `max_bytes`. The
// last guard of what portalab prints (console.hpp's print_to).
std::string terminal_safe(std::string_view message, std::size_t max_bytes = 16384);

}  // namespace portalab
