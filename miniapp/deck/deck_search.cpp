#include "deck/deck_search.hpp"

#include "deck/deck.hpp"
#include "support/files.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

// Why stat() failed, in the path's own terms.
InputPath unreachable(const fs::path& path, int err) {
  struct stat link;
  if (err == ENOENT && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    return {InputPath::other, fmt::format("a symbolic link to '{}', which does not exist",
                                          shown(fs::read_symlink(path, ec).string()))};
  }
  if (err == ENOENT) return {InputPath::missing, "no such file"};
  if (err == ELOOP) return {InputPath::other, "a loop of symbolic links (each leads to another)"};
  if (err == ENOTDIR) {
    // The first part of the path that is no folder.
    fs::path prefix;
    for (auto it = path.begin(); it != path.end() && std::next(it) != path.end(); ++it) {
      prefix /= *it;
      struct stat st;
      if (::stat(prefix.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
        return {InputPath::other,
                fmt::format("'{}' in it is {}, not a folder", shown(prefix.string()),
                            S_ISREG(st.st_mode) ? "a file" : file_type(st.st_mode))};
    }
  }
  return {InputPath::other, fmt::format("cannot be reached: {}", std::strerror(err))};
}

}  // namespace

InputPath inspect_input_path(const fs::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return unreachable(path, errno);
  if (S_ISDIR(st.st_mode)) return {InputPath::folder, "a folder", true};
  if (!S_ISREG(st.st_mode)) return {InputPath::other, file_type(st.st_mode), true};
  // Opened, not read: a file of mode 000 is refused here, before parsing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {InputPath::other, fmt::format("cannot be read: {}", std::strerror(errno))};
  ::close(fd);
  return {InputPath::file, ""};
}

std::string InputPath::describe(std::string_view what) const {
  return wrong_type ? fmt::format("{}, not {}", reason, what) : reason;
}

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
  // Each place in order; a folder or nothing there goes on to the next.
  std::vector<fs::path> places{arg};
  // A path with a folder in it is only ever that path.
  if (arg.find('/') == std::string::npos) {
    const std::string file = ends_with_toml(arg) ? arg : arg + ".toml";
    if (file != arg) places.emplace_back(file);
    for (const auto& folder : folders) places.push_back(folder / file);
  }
  std::vector<std::string> tried;
  bool folder_seen = false;
  for (const auto& place : places) {
    const InputPath found = inspect_input_path(place);
    if (found.kind == InputPath::file) return place.string();
    if (found.kind == InputPath::other)  // the search ends here: said for that place
      throw InputError(fmt::format("deck '{}': {}{}", shown(arg),
                                   &place == &places.front() ? "" : shown(place.string()) + ": ",
                                   found.describe("a deck file")));
    folder_seen |= found.kind == InputPath::folder;
    tried.push_back(found.kind == InputPath::folder ? shown(place.string()) + " (a folder)"
                                                    : shown(place.string()));
  }
  if (tried.size() == 1 && folder_seen)
    throw InputError(fmt::format("deck '{}': a folder, not a deck file", shown(arg)));
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  throw InputError(
      fmt::format("deck '{}': {}; looked in this order at {} (relative paths from {}){}",
                  shown(arg), folder_seen ? "no deck file" : "no such file", fmt::join(tried, ", "),
                  ec ? "." : shown(cwd.string()),
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
