// `portalab list --format markdown`: the guide's reference pages of the
// experiments and the decks (docs/reference/, generated from it).
#pragma once

#include "output/printer.hpp"

#include <cstdio>

namespace portalab {

class MarkdownPrinter final : public Printer {
 public:
  explicit MarkdownPrinter(std::FILE* out = stdout) : m_out(out) {}
  void experiments(std::span<const ExperimentInfo> all) override;
  void decks(const DeckIndex& index) override;

 private:
  void experiment(const ExperimentInfo& e);
  void deck(const DeckListing& listing, const Deck& deck, const Catalog& catalog);
  std::FILE* m_out;
};

}  // namespace portalab
