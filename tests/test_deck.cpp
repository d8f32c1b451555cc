// Deck parsing: defaults, overrides, and every kind of bad input naming the
// file, line and column and what was expected.
#include "deck/deck.hpp"
#include "experiment/experiment.hpp"
#include "deck/kokkos_options.hpp"
#include "platform/spaces.hpp"
#include "support/suggest.hpp"
#include "support/text.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

using portalab::catalog;
using portalab::CopyMode;
using portalab::InputError;
using portalab::parse_deck;

namespace {

TEST(Deck, GlobalDefaultsApplyAndTablesOverrideThem) {
  const auto deck = parse_deck(R"(
reps = 3
warmups = 0
copies = "none"
[vector_poly]
sizes = [10, 1e3, 2_000]
dtypes = ["float32", "float64"]
reps = 5
[stream_copy]
)",
                               "d.toml", catalog());
  ASSERT_EQ(deck.plans.size(), 2u);
  const auto& vp = deck.plans[0];  // the deck's order, not alphabetical
  EXPECT_EQ(vp.experiment, "vector_poly");
  EXPECT_EQ(vp.sizes, (std::vector<std::size_t>{10, 1000, 2000}));
  EXPECT_EQ(vp.dtypes, (std::vector<std::string>{"float32", "float64"}));
  EXPECT_EQ(vp.reps, 5);
  EXPECT_EQ(vp.warmups, 0);
  EXPECT_EQ(vp.copies, std::vector<CopyMode>{CopyMode::none});
  EXPECT_EQ(vp.variants, (std::vector<std::string>{"fused", "unfused"}));  // all by default
  EXPECT_EQ(vp.spaces, portalab::enabled_space_names());                   // all by default
  const auto& sc = deck.plans[1];
  EXPECT_EQ(sc.experiment, "stream_copy");
  EXPECT_EQ(sc.reps, 3);
  EXPECT_EQ(sc.dtypes, std::vector<std::string>{"float64"});  // the experiment's default
  EXPECT_EQ(deck.hash.rfind("fnv1a64:", 0), 0u);
}

TEST(Deck, ProfileRepsOverridesEveryTablesReps) {
  const auto deck = parse_deck("profile_reps = 3\n[vector_poly]\nreps = 50\n[stream_copy]\n",
                               "d.toml", catalog());
  for (const auto& plan : deck.plans) EXPECT_EQ(plan.reps, 3) << plan.experiment;
}

// Without reps a row repeats until its median is steady; a table's own
// choice wins over the top level's, and --noise makes every plan adaptive.
TEST(Deck, RepetitionsAreAdaptiveUnlessRepsFixesThem) {
  const auto deck = parse_deck(R"(
noise = 0.02
max_time_s = 0.5
[vector_poly]
min_reps = 7
max_reps = 70
min_warmup_s = 0
passes = 3
[stream_copy]
reps = 4
[dot]
)",
                               "d.toml", catalog());
  ASSERT_EQ(deck.plans.size(), 3u);
  const auto& vp = deck.plans[0];
  ASSERT_TRUE(vp.adaptive);
  EXPECT_DOUBLE_EQ(vp.adaptive->noise, 0.02);
  EXPECT_EQ(vp.adaptive->min_reps, 7);
  EXPECT_EQ(vp.adaptive->max_reps, 70);
  EXPECT_DOUBLE_EQ(vp.adaptive->max_time_s, 0.5);
  EXPECT_DOUBLE_EQ(vp.adaptive->min_warmup_s, 0.0);  // the count of warm-ups alone
  EXPECT_EQ(vp.adaptive->passes, 3);
  EXPECT_EQ(vp.reps, 7);
  EXPECT_FALSE(deck.plans[1].adaptive);  // the table's reps
  EXPECT_EQ(deck.plans[1].reps, 4);
  ASSERT_TRUE(deck.plans[2].adaptive);  // the top level's, the rest defaults
  EXPECT_EQ(deck.plans[2].adaptive->min_reps, portalab::AdaptiveReps{}.min_reps);
  EXPECT_DOUBLE_EQ(deck.plans[2].adaptive->min_warmup_s, portalab::AdaptiveReps{}.min_warmup_s);
  EXPECT_EQ(deck.plans[2].adaptive->passes, 2);
  EXPECT_EQ(portalab::repetitions_text(deck.plans[1].reps, deck.plans[1].adaptive), "reps=4");
  EXPECT_EQ(portalab::repetitions_text(vp.reps, vp.adaptive),
            "noise=0.02 min_reps=7 max_reps=70 max_time_s=0.5 min_warmup_s=0 passes=3");

  const auto fixed = parse_deck("reps = 5\n[vector_poly]\n", "d.toml", catalog());
  EXPECT_FALSE(fixed.plans[0].adaptive);
  portalab::DeckOverrides o;
  o.noise = 0.005;
  const auto noise = parse_deck("reps = 5\n[vector_poly]\n", "d.toml", catalog(), o);
  ASSERT_TRUE(noise.plans[0].adaptive);
  EXPECT_DOUBLE_EQ(noise.plans[0].adaptive->noise, 0.005);
  // --set reps=2 on a deck that repeats until steady: the command line wins.
  portalab::DeckOverrides quick;
  quick.set = {"reps=2"};
  const auto two = parse_deck("noise = 0.02\n[vector_poly]\n", "d.toml", catalog(), quick);
  EXPECT_FALSE(two.plans[0].adaptive);
  EXPECT_EQ(two.plans[0].reps, 2);
}

