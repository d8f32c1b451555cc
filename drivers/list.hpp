// `portalab list`: the experiments registered and the decks that can be
// named, as text for people, as Markdown (the guide's reference pages are
// generated from it, so that they cannot drift from the code) or as JSON.
#pragma once

#include <string>
#include <string_view>

namespace portalab {

enum class ListFormat { text, markdown, json };

// Every experiment with its variants, types, default sizes and parameters;
// `names_only`: the names alone, one per line (for scripts that build decks).
void list_experiments(ListFormat format, bool names_only);

// The decks `portalab run NAME` finds. Markdown and JSON add each deck's
// leading comment and what it runs (experiments, sizes, types, variants,
// spaces, copies); a deck that does not parse throws InputError.
void list_decks(ListFormat format);

// `portalab list [--names] [--decks] [--format text|markdown|json]`.
void list(const std::string& format, bool names_only, bool decks_only);

}  // namespace portalab
