// One JSON document on stdout (support/console.hpp's write_json, the real
// stdout whatever else prints): `list --format json`, `list --decks
// --format json`, `db history --json`, `db fleet --json`.
#pragma once

#include "output/printer.hpp"

namespace portalab {

class JsonPrinter final : public Printer {
 public:
  void experiments(std::span<const ExperimentInfo> all) override;
  void decks(const DeckIndex& index) override;
  void history(const store::History& h) override;
  void fleet(const nlohmann::json& f) override;
};

}  // namespace portalab
