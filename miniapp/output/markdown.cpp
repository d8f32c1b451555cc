#include "output/markdown.hpp"

#include "deck/deck_search.hpp"
#include "output/listing.hpp"
#include "platform/space_names.hpp"
#include "support/console.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace portalab {
namespace {

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

}  // namespace

void MarkdownPrinter::experiments(std::span<const ExperimentInfo> all) {
  print_to(m_out,
           "# Experiments\n\n"
           "Every experiment registered in portalab, as `portalab list --format markdown` "
           "prints it (generated; the spaces compiled in the build that wrote it: {}). A "
           "deck's table for an experiment takes `sizes`, `dtypes`, `variants`, `spaces`, "
           "`copies`, `reps`, `warmups`, `ranks` and the experiment's own keys below.\n\n",
           fmt::join(enabled_space_names(), ", "));
  for (const auto& e : all) experiment(e);
}

void MarkdownPrinter::experiment(const ExperimentInfo& e) {
  print_to(m_out, "## {}\n\n{}\n\n", e.name, e.summary);
  print_to(m_out, "| | |\n| --- | --- |\n");
  print_to(m_out, "| variants | {} |\n", code_list(e.variants));
  print_to(m_out, "| types | {} (default {}) |\n", fmt::join(e.dtypes, ", "),
           fmt::join(e.default_dtypes, ", "));
  print_to(m_out, "| sizes by default | {} |\n", fmt::join(sizes_text(e.default_sizes), ", "));
  print_to(m_out, "| limited by | {} |\n", to_string(e.bound));
  if (e.same_outputs) print_to(m_out, "| outputs | bit-identical across variants |\n");
  if (e.distributed) print_to(m_out, "| ranks | moves data between MPI ranks |\n");
  print_to(m_out, "\n");

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
  if (!rows.empty()) print_to(m_out, "| variant | |\n| --- | --- |\n{}\n\n", fmt::join(rows, "\n"));

  if (!e.parameters.empty()) {
    print_to(m_out, "| key | default | values | meaning |\n| --- | --- | --- | --- |\n");
    for (const auto& p : e.parameters)
      print_to(m_out, "| `{}` | {} | {} | {} |\n", p.name, parameter_default(p), parameter_range(p),
               cell(p.meaning));
    print_to(m_out, "\n");
  }
}

void MarkdownPrinter::decks(const DeckIndex& index) {
  print_to(m_out,
           "# Decks\n\n"
           "Every deck `portalab run NAME` finds by name, as `portalab list --decks --format "
           "markdown` prints it (generated): its leading comment, and what it runs. Sizes, "
           "types, variants and copies not given in a deck are the experiment's defaults; "
           "\"all compiled\" spaces are those of the build that runs it.\n\n");
  for (const auto& d : index.decks) deck(*d.listing, *d.deck, *index.catalog);
}

void MarkdownPrinter::deck(const DeckListing& listing, const Deck& deck, const Catalog& catalog) {
  print_to(m_out, "## {}\n\n", listing.name);
  const auto comment = leading_comment(listing.path);
  if (!comment.empty()) print_to(m_out, "```text\n{}\n```\n\n", fmt::join(comment, "\n"));
  print_to(m_out, "`portalab run {}`: calibration `{}`\n\n", listing.name, deck.calibrate);
  print_to(stdout,
           "| experiment | sizes | types | variants | spaces | copies | reps (warm-ups) | "
           "parameters |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const auto& p : deck.plans) {
    const ExperimentSpec* spec = catalog.find(p.experiment);
    const bool all_variants = spec && p.variants == spec->variants;
    print_to(
        m_out, "| [`{0}`](experiments.md#{0}) | {1} | {2} | {3} | {4} | {5} | {6} ({7}) | {8} |\n",
        p.experiment, fmt::join(sizes_text(p.sizes), ", "), fmt::join(p.dtypes, ", "),
        all_variants ? "all" : fmt::format("{}", fmt::join(p.variants, ", ")),
        p.spaces == catalog.spaces ? "all compiled" : fmt::format("{}", fmt::join(p.spaces, ", ")),
        fmt::join(copies_text(p.copies), ", "), p.reps, p.warmups,
        cell(parameters_text(p.parameters)) +
            (p.ranks.empty() ? "" : fmt::format(" ranks {}", fmt::join(p.ranks, ", "))));
  }
  print_to(m_out, "\n");
}

}  // namespace portalab
