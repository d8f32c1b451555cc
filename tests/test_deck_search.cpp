// Decks by name: the search order (as given, NAME.toml in the working folder,
// the installed decks, the source tree's), the message listing where it
// looked, and the listing of the decks that can be named.
#include "deck/deck.hpp"
#include "deck/deck_search.hpp"
#include "experiment/experiment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>

namespace portalab {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// A scratch folder as the working folder for one test, restored after.
class DeckSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    m_old = fs::current_path();
    m_root = fs::temp_directory_path() /
             ("portalab_deck_search_" +
              std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(m_root);
    fs::create_directories(m_root / "work");
    fs::current_path(m_root / "work");
  }
  void TearDown() override {
    fs::current_path(m_old);
    fs::remove_all(m_root);
  }
  fs::path m_old, m_root;
};

TEST_F(DeckSearch, ThePathAsGivenComesFirst) {
  write("sub/deck.toml", "# here\n");
  EXPECT_EQ(find_deck("sub/deck.toml", {}), "sub/deck.toml");
  write("plain", "# a deck without the extension\n");
  EXPECT_EQ(find_deck("plain", {m_root / "installed"}), "plain");
}

TEST_F(DeckSearch, ANameIsLookedForInTheWorkingFolderThenEachFolderInOrder) {
  write(m_root / "installed/lab.toml", "# installed\n");
  write(m_root / "source/lab.toml", "# source\n");
  write(m_root / "source/only_source.toml", "# source\n");
  const std::vector<fs::path> folders{m_root / "installed", m_root / "source"};
  EXPECT_EQ(find_deck("lab", folders), (m_root / "installed/lab.toml").string());
  EXPECT_EQ(find_deck("lab.toml", folders), (m_root / "installed/lab.toml").string());
  EXPECT_EQ(find_deck("only_source", folders), (m_root / "source/only_source.toml").string());
  write("lab.toml", "# my own\n");  // the working folder wins
  EXPECT_EQ(find_deck("lab", folders), "lab.toml");
}

TEST_F(DeckSearch, APathWithAFolderIsNeverLookedUpByName) {
  write(m_root / "installed/inputs/lab.toml", "# installed\n");
  EXPECT_THROW(find_deck("inputs/lab.toml", {m_root / "installed"}), InputError);
}

TEST_F(DeckSearch, AFolderNamedLikeTheDeckIsNotADeck) {
  fs::create_directories("lab");
  write(m_root / "installed/lab.toml", "# installed\n");
  EXPECT_EQ(find_deck("lab", {m_root / "installed"}), (m_root / "installed/lab.toml").string());
}

// Anything at a place but a deck file or a folder ends the search with what
// it is; folders are said among the places looked at.
TEST_F(DeckSearch, WhatStandsInTheWayIsNamed) {
  auto error = [](const std::string& arg, const std::vector<fs::path>& folders) -> std::string {
    try {
      find_deck(arg, folders);
    } catch (const InputError& e) {
      return e.what();
    }
    return {};
  };
  write(m_root / "installed/lab.toml", "# installed\n");
  fs::create_symlink(m_root / "installed/nothing.toml", m_root / "installed/broken.toml");
  ASSERT_EQ(::mkfifo("pipe", 0600), 0);
  fs::create_directories("folder");
  write("a_file", "");
  EXPECT_EQ(error("pipe", {m_root / "installed"}),
            "deck 'pipe': a named pipe (FIFO), not a deck file");
  EXPECT_EQ(error("broken", {m_root / "installed"}),
            "deck 'broken': " + (m_root / "installed/broken.toml").string() +
                ": a symbolic link to '" + (m_root / "installed/nothing.toml").string() +
                "', which does not exist");
  EXPECT_EQ(error("folder/", {}), "deck 'folder/': a folder, not a deck file");
  EXPECT_EQ(error("a_file/deck.toml", {}),
            "deck 'a_file/deck.toml': 'a_file' in it is a file, not a folder");
  EXPECT_EQ(error("/dev/null", {}), "deck '/dev/null': a character device, not a deck file");
  EXPECT_EQ(error("folder", {m_root / "none"})
                .rfind("deck 'folder': no deck file; looked in this order at folder (a folder), "
                       "folder.toml, ",
                       0),
            0u);
  fs::create_symlink("loop_b", "loop_a");
  fs::create_symlink("loop_a", "loop_b");
  EXPECT_EQ(error("loop_a", {}), "deck 'loop_a': a loop of symbolic links (each leads to another)");
}

