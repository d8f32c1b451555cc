#include "command_line.hpp"
#include "support/suggest.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace portalab {
namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

}  // namespace

// The first word that is no option: the command (portalab's own options
// take no value); "" when there is none.
std::string command_word(const std::vector<char*>& args) {
  for (std::size_t i = 1; i < args.size(); ++i)
    if (args[i][0] != '-') return args[i];
  return {};
}

// Why `word` names no command ("" when it names one): CLI11 would say "A
// subcommand is required" of a mistyped one.
std::string unknown_command(const CLI::App& app, const std::string& word) {
  const auto names = command_names(app);
  if (word.empty())
    return fmt::format("a command is required: one of {} (`portalab help` describes them)",
                       fmt::join(names, ", "));
  if (std::find(names.begin(), names.end(), word) != names.end()) return {};
  return fmt::format("'{}' is not a portalab command ({}){}", shown(word), fmt::join(names, ", "),
                     did_you_mean(word, names));
}

// What a command was given and does not take, said with the nearest option
// (CLI11 says "The following argument was not expected").
std::string not_expected(const CLI::App& app, const std::string& word) {
  const CLI::App* sub = word.empty() ? nullptr : app.get_subcommand(word);
  // A command's own command (`db import`): the innermost one given.
  std::string path = sub ? sub->get_name() : std::string();
  while (sub && !sub->get_subcommands().empty()) {
    sub = sub->get_subcommands().front();
    path += " " + sub->get_name();
  }
  const CLI::App& command = sub && !sub->remaining().empty() ? *sub : app;
  const auto extras = command.remaining();
  const std::string name = &command == &app ? std::string("portalab") : path;
  const std::string help = &command == &app ? std::string("`portalab help` lists what it takes")
                           : path.find(' ') == std::string::npos
                               ? fmt::format("`portalab help {}` lists what it takes", name)
                               : fmt::format("`portalab {} --help` lists what it takes", name);
  for (const auto& extra : extras) {
    if (extra.empty() || extra[0] != '-') continue;
    std::vector<std::string> options;
    for (const CLI::Option* o : command.get_options())
      for (const auto& long_name : o->get_lnames()) options.push_back("--" + long_name);
    return fmt::format("{}: unknown option '{}' ({}){}", name, shown(extra), help,
                       did_you_mean(extra.substr(0, extra.find('=')), options));
  }
  return fmt::format("{}: '{}' was not expected ({})", name,
                     shown(fmt::format("{}", fmt::join(extras, " "))), help);
}

}  // namespace portalab
