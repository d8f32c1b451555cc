#include "deck_search.hpp"

#include "deck.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <system_error>

// Set by CMake (GNUInstallDirs): the installed decks relative to the installed
// binary's folder, the build folder the binary is made in, and the source
// tree's decks.
#ifndef PORTALAB_DECKS_FROM_BIN
#define PORTALAB_DECKS_FROM_BIN "../share/portalab/inputs"
#endif
#ifndef PORTALAB_BUILD_DIR
#define PORTALAB_BUILD_DIR ""
#endif
#ifndef PORTALAB_SOURCE_DECKS
#define PORTALAB_SOURCE_DECKS ""
#endif

namespace portalab {
namespace fs = std::filesystem;
namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_folder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool same_folder(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

bool ends_with_toml(const std::string& s) {
  return s.size() > 5 && s.compare(s.size() - 5, 5, ".toml") == 0;
}

// The first line of the deck that starts with '#', without it and the blanks
// around it; "" when the deck has no comment before its first key.
std::string first_comment(const fs::path& deck) {
  std::ifstream in(deck);
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    if (line[start] != '#') return {};
    const auto text_start = line.find_first_not_of("# \t", start);
    if (text_start == std::string::npos) continue;  // a bare '#'
    std::string text = line.substr(text_start);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    if (!text.empty()) return text;
  }
  return {};
}

}  // namespace

fs::path executable_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

std::vector<fs::path> deck_folders(const fs::path& executable) {
  std::vector<fs::path> folders;
  if (executable.empty()) return folders;
  const fs::path bin = executable.parent_path();
  if (const fs::path installed = (bin / PORTALAB_DECKS_FROM_BIN).lexically_normal();
      is_folder(installed))
    folders.push_back(installed);
  // The source tree only for the binary of its own build tree: an installed
  // copy must not depend on where it was built from.
  const fs::path build = PORTALAB_BUILD_DIR, source = PORTALAB_SOURCE_DECKS;
  if (!build.empty() && !source.empty() && same_folder(bin, build) && is_folder(source))
    folders.push_back(source);
  return folders;
}

std::string find_deck(const std::string& arg, const std::vector<fs::path>& folders) {
  if (arg.empty()) throw InputError("the deck: expected a path or a deck's name, got ''");
  std::vector<std::string> tried;
  auto found = [&](const fs::path& p) {
    tried.push_back(p.string());
    return is_file(p);
  };
  if (found(arg)) return arg;
  // A path with a folder in it is only ever that path.
  if (arg.find('/') == std::string::npos) {
    const std::string file = ends_with_toml(arg) ? arg : arg + ".toml";
    if (file != arg && found(file)) return file;
    for (const auto& folder : folders)
      if (found(folder / file)) return (folder / file).string();
  }
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  throw InputError(fmt::format(
      "deck '{}': no such file; looked in this order at {} (relative paths from {}){}",
      arg, fmt::join(tried, ", "), ec ? "." : cwd.string(),
      arg.find('/') == std::string::npos
          ? "; `portalab list --decks` shows the decks that can be named"
          : ""));
}

std::vector<DeckListing> list_decks(const std::vector<fs::path>& folders) {
  std::map<std::string, DeckListing> by_name;
  for (const auto& folder : folders) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      const fs::path& p = entry.path();
      if (p.extension() != ".toml" || !is_file(p)) continue;
      const std::string name = p.stem().string();
      if (!by_name.contains(name)) by_name[name] = {name, p, first_comment(p)};
    }
  }
  std::vector<DeckListing> decks;
  for (auto& [name, d] : by_name) decks.push_back(std::move(d));
  return decks;
}

}  // namespace portalab
