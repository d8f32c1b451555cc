#include "list.hpp"

#include "deck/deck.hpp"
#include "deck/deck_search.hpp"
#include "experiment/experiment.hpp"
#include "support/console.hpp"
#include "platform/spaces.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace portalab {
namespace {

// A size as a deck would write it: 5e6 for 5000000, 7000 as it is.
std::string size_text(std::size_t n) {
  int exponent = 0;
  std::size_t mantissa = n;
  while (mantissa != 0 && mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  return exponent >= 4 ? fmt::format("{}e{}", mantissa, exponent) : std::to_string(n);
}

std::vector<std::string> sizes_text(const std::vector<std::size_t>& sizes) {
  std::vector<std::string> out;
  for (auto n : sizes) out.push_back(size_text(n));
  return out;
}

std::string parameter_range(const ParameterSpec& p) {
  if (!p.choices.empty()) return fmt::format("{}", fmt::join(p.choices, " | "));
  return fmt::format("{} to {}", p.min, p.max);
}

std::string parameter_default(const ParameterSpec& p) {
  const auto i = static_cast<std::size_t>(p.default_value);
  if (!p.choices.empty() && p.default_value >= 0 && i < p.choices.size()) return p.choices[i];
  return std::to_string(p.default_value);
}

// A table cell: no line breaks, and '|' escaped.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string code_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& i : items) quoted.push_back("`" + i + "`");
  return fmt::format("{}", fmt::join(quoted, ", "));
}

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

void experiment_markdown(const ExperimentInfo& e) {
  print_to(stdout, "## {}\n\n{}\n\n", e.name, e.summary);
  print_to(stdout, "| | |\n| --- | --- |\n");
  print_to(stdout, "| variants | {} |\n", code_list(e.variants));
  print_to(stdout, "| types | {} (default {}) |\n", fmt::join(e.dtypes, ", "),
           fmt::join(e.default_dtypes, ", "));
  print_to(stdout, "| sizes by default | {} |\n", fmt::join(sizes_text(e.default_sizes), ", "));
  print_to(stdout, "| limited by | {} |\n", to_string(e.bound));
  if (e.same_outputs) print_to(stdout, "| outputs | bit-identical across variants |\n");
  if (e.distributed) print_to(stdout, "| ranks | moves data between MPI ranks |\n");
  print_to(stdout, "\n");

  // What sets a variant apart from the experiment's defaults, if anything.
  std::vector<std::string> rows;
  for (std::size_t v = 0; v < e.variants.size(); ++v) {
    const VariantTraits& t = e.traits.at(v);
    std::vector<std::string> facts;
    if (t.instances > 1)
      facts.push_back(fmt::format("runs on {} concurrent instances", t.instances));
    if (t.needs_copies) facts.push_back("times its own copies (N/A with copies = none)");
    if (t.bound && *t.bound != e.bound)
      facts.push_back(fmt::format("limited by {}", to_string(*t.bound)));
    for (const auto& u : t.unserved)
      facts.push_back(fmt::format("N/A in {} {}: {}", u.space, u.dtype, u.why));
    if (!facts.empty())
      rows.push_back(fmt::format("| `{}` | {} |", e.variants[v],
                                 cell(fmt::format("{}", fmt::join(facts, "; ")))));
  }
  if (!rows.empty())
    print_to(stdout, "| variant | |\n| --- | --- |\n{}\n\n", fmt::join(rows, "\n"));

  if (!e.parameters.empty()) {
    print_to(stdout, "| key | default | values | meaning |\n| --- | --- | --- | --- |\n");
    for (const auto& p : e.parameters)
      print_to(stdout, "| `{}` | {} | {} | {} |\n", p.name, parameter_default(p),
               parameter_range(p), cell(p.meaning));
    print_to(stdout, "\n");
  }
}

// The deck's comment lines before its first key, without the '#'.
std::vector<std::string> leading_comment(const std::filesystem::path& deck) {
  std::ifstream in(deck);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos) {
      if (!lines.empty()) break;
      continue;
    }
    if (line[start] != '#') break;
    std::string text = line.substr(start + 1);
    if (!text.empty() && text.front() == ' ') text.erase(0, 1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.pop_back();
    lines.push_back(text);
  }
  return lines;
}

// The decks are read against every space Kokkos has, compiled or not, so
// that a deck naming Cuda is described by a host build too.
Catalog every_space_catalog() {
  Catalog c = global_registry().catalog();
  c.spaces = {"Serial", "OpenMP", "Threads", "Cuda", "HIP", "SYCL"};
  return c;
}

std::vector<std::string> copies_text(const std::vector<CopyMode>& copies) {
  std::vector<std::string> out;
  for (auto m : copies) out.emplace_back(to_string(m));
  return out;
}

