#include "output/json.hpp"

#include "deck/deck_search.hpp"
#include "output/listing.hpp"
#include "platform/space_names.hpp"
#include "store/store.hpp"
#include "support/console.hpp"

#include <sstream>
#include <string>
#include <vector>

namespace portalab {
namespace {

nlohmann::json experiment_json(const ExperimentInfo& e) {
  nlohmann::json variants = nlohmann::json::array();
  for (std::size_t v = 0; v < e.variants.size(); ++v) {
    const VariantTraits& t = e.traits.at(v);
    nlohmann::json unserved = nlohmann::json::array();
    for (const auto& u : t.unserved)
      unserved.push_back({{"space", u.space}, {"dtype", u.dtype}, {"why", u.why}});
    variants.push_back({{"name", e.variants[v]},
                        {"instances", t.instances},
                        {"needs_copies", t.needs_copies},
                        {"bound", std::string(to_string(e.bound_of(v)))},
                        {"unserved", unserved}});
  }
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& p : e.parameters)
    parameters.push_back({{"name", p.name},
                          {"default", p.default_value},
                          {"min", p.min},
                          {"max", p.max},
                          {"choices", p.choices},
                          {"meaning", p.meaning}});
  return {{"name", e.name},
          {"summary", e.summary},
          {"variants", variants},
          {"dtypes", e.dtypes},
          {"default_dtypes", e.default_dtypes},
          {"default_sizes", e.default_sizes},
          {"bound", std::string(to_string(e.bound))},
          {"parameters", parameters},
          {"same_outputs", e.same_outputs},
          {"distributed", e.distributed}};
}

nlohmann::json deck_json(const DeckListing& listing, const Deck& deck, const Catalog& catalog) {
  nlohmann::json plans = nlohmann::json::array();
  for (const auto& p : deck.plans)
    plans.push_back({{"experiment", p.experiment},
                     {"sizes", p.sizes},
                     {"dtypes", p.dtypes},
                     {"variants", p.variants},
                     {"spaces", p.spaces == catalog.spaces ? nlohmann::json("all compiled")
                                                           : nlohmann::json(p.spaces)},
                     {"copies", copies_text(p.copies)},
                     {"reps", p.reps},
                     {"warmups", p.warmups},
                     {"ranks", p.ranks},
                     {"parameters", p.parameters}});
  return {{"name", listing.name},
          {"path", listing.path.string()},
          {"comment", leading_comment(listing.path)},
          {"calibrate", deck.calibrate},
          {"plans", plans}};
}

}  // namespace

void JsonPrinter::experiments(std::span<const ExperimentInfo> all) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : all) list.push_back(experiment_json(e));
  const nlohmann::json doc{{"spaces_compiled", enabled_space_names()}, {"experiments", list}};
  write_json(doc.dump(2) + "\n");
}

void JsonPrinter::decks(const DeckIndex& index) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& d : index.decks) all.push_back(deck_json(*d.listing, *d.deck, *index.catalog));
  write_json(nlohmann::json{{"folders", index.folders}, {"decks", all}}.dump(2) + "\n");
}

void JsonPrinter::history(const store::History& h) {
  std::ostringstream text;
  store::write_history_json(h, text);
  write_json(text.str());
}

void JsonPrinter::fleet(const nlohmann::json& f) { write_json(f.dump(2) + "\n"); }

}  // namespace portalab
