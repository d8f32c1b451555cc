// Finding a deck by path or by name (`portalab run lab6-vector`), and listing
// the decks that can be named. No Kokkos: part of portalab_deck.
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
#include <vector>

namespace portalab {

// Folders of decks that can be named, in search order (steps 3 and 4 above)
// for the executable at `executable`; only folders that exist.
std::vector<std::filesystem::path> deck_folders(const std::filesystem::path& executable);

// The running executable (/proc/self/exe); empty where it cannot be read.
std::filesystem::path executable_path();

// The deck that `arg` names, searched as above with `folders` for steps 3 and
// 4. Returns `arg` itself when found as given. Throws InputError listing
// every place it looked, in order, when none holds it.
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
