// A results document as the store imports it, checked by the rules the
// scripts check it by: schema/results.schema.json (built in), read through
// the same subset of JSON Schema as scripts/portalab/schema.py's
// first_problem(), the same versions (2 to schema_version, older names
// upgraded), the same reading of a journal (results.jsonl). One schema, one
// set of rules: a file the scripts refuse, the store refuses.
// No Kokkos: part of portalab_base, so that a fuzzer feeds it.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace portalab {

// A field of a results document as the readers take it: a finite number,
// else nullopt (absent, null, not a number, infinite or NaN). `doc` need not
// be an object.
std::optional<double> finite_number(const nlohmann::json& doc, const char* key);

// The oldest schema_version read (scripts/portalab/schema.py's OLDEST_VERSION).
inline constexpr int oldest_schema_version = 2;

// schema/results.schema.json, as this portalab was built with it.
const nlohmann::json& results_schema();

// The first way `value` breaks the schema (part: "" the whole document,
// else its $defs/<part>, found at `at` in its file): "<field>: <what>",
// the field as a path ("results/3/reps"); nullopt where it breaks none.
std::optional<std::string> first_problem(const nlohmann::json& value, std::string_view part = {},
                                         const std::string& at = {});

// A results document of an older schema_version under the newest names
// (upgrade.py's upgraded()), its schema_version kept.
nlohmann::json upgraded(nlohmann::json doc);

// The results document in `text`, the contents of a results.json named
// `name` in messages: JSON as portalab writes it, a version read here,
// every field as the schema says and at least one row. InputError "<name>:
// <field>: <what>" (one line) otherwise.
nlohmann::json parse_results(std::string_view text, const std::string& name);

// The document a run's journal (results.jsonl) holds: its provenance and
// every row recorded, each update's rows replacing those from its "first"
// on, a last line cut short by a kill left out; its summary says
// "incomplete" (reading.py's read_journal()). Checked as parse_results
// checks a file; InputError "<name>:<line>: <what>" otherwise.
nlohmann::json parse_journal(std::string_view text, const std::string& name);

}  // namespace portalab
