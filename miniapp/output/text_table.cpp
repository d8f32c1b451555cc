#include "output/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace portalab {

std::string text_table(const std::vector<std::vector<std::string>>& lines) {
  std::vector<std::size_t> width;
  for (const auto& l : lines)
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], l[i].size());
    }
  // Padded in place (a history is tens of thousands of lines); text beyond
  // ASCII padded by fmt, which counts its width as a terminal shows it.
  std::string out;
  for (const auto& l : lines) {
    const std::size_t start = out.size();
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (i + 1 == l.size()) {
        out += l[i];
      } else if (std::all_of(l[i].begin(), l[i].end(),
                             [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
        out += l[i];
        out.append(width[i] - l[i].size() + 2, ' ');
      } else {
        fmt::format_to(std::back_inserter(out), "{:<{}}  ", l[i], width[i]);
      }
    }
    while (out.size() > start && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

}  // namespace portalab