std::string parameters_text(const Parameters& parameters) {
  std::vector<std::string> out;
  for (const auto& [k, v] : parameters) out.push_back(fmt::format("{}={}", k, v));
  return fmt::format("{}", fmt::join(out, " "));
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

void deck_markdown(const DeckListing& listing, const Deck& deck, const Catalog& catalog) {
  print_to(stdout, "## {}\n\n", listing.name);
  const auto comment = leading_comment(listing.path);
  if (!comment.empty()) print_to(stdout, "```text\n{}\n```\n\n", fmt::join(comment, "\n"));
  print_to(stdout, "`portalab run {}`: calibration `{}`\n\n", listing.name, deck.calibrate);
  print_to(stdout,
           "| experiment | sizes | types | variants | spaces | copies | reps (warm-ups) | "
           "parameters |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const auto& p : deck.plans) {
    const ExperimentSpec* spec = catalog.find(p.experiment);
    const bool all_variants = spec && p.variants == spec->variants;
    print_to(
        stdout, "| [`{0}`](experiments.md#{0}) | {1} | {2} | {3} | {4} | {5} | {6} ({7}) | {8} |\n",
        p.experiment, fmt::join(sizes_text(p.sizes), ", "), fmt::join(p.dtypes, ", "),
        all_variants ? "all" : fmt::format("{}", fmt::join(p.variants, ", ")),
        p.spaces == catalog.spaces ? "all compiled" : fmt::format("{}", fmt::join(p.spaces, ", ")),
        fmt::join(copies_text(p.copies), ", "), p.reps, p.warmups,
        cell(parameters_text(p.parameters)) +
            (p.ranks.empty() ? "" : fmt::format(" ranks {}", fmt::join(p.ranks, ", "))));
  }
  print_to(stdout, "\n");
}

}  // namespace

void list_experiments(ListFormat format, bool names_only) {
  if (names_only) {  // for scripts that build decks
    for (const auto& e : experiments()) print_to(stdout, "{}\n", e.name);
    return;
  }
  switch (format) {
    case ListFormat::json: {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& e : experiments()) all.push_back(experiment_json(e));
      const nlohmann::json doc{{"spaces_compiled", enabled_space_names()}, {"experiments", all}};
      write_json(doc.dump(2) + "\n");
      return;
    }
    case ListFormat::markdown:
      print_to(stdout,
               "# Experiments\n\n"
               "Every experiment registered in portalab, as `portalab list --format markdown` "
               "prints it (generated; the spaces compiled in the build that wrote it: {}). A "
               "deck's table for an experiment takes `sizes`, `dtypes`, `variants`, `spaces`, "
               "`copies`, `reps`, `warmups`, `ranks` and the experiment's own keys below.\n\n",
               fmt::join(enabled_space_names(), ", "));
      for (const auto& e : experiments()) experiment_markdown(e);
      return;
    case ListFormat::text: break;
  }
  print_to(stdout, "spaces compiled in: {}\n\n", fmt::join(enabled_space_names(), ", "));
  for (const auto& e : experiments()) {
    print_to(stdout,
             "{}\n  {}\n  variants: {}\n  dtypes:   {} (default {})\n  sizes:    {} by default\n",
             e.name, e.summary, fmt::join(e.variants, ", "), fmt::join(e.dtypes, ", "),
             fmt::join(e.default_dtypes, ", "), fmt::join(e.default_sizes, ", "));
    for (const auto& p : e.parameters)
      print_to(stdout, "  {} = {} by default, {} to {}: {}\n", p.name, p.default_value, p.min,
               p.max, p.meaning);
  }
}

void list_decks(ListFormat format) {
  const auto folders = deck_folders(executable_path());
  const auto decks = portalab::list_decks(folders);
  if (format != ListFormat::text) {
    const Catalog catalog = every_space_catalog();
    if (format == ListFormat::json) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& d : decks)
        all.push_back(deck_json(d, load_deck(d.path.string(), catalog), catalog));
      std::vector<std::string> folder_names;
      for (const auto& f : folders) folder_names.push_back(f.string());
      write_json(nlohmann::json{{"folders", folder_names}, {"decks", all}}.dump(2) + "\n");
      return;
    }
    print_to(stdout,
             "# Decks\n\n"
             "Every deck `portalab run NAME` finds by name, as `portalab list --decks --format "
             "markdown` prints it (generated): its leading comment, and what it runs. Sizes, "
             "types, variants and copies not given in a deck are the experiment's defaults; "
             "\"all compiled\" spaces are those of the build that runs it.\n\n");
    for (const auto& d : decks) deck_markdown(d, load_deck(d.path.string(), catalog), catalog);
    return;
  }
  print_to(stdout,
           "decks by name: `portalab run NAME` looks for NAME, then NAME.toml in the "
           "working folder, then in these folders, in this order:\n");
  for (const auto& f : folders) print_to(stdout, "  {}\n", shown(f.string(), 4096));
  if (folders.empty())
    print_to(stdout, "  (none found beside this executable: give a deck's path)\n");
  std::size_t width = 0;
  for (const auto& d : decks) width = std::max(width, d.name.size());
  if (!decks.empty()) print_to(stdout, "\n");
  for (const auto& d : decks)
    print_to(stdout, "{:<{}}  {}\n", shown(d.name), width, shown(d.summary));
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
