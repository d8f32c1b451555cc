// Finding a deck by path or by name (`portalab run lab6-vector`), and listing
// the decks that can be named. No Kokkos: part of portalab_base.
//
// Search order for `portalab run ARG`:
//   1. ARG as a path, relative to the working folder;
//   2. for a name without '/': ARG.toml in the working folder;
//   3. ARG.toml in the installed decks, <prefix>/share/portalab/inputs, found
//      from the executable's own path (<prefix>/bin/portalab, /proc/self/exe);
//   4. ARG.toml in the source tree's inputs/, for the binary of a build tree.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

// Folders of decks that can be named, in search order (steps 3 and 4 above)
// for the executable at `executable`; only folders that exist.
std::vector<std::filesystem::path> deck_folders(const std::filesystem::path& executable);

// What stands at a path that input (a deck, a calibration file) is to be
// read from, without reading it: checked first, so that a folder, a device,
// a pipe or an unreadable file is named for what it is.
struct InputPath {
  enum Kind { file, missing, folder, other } kind;  // file: a regular file that can be read
  std::string reason;  // why it is not one: "a folder", "a named pipe (FIFO)", ...; "" for a file
  bool wrong_type = false;  // reason names what is there instead of a file

  // The reason, for input that was to be `what`: "a folder, not a deck file".
  std::string describe(std::string_view what) const;
};
InputPath inspect_input_path(const std::filesystem::path& path);

// The running executable (/proc/self/exe); empty where it cannot be read.
std::filesystem::path executable_path();

// The deck that `arg` names, searched as above with `folders` for steps 3 and
// 4. Returns `arg` itself when found as given. A folder or nothing at a place
// goes on to the next; anything else there (a device, a pipe, a broken link,
// an unreadable file) ends the search with its reason. Throws InputError
// listing every place it looked, in order, when none holds a deck.
std::string find_deck(const std::string& arg, const std::vector<std::filesystem::path>& folders);

struct DeckListing {
  std::string name;  // the file name without .toml: what `portalab run` takes
  std::filesystem::path path;
  std::string summary;  // the deck's first comment line, without '#'
};

// Every *.toml of `folders`, sorted by name; a name in an earlier folder hides
// the same name in later ones, as find_deck would.
std::vector<DeckListing> list_decks(const std::vector<std::filesystem::path>& folders);

}  // namespace portalab