TEST_F(DeckSearch, NotFoundListsEveryPlaceInOrder) {
  const std::vector<fs::path> folders{m_root / "a", m_root / "b"};
  try {
    find_deck("nosuch", folders);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    const std::vector<std::string> places{"nosuch, ", "nosuch.toml, ",
                                          (m_root / "a/nosuch.toml").string(),
                                          (m_root / "b/nosuch.toml").string()};
    std::size_t at = 0;
    for (const auto& p : places) {
      const auto found = msg.find(p, at);
      ASSERT_NE(found, std::string::npos) << p << " not after position " << at << " in: " << msg;
      at = found + p.size();
    }
    EXPECT_NE(msg.find("portalab list --decks"), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind("deck 'nosuch'", 0), 0u) << msg;
  }
}

TEST_F(DeckSearch, InstalledDecksAreFoundFromTheExecutablesFolder) {
  write(m_root / "prefix/bin/portalab", "");
  EXPECT_TRUE(deck_folders(m_root / "prefix/bin/portalab").empty());
  fs::create_directories(m_root / "prefix/share/portalab/inputs");
  const auto folders = deck_folders(m_root / "prefix/bin/portalab");
  ASSERT_EQ(folders.size(), 1u);
  EXPECT_TRUE(fs::equivalent(folders[0], m_root / "prefix/share/portalab/inputs"));
  EXPECT_TRUE(deck_folders({}).empty());
}

TEST_F(DeckSearch, ListingGivesNamesAndFirstCommentLinesEarlierFoldersWinning) {
  write(m_root / "a/one.toml", "\n#   First line of one.  \n# second line\nreps = 1\n");
  write(m_root / "a/notes.txt", "# not a deck\n");
  write(m_root / "b/one.toml", "# hidden by a/one.toml\n");
  write(m_root / "b/two.toml", "reps = 1\n# after a key: no summary\n");
  write(m_root / "b/three.toml", "#\n# after an empty comment\n");
  const auto decks = list_decks({m_root / "a", m_root / "b", m_root / "missing"});
  ASSERT_EQ(decks.size(), 3u);
  EXPECT_EQ(decks[0].name, "one");
  EXPECT_EQ(decks[0].summary, "First line of one.");
  EXPECT_TRUE(fs::equivalent(decks[0].path, m_root / "a/one.toml"));
  EXPECT_EQ(decks[1].name, "three");
  EXPECT_EQ(decks[1].summary, "after an empty comment");
  EXPECT_EQ(decks[2].name, "two");
  EXPECT_EQ(decks[2].summary, "");
}

// The shipped decks give every size and experiment parameter themselves, so
// that their figures (the GPU's above all) stay what they were when an
// experiment's defaults change: parsed against a catalog whose defaults all
// differ, each gives the same plans.
TEST(ShippedDecks, DoNotDependOnExperimentDefaults) {
  const Catalog real = catalog();
  Catalog other = real;
  // Decks that name a space this build lacks (a GPU, OpenMP in a Threads
  // build) parse anywhere: defaults are what this test is about.
  for (const char* space : {"OpenMP", "Threads", "Cuda", "HIP", "SYCL"})
    if (std::find(other.spaces.begin(), other.spaces.end(), space) == other.spaces.end())
      other.spaces.push_back(space);
  Catalog changed = other;
  for (auto& e : changed.experiments) {
    e.default_sizes = {7};
    for (auto& p : e.parameters) p.default_value = p.default_value == p.min ? p.max : p.min;
  }
  for (const auto& d : list_decks({fs::path(PORTALAB_SOURCE_DIR) / "inputs"})) {
    const Deck with_defaults = load_deck(d.path.string(), other);
    const Deck with_changed = load_deck(d.path.string(), changed);
    ASSERT_EQ(with_defaults.plans.size(), with_changed.plans.size()) << d.path;
    for (std::size_t i = 0; i < with_defaults.plans.size(); ++i) {
      const auto& a = with_defaults.plans[i];
      const auto& b = with_changed.plans[i];
      EXPECT_EQ(a.sizes, b.sizes) << d.path << " [" << a.experiment << "] relies on default sizes";
      EXPECT_EQ(a.parameters, b.parameters)
          << d.path << " [" << a.experiment << "] relies on default parameters";
    }
  }
}

// Every shipped deck can be named and says what it is in its first line.
TEST(ShippedDecks, EachHasAFirstCommentLine) {
  const auto decks = list_decks({fs::path(PORTALAB_SOURCE_DIR) / "inputs"});
  ASSERT_FALSE(decks.empty());
  for (const auto& d : decks) EXPECT_FALSE(d.summary.empty()) << d.path;
}

}  // namespace
}  // namespace portalab
