// libFuzzer target for parse_deck and its --set overrides. InputError is the
// expected answer to bad input; any other exception, a sanitizer report, or a
// deck accepted in breach of what the parser promises aborts the run.
//
// fuzz_deck: the first line is one --set string (none if empty), the rest the deck.
// fuzz_set (PORTALAB_FUZZ_SET_ONLY): the whole input is one --set string,
// applied to a fixed valid deck.
#include "deck/deck.hpp"
#include "fuzz_common.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace portalab;
using portalab::fuzz::broken;
using portalab::fuzz::check_message;
using portalab::fuzz::fuzz_catalog;

constexpr const char* deck_path = "fuzz.toml";

template <class T>
bool subset_without_repeats(const std::vector<T>& items, const std::vector<T>& allowed) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (std::find(allowed.begin(), allowed.end(), items[i]) == allowed.end()) return false;
    if (std::find(items.begin(), items.begin() + i, items[i]) != items.begin() + i) return false;
  }
  return true;
}

// What every accepted deck must satisfy before anything runs or allocates.
void check_accepted(const Deck& deck) {
  const Catalog& cat = fuzz_catalog();
  if (deck.plans.empty()) broken("accepted a deck with no experiment");
  if (deck.calibrate != "quick" && deck.calibrate != "full" && deck.calibrate != "none")
    broken("calibrate", deck.calibrate);
  for (const auto& p : deck.plans) {
    const ExperimentSpec* spec = cat.find(p.experiment);
    if (!spec) broken("unknown experiment accepted", p.experiment);
    if (p.sizes.empty() || p.dtypes.empty() || p.variants.empty() || p.spaces.empty() ||
        p.copies.empty())
      broken("an empty list accepted", p.experiment);
    for (auto n : p.sizes)
      if (n < 1 || n > (std::size_t{1} << 48)) broken("size out of range", p.experiment);
    if (!subset_without_repeats(p.dtypes, spec->dtypes)) broken("dtypes", p.experiment);
    if (!subset_without_repeats(p.variants, spec->variants)) broken("variants", p.experiment);
    if (!subset_without_repeats(p.spaces, cat.spaces)) broken("spaces", p.experiment);
    if (!subset_without_repeats(p.copies, {CopyMode::pageable, CopyMode::pinned, CopyMode::none}))
      broken("copies", p.experiment);
    if (p.reps < 1 || p.warmups < 0) broken("reps or warmups out of range", p.experiment);
  }
}

// Every message says where: the deck's path, or the --set option it came from.
void check_rejected(const InputError& e) {
  const std::string_view m = e.what();
  if (m.rfind(std::string(deck_path) + ":", 0) != 0 && m.rfind("'--set ", 0) != 0)
    broken("an error that does not say where", m);
  check_message(m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  DeckOverrides overrides;
#ifdef PORTALAB_FUZZ_SET_ONLY
  const std::string deck = "reps = 3\n[vector_poly]\nsizes = [10]\n[stream_copy]\n";
  overrides.set.emplace_back(input);
#else
  const auto eol = input.find('\n');
  const std::string_view first = input.substr(0, eol);
  const std::string deck(eol == std::string_view::npos ? std::string_view{}
                                                       : input.substr(eol + 1));
  if (!first.empty()) overrides.set.emplace_back(first);
#endif
  try {
    check_accepted(parse_deck(deck, deck_path, fuzz_catalog(), overrides));
  } catch (const InputError& e) {
    check_rejected(e);
  }
  return 0;
}
