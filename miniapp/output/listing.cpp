#include "output/listing.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>

namespace portalab {

std::string size_text(std::size_t n) {
  int exponent = 0;
  std::size_t mantissa = n;
  while (mantissa != 0 && mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  return exponent >= 4 ? fmt::format("{}e{}", mantissa, exponent) : std::to_string(n);
}

std::vector<std::string> sizes_text(const std::vector<std::size_t>& sizes) {
  std::vector<std::string> out;
  for (auto n : sizes) out.push_back(size_text(n));
  return out;
}

std::string parameter_range(const ParameterSpec& p) {
  if (!p.choices.empty()) return fmt::format("{}", fmt::join(p.choices, " | "));
  return fmt::format("{} to {}", p.min, p.max);
}

std::string parameter_default(const ParameterSpec& p) {
  const auto i = static_cast<std::size_t>(p.default_value);
  if (!p.choices.empty() && p.default_value >= 0 && i < p.choices.size()) return p.choices[i];
  return std::to_string(p.default_value);
}

std::vector<std::string> leading_comment(const std::filesystem::path& deck) {
  std::ifstream in(deck);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos) {
      if (!lines.empty()) break;
      continue;
    }
    if (line[start] != '#') break;
    std::string text = line.substr(start + 1);
    if (!text.empty() && text.front() == ' ') text.erase(0, 1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    lines.push_back(text);
  }
  return lines;
}

std::vector<std::string> copies_text(const std::vector<CopyMode>& copies) {
  std::vector<std::string> out;
  for (auto m : copies) out.emplace_back(to_string(m));
  return out;
}

std::string parameters_text(const Parameters& parameters) {
  std::vector<std::string> out;
  for (const auto& [k, v] : parameters) out.push_back(fmt::format("{}={}", k, v));
  return fmt::format("{}", fmt::join(out, " "));
}

}  // namespace portalab
