#include "support/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace portalab {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  };
  // Optimal string alignment: three rows of the Levenshtein table.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min(
          {last[j] + 1, row[j - 1] + 1, last[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return {};
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    // A word far longer than every name is no slip (and a deck key may be long).
    if (word.size() > 2 * c.size() + 2) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (!best.empty()) return best;
  if (word.size() >= 2)  // an abbreviation: "cal" for calibrate
    for (const auto& c : candidates)
      if (c.size() > word.size() && edit_distance(word, c.substr(0, word.size())) == 0) return c;
  return {};
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string n = nearest(word, candidates);
  return n.empty() ? std::string() : fmt::format("; did you mean '{}'?", n);
}

}  // namespace portalab
