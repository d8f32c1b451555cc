#include "support/text.hpp"

#include <fmt/format.h>

namespace portalab {
namespace {

// The length of the UTF-8 character at text[i] when it is one a terminal
// shows as a character (printable, not a control or a direction override),
// else 0.
std::size_t printable_at(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c >= 0x20 && c < 0x7f) return 1;
  if (c < 0xc2 || c > 0xf4) return 0;  // no lead byte of UTF-8
  // The lead byte says the length and holds the first bits.
  const std::size_t length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
  char32_t code = c & (0x7f >> length);
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3f);
  }
  // Overlong forms, surrogates and beyond U+10FFFF are no UTF-8.
  const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < least[length] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  // C1 controls (U+009B is a terminal's CSI); the bidirectional overrides and
  // isolates reorder what follows them on the line.
  if (code < 0xa0 || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069))
    return 0;
  return length;
}

void quote_byte(std::string& out, unsigned char c) {
  switch (c) {
    case '\n': out += "\\n"; return;
    case '\t': out += "\\t"; return;
    case '\r': out += "\\r"; return;
    default: out += fmt::format("\\x{:02x}", c);
  }
}

// text quoted onto out; with keep_lines, its line breaks and tabs kept.
void quote(std::string& out, std::string_view text, bool keep_lines) {
  for (std::size_t i = 0; i < text.size();) {
    if (keep_lines && (text[i] == '\n' || text[i] == '\t')) {
      out += text[i++];
    } else if (const std::size_t n = printable_at(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      quote_byte(out, static_cast<unsigned char>(text[i++]));
    }
  }
}

// Where to cut text to keep at most max bytes: not inside a UTF-8 character.
// A character is at most four bytes, so at most three are given back: a run of
// stray continuation bytes (invalid UTF-8, escaped when quoted) is cut at max,
// not walked back to its start.
std::size_t cut_at(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text.size();
  std::size_t at = max;
  while (at > 0 && max - at < 3 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) --at;
  return (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80 ? max : at;
}

}  // namespace

std::string shown(std::string_view text, std::size_t max_bytes) {
  const std::size_t keep = cut_at(text, max_bytes);
  std::string out;
  out.reserve(keep + 16);
  quote(out, text.substr(0, keep), false);
  if (keep < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

std::string terminal_safe(std::string_view message, std::size_t max_bytes) {
  const std::size_t keep = cut_at(message, max_bytes);
  std::string out;
  out.reserve(keep + 16);
  quote(out, message.substr(0, keep), true);
  if (keep < message.size())
    out += fmt::format("... ({} bytes; the rest not shown)\n", message.size());
  return out;
}

}  // namespace portalab