TEST(Deck, RepetitionKeysOutOfRangeOrBesideRepsAreRefused) {
  auto message = [](const std::string& text, portalab::DeckOverrides o = {}) {
    try {
      parse_deck(text, "d.toml", catalog(), o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("[vector_poly]\nreps = 5\nnoise = 0.01\n")
                .find("d.toml:3:9: [vector_poly] "
                      "noise asks for repetitions"),
            std::string::npos);
  EXPECT_NE(message("reps = 5\nmax_reps = 9\n[vector_poly]\n").find("top-level max_reps asks"),
            std::string::npos);
  EXPECT_NE(message("noise = 0\n[vector_poly]\n").find("expects a number above 0"),
            std::string::npos);
  EXPECT_NE(message("noise = \"1%\"\n[vector_poly]\n").find("got a string"), std::string::npos);
  EXPECT_NE(message("[vector_poly]\nmin_reps = 20\nmax_reps = 10\n")
                .find("[vector_poly] max_reps = 10 is below [vector_poly] min_reps = 20"),
            std::string::npos);
  EXPECT_NE(message("[vector_poly]\nmax_time_s = -1\n").find("max_time_s expects a number above 0"),
            std::string::npos);
  EXPECT_EQ(message("[vector_poly]\nmin_warmup_s = -0.5\n"),
            "d.toml:2:16: [vector_poly] min_warmup_s expects a number of at least 0 and at most "
            "3600; got -0.5");
  EXPECT_EQ(message("reps = 3\nmin_warmup_s = 0.1\n[vector_poly]\n"),
            "d.toml:2:16: top-level min_warmup_s times the warm-ups of repetitions until the "
            "median is steady, and top-level reps fixes their count: give one or the other");
  EXPECT_EQ(message("[vector_poly]\npasses = 0\n"),
            "d.toml:2:10: [vector_poly] passes expects an integer >= 1; got 0");
  EXPECT_EQ(message("[vector_poly]\npasses = 101\n"),
            "d.toml:2:10: [vector_poly] passes expects an integer from 1 to 100; got 101");
  EXPECT_EQ(message("[vector_poly]\nmin_reps = 2\nmax_reps = 3\npasses = 4\n"),
            "d.toml:4:10: [vector_poly] passes = 4 is above [vector_poly] max_reps = 3: each "
            "pass times one repetition at least");
  EXPECT_EQ(message("[vector_poly]\nreps = 3\npasses = 2\n")
                .rfind("d.toml:3:10: [vector_poly] "
                       "passes asks for repetitions",
                       0),
            0u);
  portalab::DeckOverrides o;
  o.noise = 2.0;
  EXPECT_NE(message("[vector_poly]\n", o).find("--noise expects"), std::string::npos);
}

TEST(Deck, SizeRangesGrowByTheirFactor) {
  const auto deck = parse_deck("[vector_poly]\nsizes = { from = 1e3, to = 1e6, factor = 10 }\n",
                               "d.toml", catalog());
  EXPECT_EQ(deck.plans[0].sizes, (std::vector<std::size_t>{1000, 10000, 100000, 1000000}));
  // 'to' need not be reached exactly: the last size is the largest not beyond it.
  const auto open = parse_deck("[vector_poly]\nsizes = { from = 3, to = 100, factor = 4 }\n",
                               "d.toml", catalog());
  EXPECT_EQ(open.plans[0].sizes, (std::vector<std::size_t>{3, 12, 48}));
}

TEST(Deck, SpacesAreMatchedWithoutCaseAndRunInCompiledOrder) {
  const auto names = portalab::enabled_space_names();
  std::string list;
  for (auto it = names.rbegin(); it != names.rend(); ++it) list += "\"" + *it + "\",";
  for (auto& ch : list) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  const auto deck = parse_deck("[vector_poly]\nspaces = [" + list + "]\n", "d.toml", catalog());
  EXPECT_EQ(deck.plans[0].spaces, names);
}

TEST(Deck, SetOverridesDeckValues) {
  portalab::DeckOverrides o;
  o.set = {"vector_poly.sizes=[5, 6]", "vector_poly.dtypes=float32", "reps=4"};
  const auto deck = parse_deck("reps = 9\n[vector_poly]\nsizes = [1]\n", "d.toml", catalog(), o);
  EXPECT_EQ(deck.plans[0].sizes, (std::vector<std::size_t>{5, 6}));
  EXPECT_EQ(deck.plans[0].dtypes, std::vector<std::string>{"float32"});
  EXPECT_EQ(deck.plans[0].reps, 4);
}

TEST(Deck, SpacesOptionReplacesEveryPlansSpaces) {
  portalab::DeckOverrides o;
  const std::string first = portalab::enabled_space_names().front();
  o.spaces = std::vector<std::string>{first};
  const auto deck = parse_deck("[vector_poly]\n[stream_copy]\nspaces = \"" +
                                   portalab::enabled_space_names().back() + "\"\n",
                               "d.toml", catalog(), o);
  for (const auto& plan : deck.plans) EXPECT_EQ(plan.spaces, std::vector<std::string>{first});
}

// A deck written for another build (spaces = ["OpenMP"]) runs on a Threads
// build with --spaces Threads: the option replaces the deck's spaces unread.
TEST(Deck, SpacesOptionRunsADeckOfSpacesNotCompiled) {
  auto threads = catalog();
  threads.spaces = {"Serial", "Threads"};
  portalab::DeckOverrides o;
  o.spaces = std::vector<std::string>{"Threads"};
  const auto deck = parse_deck(
      "spaces = [\"OpenMP\"]\n[vector_poly]\n[stream_copy]\n"
      "spaces = [\"Cuda\"]\n",
      "d.toml", threads, o);
  for (const auto& plan : deck.plans) EXPECT_EQ(plan.spaces, std::vector<std::string>{"Threads"});
  // Without the option the deck's space is refused, naming it.
  EXPECT_THROW(parse_deck("spaces = [\"OpenMP\"]\n[vector_poly]\n", "d.toml", threads), InputError);
}

TEST(Deck, ExperimentParametersTakeDefaultsDeckValuesAndOverrides) {
  auto deck = parse_deck("[copy_overlap]\nchunks = 4\n[vector_poly]\n", "d.toml", catalog());
  EXPECT_EQ(deck.plans[0].parameters.at("chunks"), 4);
  EXPECT_EQ(deck.plans[0].parameters.at("degree"),
            catalog().find("copy_overlap")->default_parameters().at("degree"));
  EXPECT_TRUE(deck.plans[1].parameters.empty());
  portalab::DeckOverrides o;
  o.set = {"copy_overlap.degree=7"};
  deck = parse_deck("[copy_overlap]\nchunks = 4\n", "d.toml", catalog(), o);
  EXPECT_EQ(deck.plans[0].parameters.at("degree"), 7);
}

struct BadDeck {
  const char* name;
  const char* text;
  const char* where;     // "file:line:column" the message must start with
  const char* expected;  // a phrase the message must contain
};

class BadDecks : public ::testing::TestWithParam<BadDeck> {};

TEST_P(BadDecks, AreRejectedWithFileLineColumnAndWhatWasExpected) {
  const BadDeck& b = GetParam();
  try {
    parse_deck(b.text, "bad.toml", catalog());
    FAIL() << "accepted: " << b.text;
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(b.where, 0), 0u) << m;
    EXPECT_NE(m.find(b.expected), std::string::npos) << m;
  }
}

const BadDeck bad_decks[] = {
    {"syntax", "[vector_poly\nsizes = [1]\n", "bad.toml:1:", "invalid TOML"},
    {"unknown_experiment", "[vector_pol]\n", "bad.toml:1:2", "unknown experiment [vector_pol]"},
    {"unknown_key", "[vector_poly]\nsize = 3\n", "bad.toml:2:1", "unknown key 'size'"},
    {"unknown_global", "repz = 3\n[vector_poly]\n", "bad.toml:1:1", "unknown key 'repz'"},
    {"size_zero", "[vector_poly]\nsizes = [10, 0]\n", "bad.toml:2:14", "positive integers"},
    {"size_negative", "[vector_poly]\nsizes = -5\n", "bad.toml:2:9", "positive integers"},
    {"size_fraction", "[vector_poly]\nsizes = [2.5]\n", "bad.toml:2:10", "whole numbers"},
    {"size_absurd", "[vector_poly]\nsizes = [1e30]\n", "bad.toml:2:10", "cannot be allocated"},
    {"size_string", "[vector_poly]\nsizes = [\"big\"]\n", "bad.toml:2:10", "got a string"},
    {"sizes_empty", "[vector_poly]\nsizes = []\n", "bad.toml:2:9", "empty list"},
    {"dtype_unknown", "[vector_poly]\ndtypes = [\"float16\"]\n", "bad.toml:2:11",
     "'float16' is not one of [float64, float32]"},
    {"dtype_wrong_type", "[vector_poly]\ndtypes = 64\n", "bad.toml:2:10", "got an integer"},
    {"variant_unknown", "[vector_poly]\nvariants = [\"fast\"]\n", "bad.toml:2:13",
     "'fast' is not one of [fused, unfused]"},
    {"variant_twice", "[vector_poly]\nvariants = [\"fused\", \"fused\"]\n", "bad.toml:2:22",
     "listed twice"},
    {"space_not_compiled", "[vector_poly]\nspaces = [\"NoSuchSpace\"]\n", "bad.toml:2:11",
     "spaces compiled into this Kokkos"},
    {"copies_unknown", "[vector_poly]\ncopies = [\"zero\"]\n", "bad.toml:2:11",
     "'zero' is not one of [pageable, pinned, none]"},
    {"reps_zero", "[vector_poly]\nreps = 0\n", "bad.toml:2:8", "integer >= 1"},
    {"warmups_negative", "warmups = -1\n[vector_poly]\n", "bad.toml:1:11", "integer >= 0"},
    {"reps_float", "[vector_poly]\nreps = 2.5\n", "bad.toml:2:8", "got a float"},
    {"range_missing_factor", "[vector_poly]\nsizes = { from = 1, to = 10 }\n", "bad.toml:2:9",
     "'factor' is missing"},
    {"range_factor_one", "[vector_poly]\nsizes = { from = 1e3, to = 1e9, factor = 1 }\n",
     "bad.toml:2:42", "factor must be >= 2"},
    {"range_to_below_from", "[vector_poly]\nsizes = { from = 1e6, to = 1e3, factor = 10 }\n",
     "bad.toml:2:28", "'to' is below 'from'"},
    {"range_unknown_key", "[vector_poly]\nsizes = { from = 1, to = 10, step = 2 }\n",
     "bad.toml:2:30", "unknown key 'step' in a range; expected from, to, factor"},
    {"range_from_zero", "[vector_poly]\nsizes = { from = 0, to = 10, factor = 2 }\n",
     "bad.toml:2:18", "positive integers"},
    {"range_factor_fraction", "[vector_poly]\nsizes = { from = 1, to = 10, factor = 1.5 }\n",
     "bad.toml:2:39", "whole numbers"},
    {"range_to_absurd", "[vector_poly]\nsizes = { from = 1, to = 1e30, factor = 10 }\n",
     "bad.toml:2:26", "cannot be allocated"},
    {"duplicate_table", "[vector_poly]\n[vector_poly]\n", "bad.toml:2:", "invalid TOML"},
    {"no_experiment", "reps = 3\n", "bad.toml", "names no experiment"},
    {"not_utf8", "[vector_poly]\n# \xff\xfe\n", "bad.toml:2:", "invalid TOML"},
    // 2^32 reps used to be stored in an int as 0 reps.
    {"reps_beyond_int", "[vector_poly]\nreps = 4294967296\n", "bad.toml:2:8",
     "integer from 1 to 100000"},
    {"max_reps_beyond_kept", "[vector_poly]\nmax_reps = 100001\n", "bad.toml:2:12",
     "integer from 1 to 100000"},
    {"warmups_beyond_int", "warmups = 2147483648\n[vector_poly]\n", "bad.toml:1:11",
     "integer from 0 to 2147483647"},
    // U+03CB where whitespace may come: toml++ 3.3 reaches __builtin_unreachable
    // there (marzer/tomlplusplus#295); the error must still come out cleanly.
    // An experiment's own parameter: known to its table only, an integer in range.
    {"parameter_elsewhere", "[vector_poly]\nchunks = 4\n", "bad.toml:2:1",
     "unknown key 'chunks' in [vector_poly]"},
    {"parameter_zero", "[copy_overlap]\nchunks = 0\n", "bad.toml:2:10",
     "chunks (pieces the array is processed in) expects an integer from 1 to 1048576; got 0"},
    {"parameter_string", "[concurrent_small]\nkernels = \"many\"\n", "bad.toml:2:11",
     "expects an integer from 1 to 1048576; got a string"},
    {"parameter_global", "chunks = 4\n[copy_overlap]\n", "bad.toml:1:1", "unknown key 'chunks'"},
    {"non_ascii_after_value", "[vector_poly]\nsizes = [1\xcf\x8b]\n",
     "bad.toml:2:", "invalid TOML"},
};

INSTANTIATE_TEST_SUITE_P(Deck, BadDecks, ::testing::ValuesIn(bad_decks),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Deck, BadOverrideNamesTheOption) {
  portalab::DeckOverrides o;
  o.set = {"vector_poly.sizes=[0]"};
  try {
    parse_deck("[vector_poly]\n", "d.toml", catalog(), o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'--set vector_poly.sizes=[0]'"), std::string::npos)
        << e.what();
  }
  o.set = {"gemm.sizes=[4]"};
  EXPECT_THROW(parse_deck("[vector_poly]\n", "d.toml", catalog(), o), InputError);
  o.set = {"novalue"};
  EXPECT_THROW(parse_deck("[vector_poly]\n", "d.toml", catalog(), o), InputError);
}

// Each used to escape as a toml::parse_error (exit 3) or to say "<deck>:0:0"
// instead of the option (both found by tests/fuzz); a line break used to drop
// the second line unseen.
TEST(Deck, MalformedOverridesAreInputErrorsNamingTheOption) {
  for (const std::string& set : std::vector<std::string>{
           "vector_poly.dtypes=a\\q", "vector_poly.dtypes=a\nb", "reps=3\nwarmups=0",
           "vector_poly.size=3", std::string(300, '\x8c') + ".x=1", "vector_poly.=1"}) {
    portalab::DeckOverrides o;
    o.set = {set};
    try {
      parse_deck("[vector_poly]\n", "d.toml", catalog(), o);
      ADD_FAILURE() << "accepted --set " << set;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("'--set " + portalab::shown(set) + "'", 0), 0u)
          << e.what();
    }
  }
}

TEST(Deck, SpacesOptionRejectsAnUncompiledSpaceNamingTheAvailableOnes) {
  portalab::DeckOverrides o;
  o.spaces = std::vector<std::string>{"NoSuchSpace"};
  try {
    parse_deck("[vector_poly]\n", "d.toml", catalog(), o);
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--spaces"), std::string::npos) << m;
    EXPECT_NE(m.find(portalab::enabled_space_names().front()), std::string::npos) << m;
  }
}

TEST(Deck, EveryShippedDeckIsValid) {
  // A deck may name a space this build lacks (linalg-gpu.toml: Cuda): checked
  // against every execution space Kokkos can be built with.
  auto any_build = catalog();
  any_build.spaces = {"Serial", "OpenMP", "Threads", "HPX", "Cuda", "HIP", "SYCL"};
  for (const auto& entry : std::filesystem::directory_iterator(PORTALAB_SOURCE_DIR "/inputs"))
    if (entry.path().extension() == ".toml")
      EXPECT_NO_THROW(portalab::load_deck(entry.path().string(), any_build)) << entry.path();
}

TEST(Deck, MissingFileIsAnInputError) {
  EXPECT_THROW(portalab::load_deck("/nonexistent/deck.toml", catalog()), InputError);
}

// The message of the InputError text raises, or "" if it parses.
std::string error_of(const std::string& text, portalab::DeckOverrides o = {}) {
  try {
    parse_deck(text, "d.toml", catalog(), o);
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

// toml++ recurses once per level: 300,000 levels overflowed the stack
// (exit 139, no message). Refused before parsing, at the place too deep.
TEST(Deck, NestingBeyondItsLimitIsRefusedBeforeParsing) {
  std::string dotted;
  for (int i = 0; i < 300000; ++i) dotted += "a.";
  EXPECT_EQ(error_of(dotted + "a = 1\n").rfind("d.toml:1:", 0), 0u);
  EXPECT_NE(error_of(dotted + "a = 1\n").find("nested more than"), std::string::npos);
  EXPECT_EQ(error_of("[" + dotted + "a]\n").rfind("d.toml:1:", 0), 0u);
  EXPECT_EQ(error_of("[vector_poly]\nsizes = {" + dotted.substr(0, 200) + "b = 1}\n")
                .rfind("d.toml:2:", 0),
            0u);
  std::string lists = "[vector_poly]\nsizes = ";
  for (int i = 0; i < 40; ++i) lists += "[";
  EXPECT_EQ(error_of(lists + "1\n").rfind("d.toml:2:", 0), 0u);
  // Dots in strings, comments and numbers are no nesting.
  EXPECT_EQ(error_of("# " + dotted.substr(0, 300) +
                     "\n[vector_poly]\nsizes = [1.5e3, 2e3]\n"
                     "dtypes = \"float64\" # a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z."
                     "a.b.c.d.e.f.g\n"),
            "");
  EXPECT_NE(error_of("\"" + dotted.substr(0, 300) + "\" = 1\n[vector_poly]\n").find("unknown key"),
            std::string::npos);
  portalab::DeckOverrides o;
  o.set = {"vector_poly.sizes=" + std::string(100, '[') + "1" + std::string(100, ']')};
  EXPECT_EQ(error_of("[vector_poly]\n", o).rfind("'--set vector_poly.sizes=", 0), 0u);
}

TEST(Deck, ADeckOrOverrideBeyondItsSizeIsRefused) {
  EXPECT_NE(error_of(std::string(2 << 20, '#')).find("a deck is at most"), std::string::npos);
  portalab::DeckOverrides o;
  o.set = {"reps=" + std::string(100000, '1')};
  EXPECT_EQ(error_of("[vector_poly]\n", o).rfind("'--set reps=", 0), 0u);
  // Read no further than the limit: /dev/zero is refused, not read forever.
  EXPECT_THROW(portalab::load_deck("/dev/zero", catalog()), InputError);
  EXPECT_THROW(portalab::load_deck(std::filesystem::temp_directory_path().string(), catalog()),
               InputError);
}

TEST(Deck, ASizeListedTwiceInAnySpellingIsRefused) {
  EXPECT_EQ(error_of("[vector_poly]\nsizes = [1000, 1e3, 1_000]\n"),
            "d.toml:2:16: [vector_poly] sizes: 1000 is listed twice");
  portalab::DeckOverrides o;
  o.set = {"vector_poly.sizes=[5,5.0]"};
  EXPECT_NE(error_of("[vector_poly]\n", o).find("listed twice"), std::string::npos);
}

TEST(Deck, PinnedCopiesOnHostSpacesAloneAreRefused) {
  auto host = catalog();
  host.spaces = {"Serial", "OpenMP"};
  try {
    parse_deck("spaces = [\"Serial\"]\ncopies = [\"pinned\"]\n[vector_poly]\n", "d.toml", host);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("d.toml:2:10: [vector_poly] copies: pinned", 0), 0u)
        << e.what();
  }
  auto gpu = catalog();
  gpu.spaces = {"Serial", "Cuda"};
  EXPECT_NO_THROW(parse_deck("copies = \"pinned\"\n[vector_poly]\n", "d.toml", gpu));
}

// --kokkos-* options and the variables Kokkos reads, before Kokkos::initialize.
TEST(KokkosOptions, ValuesKokkosWouldAbortOrCrashOnAreInputErrors) {
  const portalab::KokkosOptionLimits limits{64, 2, true, true, true};
  auto no_env = [](const char*) -> const char* { return nullptr; };
  auto error = [&](std::vector<std::string> args, auto env) -> std::string {
    try {
      portalab::check_kokkos_options(args, env, limits);
    } catch (const InputError& e) {
      return e.what();
    }
    return {};
  };
  for (const std::string bad :
       {"--kokkos-num-threads=0", "--kokkos-num-threads=-4", "--kokkos-num-threads=four",
        "--kokkos-num-threads=4x", "--kokkos-num-threads=4294967297", "--kokkos-num-threads=65",
        "--kokkos-num-threads=", "--kokkos-num-threads", "--kokkos-device-id=2",
        "--kokkos-device-id=-1", "--kokkos-map-device-id-by=near",
        "--kokkos-disable-warnings=perhaps", "--kokkos-numthreads=4", "--kokkos-help=yes",
        "--kokkos-num-devices=2", "--kokkos-threads=2"})
    EXPECT_EQ(error({bad}, no_env).rfind("'" + bad + "'", 0), 0u) << bad;
  EXPECT_EQ(error({"--kokkos-num-threads=64", "--kokkos-device-id=1", "--kokkos-disable-warnings",
                   "--kokkos-print-configuration=no", "--kokkos-map-device-id-by=mpi_rank",
                   "--kokkos-tools-libs=libx.so", "--kokkos-help"},
                  no_env),
            "");
  auto env = [](const char* name) -> const char* {
    return std::string_view(name) == "OMP_NUM_THREADS" ? "8,2" : nullptr;
  };
  EXPECT_EQ(error({}, env), "");
  auto huge = [](const char* name) -> const char* {
    return std::string_view(name) == "KOKKOS_NUM_THREADS" ? "100000" : nullptr;
  };
  EXPECT_EQ(error({}, huge).rfind("environment variable KOKKOS_NUM_THREADS=100000", 0), 0u);
}

// One answer per option and build: refused where it cannot apply or Kokkos
// no longer reads it, said where Kokkos would ignore it.
TEST(KokkosOptions, OptionsThatCannotApplyAreRefusedAndVariablesSaid) {
  using Env = std::map<std::string, std::string>;
  struct Outcome {
    std::string error;
    std::vector<std::string> warnings;
  };
  auto check = [](std::vector<std::string> args, Env env,
                  const portalab::KokkosOptionLimits& limits) {
    Outcome o;
    try {
      o.warnings = portalab::check_kokkos_options(
          args,
          [&](const char* name) -> const char* {
            const auto it = env.find(name);
            return it == env.end() ? nullptr : it->second.c_str();
          },
          limits);
    } catch (const InputError& e) {
      o.error = e.what();
    }
    return o;
  };
  auto has = [](const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  };
  const portalab::KokkosOptionLimits host{64, -1, true, false, true};
  for (const std::string arg :
       {"--kokkos-device-id=0", "--kokkos-device-id=99", "--kokkos-map-device-id-by=random"}) {
    const auto o = check({arg}, {}, host);
    EXPECT_EQ(o.error.rfind("'" + arg + "': cannot apply", 0), 0u) << o.error;
    EXPECT_TRUE(has(o.error, "no device space")) << o.error;
  }
  for (const auto& [name, value] : Env{{"KOKKOS_DEVICE_ID", "99"},
                                       {"KOKKOS_VISIBLE_DEVICES", "0,1"},
                                       {"KOKKOS_MAP_DEVICE_ID_BY", "random"},
                                       {"KOKKOS_NUM_DEVICES", "2"}}) {
    const auto o = check({}, {{name, value}}, host);
    EXPECT_EQ(o.error, "");
    ASSERT_EQ(o.warnings.size(), 1u) << name;
    EXPECT_EQ(o.warnings[0].rfind("environment variable " + name + "=" + value + ": ignored", 0),
              0u)
        << o.warnings[0];
  }
  // Serial and a GPU: no host space of several threads.
  const portalab::KokkosOptionLimits one_thread{64, 2, false, true, false};
  EXPECT_TRUE(has(check({"--kokkos-num-threads=4"}, {}, one_thread).error, "one thread"));
  EXPECT_EQ(check({}, {{"KOKKOS_NUM_THREADS", "4"}}, one_thread).warnings.size(), 1u);

  const portalab::KokkosOptionLimits gpus{64, 2, true, true, true};
  EXPECT_EQ(check({"--kokkos-device-id=1"}, {}, gpus).error, "");
  // A device id takes the place of a mapping.
  const auto both = check({"--kokkos-device-id=1", "--kokkos-map-device-id-by=random"}, {}, gpus);
  ASSERT_EQ(both.warnings.size(), 1u);
  EXPECT_EQ(both.warnings[0].rfind("'--kokkos-map-device-id-by=random': ignored", 0), 0u);
  // KOKKOS_VISIBLE_DEVICES: ids of devices present, each once; a device id
  // chooses among them.
  EXPECT_EQ(check({"--kokkos-device-id=0"}, {{"KOKKOS_VISIBLE_DEVICES", "1"}}, gpus).error, "");
  EXPECT_TRUE(has(check({"--kokkos-device-id=1"}, {{"KOKKOS_VISIBLE_DEVICES", "1"}}, gpus).error,
                  "from 0 to 0"));
  for (const std::string bad : {"2", "0,0", "", "x", "0,", "-1"})
    EXPECT_EQ(check({}, {{"KOKKOS_VISIBLE_DEVICES", bad}}, gpus)
                  .error.rfind("environment variable KOKKOS_VISIBLE_DEVICES=" + bad + ":", 0),
              0u)
        << bad;
  const portalab::KokkosOptionLimits no_gpu{64, 0, true, true, true};
  EXPECT_TRUE(has(check({"--kokkos-device-id=0"}, {}, no_gpu).error, "no device is visible"));

  // Given twice: Kokkos would take the last without a word.
  EXPECT_TRUE(has(check({"--kokkos-num-threads=2", "--kokkos-num-threads=4"}, {}, gpus).error,
                  "given twice (also '--kokkos-num-threads=2')"));
  EXPECT_TRUE(has(check({"--kokkos-num-devices=2"}, {}, gpus).error, "no longer reads"));
  EXPECT_TRUE(has(check({"--kokkos-numthreads=4"}, {}, gpus).error,
                  "did you mean '--kokkos-num-threads'?"));
}

TEST(Deck, SpacesOnTheCommandLineFollowTheDecksRule) {
  auto host = catalog();
  host.spaces = {"Serial", "OpenMP"};
  EXPECT_EQ(portalab::spaces_option({"openmp", "Serial"}, host),
            (std::vector<std::string>{"Serial", "OpenMP"}));
  auto error = [&](std::vector<std::string> given) -> std::string {
    try {
      portalab::spaces_option(given, host);
    } catch (const InputError& e) {
      return e.what();
    }
    return {};
  };
  // The same words as the deck's, after the option's name.
  EXPECT_EQ(error({"Serial", "serial"}),
            "--spaces (spaces compiled into this Kokkos): 'serial' is listed twice");
  try {
    parse_deck("spaces = [\"Serial\", \"serial\"]\n[vector_poly]\n", "d.toml", host);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "d.toml:1:21: top-level spaces (spaces compiled into this Kokkos): 'serial' is "
              "listed twice");
  }
  EXPECT_EQ(error({"Seriall"}),
            "--spaces (spaces compiled into this Kokkos): 'Seriall' is not one of [Serial, "
            "OpenMP]; did you mean 'Serial'?");
}

TEST(Suggest, TheNearestNameOfASlipOrAnAbbreviation) {
  EXPECT_EQ(portalab::edit_distance("runn", "run"), 1u);
  EXPECT_EQ(portalab::edit_distance("inof", "info"), 1u);  // two letters swapped
  EXPECT_EQ(portalab::edit_distance("", "abc"), 3u);
  const std::vector<std::string> commands{"run", "calibrate", "list", "info", "help"};
  EXPECT_EQ(portalab::nearest("runn", commands), "run");
  EXPECT_EQ(portalab::nearest("Calibrat", commands), "calibrate");
  EXPECT_EQ(portalab::nearest("cal", commands), "calibrate");
  EXPECT_EQ(portalab::nearest("deploy", commands), "");
  EXPECT_EQ(portalab::nearest(std::string(10000, 'r'), commands), "");
  EXPECT_EQ(portalab::did_you_mean("lst", commands), "; did you mean 'list'?");
  EXPECT_EQ(error_of("[vector_poly]\nsize = 3\n"),
            "d.toml:2:1: unknown key 'size' in [vector_poly]; expected one of [sizes, dtypes, "
            "variants, spaces, copies, reps, warmups, ranks, noise, min_reps, max_reps, "
            "max_time_s, min_warmup_s, passes]; did you mean 'sizes'?");
}

TEST(Shown, ControlBytesAreQuotedAndLongTextCut) {
  using portalab::shown;
  EXPECT_EQ(shown("plain π, ü and 1 MB"), "plain π, ü and 1 MB");  // printable UTF-8 stays
  // Octal escapes here: "\x07b" would be one byte, 0x7b.
  EXPECT_EQ(shown("a\033]0;t\007b\n\t\r\177"), "a\\x1b]0;t\\x07b\\n\\t\\r\\x7f");
  EXPECT_EQ(shown("\302\2332J"), "\\xc2\\x9b2J");               // C1 CSI
  EXPECT_EQ(shown("\342\200\256evil"), "\\xe2\\x80\\xaeevil");  // right-to-left override
  EXPECT_EQ(shown("\xff\xc3("), "\\xff\\xc3(");                 // not UTF-8
  EXPECT_EQ(shown("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");     // an emoji stays whole
  EXPECT_EQ(shown(std::string(1000000, 'v')), std::string(200, 'v') + "... (1000000 bytes)");
  EXPECT_EQ(shown(std::string(199, 'v') + "π"), std::string(199, 'v') + "... (201 bytes)");
  // Stray continuation bytes are no character to keep whole: cut at the limit,
  // not walked back to the start (tests/fuzz cut "--set " + 300 of them to "--set").
  std::string escaped;
  for (int i = 0; i < 200; ++i) escaped += "\\x8c";
  EXPECT_EQ(shown(std::string(300, '\x8c')), escaped + "... (300 bytes)");
  // A whole message keeps its lines; what is already shown stays as it is.
  EXPECT_EQ(portalab::terminal_safe("a\x1b\nb\\x1b\t"), "a\\x1b\nb\\x1b\t");
  EXPECT_LT(portalab::terminal_safe(std::string(1 << 20, 'm')).size(), 20000u);
}

// Every message about a deck shows its values quoted and cut: an ESC or BEL
// in a name would retitle the terminal, a megabyte name fill it.
TEST(Deck, MessagesShowUntrustedTextQuotedAndCut) {
  // TOML refuses raw control bytes in a string; its escapes make them.
  const std::string esc = "a\\u001b]0;x\\u0007", big(1000000, 'v');
  auto check = [](const std::string& m) {
    for (char c : m) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << m;
    EXPECT_LT(m.size(), 2000u) << m.substr(0, 300);
  };
  for (const std::string& text :
       {"[vector_poly]\nvariants = [\"" + esc + "\"]\n",
        "[vector_poly]\nvariants = [\"" + big + "\"]\n", "[vector_poly]\n\"" + esc + "\" = 1\n",
        "[\"" + big + "\"]\n", "\"" + esc + "\" = 1\n[vector_poly]\n",
        "[vector_poly]\ndtypes = [\"" + esc + "\"]\n", "[vector_poly]\nsizes = [1" + esc + "]\n",
        "[dot_distributed]\nscaling = \"" + esc + "\"\n",
        "[vector_poly]\nsizes = { from = 1, to = 2, factor = 2, \"" + esc + "\" = 3 }\n"}) {
    const std::string m = error_of(text);
    EXPECT_FALSE(m.empty()) << text.substr(0, 100);
    check(m);
  }
  EXPECT_NE(error_of("[vector_poly]\nvariants = [\"" + esc + "\"]\n")
                .find("'a\\x1b]0;x\\x07' is not one of [fused, unfused]"),
            std::string::npos);
  for (const std::string& set : std::vector<std::string>{
           "vector_poly.variants=a\x1b]0;x\x07", "vector_poly.variants=[\"" + esc + "\"]",
           esc + ".sizes=1", "vector_poly." + esc + "=1", "vector_poly.k\x1b=1",
           "vector_poly.variants=" + big.substr(0, 100000)}) {
    portalab::DeckOverrides o;
    o.set = {set};
    const std::string m = error_of("[vector_poly]\n", o);
    EXPECT_EQ(m.rfind("'--set ", 0), 0u) << m;
    check(m);
  }
  try {
    parse_deck("reps = 0\n[vector_poly]\n", "decka\x1b]0;x\x07.toml", catalog());
    ADD_FAILURE() << "accepted reps = 0";
  } catch (const InputError& e) {
    check(e.what());
    EXPECT_EQ(std::string(e.what()).rfind("decka\\x1b]0;x\\x07.toml:1:8: ", 0), 0u) << e.what();
  }
}

// A value set on the command line is blamed on the option, never on the
// deck's line it replaces; a top-level key is named as such, at its line.
TEST(Deck, ErrorsNameTheTopLevelKeyOrTheOptionTheyCameFrom) {
  portalab::DeckOverrides o;
  for (const std::string set : {"reps={a=1}", "warmups={}", "spaces={x=1}", "copies={}"}) {
    o.set = {set};
    const std::string m = error_of("reps = 2\nwarmups = 1\ncopies = \"none\"\n[vector_poly]\n", o);
    EXPECT_EQ(m.rfind("'--set " + set + "': top-level ", 0), 0u) << m;
  }
  EXPECT_EQ(error_of("reps = 0\n[vector_poly]\n"),
            "d.toml:1:8: top-level reps expects an integer >= 1; got 0");
  EXPECT_EQ(error_of("reps = 5\n[vector_poly]\nreps = 0\n"),
            "d.toml:3:8: [vector_poly] reps expects an integer >= 1; got 0");
  EXPECT_EQ(error_of("dtypes = [\"float16\"]\n[vector_poly]\n")
                .rfind("d.toml:1:11: top-level dtypes (for [vector_poly]): 'float16' is not one of",
                       0),
            0u);
}

}  // namespace
