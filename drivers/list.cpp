#include "list.hpp"

#include "deck/deck.hpp"
#include "deck/deck_search.hpp"
#include "experiment/registry.hpp"
#include "output/console.hpp"
#include "output/json.hpp"
#include "output/markdown.hpp"

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace portalab {
namespace {

// The decks are read against every space Kokkos has, compiled or not, so
// that a deck naming Cuda is described by a host build too.
Catalog every_space_catalog() {
  Catalog c = global_registry().catalog();
  c.spaces = {"Serial", "OpenMP", "Threads", "Cuda", "HIP", "SYCL"};
  return c;
}

// The printer of a format (output/printer.hpp).
std::unique_ptr<Printer> printer_of(ListFormat format) {
  switch (format) {
    case ListFormat::json: return std::make_unique<JsonPrinter>();
    case ListFormat::markdown: return std::make_unique<MarkdownPrinter>();
    case ListFormat::text: break;
  }
  return std::make_unique<ConsolePrinter>(&std::cerr, &std::cout);
}

}  // namespace

void list_experiments(ListFormat format, bool names_only) {
  // The names alone: for scripts that build decks.
  const std::unique_ptr<Printer> printer = names_only ? std::make_unique<NamesPrinter>()
                                                      : printer_of(format);
  printer->experiments(experiments());
}

void list_decks(ListFormat format) {
  DeckIndex index;
  const auto folders = deck_folders(executable_path());
  for (const auto& f : folders) index.folders.push_back(f.string());
  const auto listings = portalab::list_decks(folders);
  // The text names the decks; the others say what each runs, read here.
  const Catalog catalog = every_space_catalog();
  std::vector<Deck> decks;
  if (format != ListFormat::text)
    for (const auto& d : listings) decks.push_back(load_deck(d.path.string(), catalog));
  for (std::size_t i = 0; i < listings.size(); ++i)
    index.decks.push_back({&listings[i], decks.empty() ? nullptr : &decks[i]});
  index.catalog = &catalog;
  printer_of(format)->decks(index);
}

void list(const std::string& list_format, bool names_only, bool decks_only) {
  const auto format = list_format == "json"       ? ListFormat::json
                      : list_format == "markdown" ? ListFormat::markdown
                                                  : ListFormat::text;
  if (decks_only)
    list_decks(format);
  else
    list_experiments(format, names_only);
}

}  // namespace portalab
