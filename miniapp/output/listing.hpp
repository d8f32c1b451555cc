// What the formats of `portalab list` share (markdown.hpp, json.hpp,
// console.hpp): sizes as a deck writes them, a parameter's default and
// range, a deck's leading comment.
#pragma once

#include "deck/deck.hpp"
#include "experiment/registry.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace portalab {

// A size as a deck would write it: 5e6 for 5000000, 7000 as it is.
std::string size_text(std::size_t n);
std::vector<std::string> sizes_text(const std::vector<std::size_t>& sizes);
// "1 to 64", or the choices: "a | b".
std::string parameter_range(const ParameterSpec& p);
// The default, by name where the parameter has choices.
std::string parameter_default(const ParameterSpec& p);
// The deck's comment lines before its first key, without the '#'.
std::vector<std::string> leading_comment(const std::filesystem::path& deck);
std::vector<std::string> copies_text(const std::vector<CopyMode>& copies);
// "key=value key=value".
std::string parameters_text(const Parameters& parameters);

}  // namespace portalab
