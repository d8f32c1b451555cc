// What portalab says of a command line it cannot take: a command it does
// not have, an option or argument a command does not take, each with the
// nearest names (CLI11's own messages name neither).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace portalab {

// The first word that is no option: the command (portalab's own options
// take no value); "" when there is none.
std::string command_word(const std::vector<char*>& args);

// Why `word` names no command of `app` ("" when it names one).
std::string unknown_command(const CLI::App& app, const std::string& word);

// What the command `word` was given and does not take, with the nearest
// option.
std::string not_expected(const CLI::App& app, const std::string& word);

}  // namespace portalab
