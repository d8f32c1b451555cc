// A run of a deck given as text, with the default options and no
// provenance: what several test files need, in one place.
#pragma once

#include "deck/deck.hpp"
#include "engine/runner.hpp"
#include "experiment/registry.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace portalab::testing {

inline RunSummary run_inline(const std::string& text) {
  const auto deck = parse_deck(text, "inline.toml", catalog());
  return run_deck(deck, RunOptions{}, nlohmann::json::object());
}

}  // namespace portalab::testing
