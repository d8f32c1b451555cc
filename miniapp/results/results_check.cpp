#include "results/results_check.hpp"

#include "deck/deck.hpp"
#include "results/schema_version.hpp"
#include "support/text.hpp"

#include "schema_text.hpp"  // generated from schema/*.schema.json

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <vector>

namespace portalab {

namespace {

using json = nlohmann::json;
using Problem = std::optional<std::string>;
using Check = std::function<Problem(const json&, const std::string&)>;

// Fields that files written before they were added lack (upgrade.py's
// ADDED_IN_VERSION_2 and ADDED_IN_VERSION_3): never required.
const std::set<std::string> added_later{"energy", "energy_sizes", "energy_with_copies",
                                        "energy_without_copies", "path"};

std::string where(const std::string& at) { return at.empty() ? "(top)" : at; }

std::string child(const std::string& at, const std::string& name) {
  return at.empty() ? name : at + "/" + name;
}

// A value of the file in a message: short, and no control byte of it shown raw.
std::string shown_value(const json& v) {
  return shown(v.dump(-1, ' ', false, json::error_handler_t::replace), 40);
}

std::size_t characters(const std::string& utf8) {
  return static_cast<std::size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

// 64-bit integers, as the binary writes them and the store holds them; a
// larger whole number is no count of anything (parsed, it is a double).
bool beyond_int64(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>() > std::uint64_t{INT64_MAX};
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return std::floor(d) == d && (d >= 0x1p63 || d < -0x1p63);
  }
  return false;
}

bool of_type(const json& v, const std::string& name) {
  if (name == "null") return v.is_null();
  if (name == "boolean") return v.is_boolean();
  if (name == "string") return v.is_string();
  if (name == "object") return v.is_object();
  if (name == "array") return v.is_array();
  if (name == "number") return v.is_number();
  if (name == "integer")
    return v.is_number_integer() ||
           (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
  return false;
}

const json& schema_of(const std::string& kind);

// The checks of each (sub)schema, made once: every row of a sweep is
// checked by the same functions (schema.py's _checker()).
class Checker {
 public:
  Check make(const json& schema, const json& defs) {
    if (const auto it = m_made.find(&schema); it != m_made.end())
      return [slot = it->second](const json& v, const std::string& at) { return (*slot)(v, at); };
    auto slot = std::make_shared<Check>();  // filled below: a schema may refer to itself
    m_made.emplace(&schema, slot);
    *slot = build(schema, defs);
    return *slot;
  }

 private:
  // The schema a $ref names, and the $defs its own references are in:
  // "#/$defs/x" in this file, "<kind>.schema.json#/$defs/x" in another.
  static std::pair<const json*, const json*> resolve(const std::string& ref, const json& defs) {
    const auto hash = ref.find('#');
    const json* in = &defs;
    if (hash != 0 && hash != std::string::npos) {
      const std::string kind = ref.substr(0, ref.find('.'));
      in = &schema_of(kind).at("$defs");
    }
    const json& found = in->at(ref.substr(ref.rfind('/') + 1));
    return {&found, in};
  }

  Check build(const json& schema, const json& defs) {
    if (schema.contains("$ref")) {
      const auto [target, its_defs] = resolve(schema["$ref"].get<std::string>(), defs);
      return make(*target, *its_defs);
    }
    std::vector<Check> tests;
    for (const char* key : {"anyOf", "oneOf"})
      if (schema.contains(key)) {
        std::vector<Check> alternatives;
        bool nullable = false;
        for (const auto& s : schema[key]) {
          alternatives.push_back(make(s, defs));
          nullable = nullable || s == json{{"type", "null"}};
        }
        tests.push_back([alternatives, nullable](const json& v, const std::string& at) -> Problem {
          if (v.is_null() && nullable) return std::nullopt;
          std::optional<std::string> shortest;
          for (const auto& a : alternatives) {
            auto p = a(v, at);
            if (!p) return std::nullopt;
            if (!shortest || p->size() < shortest->size()) shortest = std::move(p);
          }
          return shortest;
        });
      }
    std::vector<std::string> names;
    if (schema.contains("type")) {
      if (schema["type"].is_array())
        for (const auto& n : schema["type"]) names.push_back(n.get<std::string>());
      else
        names.push_back(schema["type"].get<std::string>());
      tests.push_back([names](const json& v, const std::string& at) -> Problem {
        for (const auto& n : names)
          if (of_type(v, n)) return std::nullopt;
        return fmt::format("{}: {} is not of type {}", where(at), shown_value(v),
                           fmt::join(names, " or "));
      });
    }
    if (schema.contains("enum")) {
      const json allowed = schema["enum"];
      tests.push_back([allowed](const json& v, const std::string& at) -> Problem {
        for (const auto& a : allowed)
          if (a == v && a.is_boolean() == v.is_boolean()) return std::nullopt;
        return fmt::format("{}: {} is not one of {}", where(at), shown_value(v), allowed.dump());
      });
    }
    if (schema.contains("const")) {
      const json value = schema["const"];
      tests.push_back([value](const json& v, const std::string& at) -> Problem {
        if (v == value) return std::nullopt;
        return fmt::format("{}: {} is not {}", where(at), shown_value(v), value.dump());
      });
    }
    const std::optional<double> low = schema.contains("minimum")
                                          ? std::optional(schema["minimum"].get<double>())
                                          : std::nullopt;
    const std::optional<double> above = schema.contains("exclusiveMinimum")
                                            ? std::optional(
                                                  schema["exclusiveMinimum"].get<double>())
                                            : std::nullopt;
    const bool integer = std::find(names.begin(), names.end(), "integer") != names.end();
    if (low || above || names.empty() || integer)
      tests.push_back([low, above, integer](const json& v, const std::string& at) -> Problem {
        if (!v.is_number()) return std::nullopt;
        const double d = v.get<double>();
        if (low && d < *low)
          return fmt::format("{}: {} is less than the minimum of {:g}", where(at), shown_value(v),
                             *low);
        if (above && d <= *above)
          return fmt::format("{}: {} is not above {:g}", where(at), shown_value(v), *above);
        if ((integer || v.is_number_integer()) && beyond_int64(v))
          return fmt::format("{}: {} is beyond a 64-bit integer", where(at), shown_value(v));
        return std::nullopt;
      });
    if (schema.contains("maxLength")) {
      const std::size_t longest = schema["maxLength"].get<std::size_t>();
      tests.push_back([longest](const json& v, const std::string& at) -> Problem {
        if (!v.is_string()) return std::nullopt;
        const std::size_t n = characters(v.get_ref<const std::string&>());
        if (n <= longest) return std::nullopt;
        return fmt::format("{}: a text of {} characters, more than {}", where(at), n, longest);
      });
    }
    if (schema.contains("pattern")) {
      const std::string text = schema["pattern"].get<std::string>();
      auto pattern = std::make_shared<std::regex>(text, std::regex::ECMAScript);
      tests.push_back([pattern, text](const json& v, const std::string& at) -> Problem {
        if (!v.is_string() || std::regex_search(v.get_ref<const std::string&>(), *pattern))
          return std::nullopt;
        return fmt::format("{}: {} does not match {}", where(at), shown_value(v), text);
      });
    }
    if (schema.contains("properties") || schema.contains("required") ||
        schema.contains("additionalProperties")) {
      auto props = std::make_shared<std::map<std::string, Check>>();
      if (schema.contains("properties"))
        for (const auto& [name, s] : schema["properties"].items())
          props->emplace(name, make(s, defs));
      std::vector<std::string> required;
      if (schema.contains("required"))
        for (const auto& r : schema["required"])
          if (!added_later.contains(r.get<std::string>())) required.push_back(r.get<std::string>());
      // true: any; false: none; else a schema every other field meets.
      std::optional<bool> extra_any = true;
      Check extra;
      if (schema.contains("additionalProperties")) {
        const auto& e = schema["additionalProperties"];
        if (e.is_boolean()) {
          extra_any = e.get<bool>();
        } else {
          extra_any.reset();
          extra = make(e, defs);
        }
      }
      tests.push_back(
          [props, required, extra_any, extra](const json& v, const std::string& at) -> Problem {
            if (!v.is_object()) return std::nullopt;
            for (const auto& name : required)
              if (!v.contains(name)) return fmt::format("{}: '{}' is missing", where(at), name);
            for (const auto& [name, x] : v.items()) {
              const auto it = props->find(name);
              if (it != props->end()) {
                if (auto p = it->second(x, child(at, name))) return p;
              } else if (extra_any.has_value()) {
                if (!*extra_any)
                  return fmt::format("{}: {} is not one of its fields", where(at),
                                     shown_value(json(name)));
              } else if (auto p = extra(x, child(at, shown(name, 40)))) {
                return p;
              }
            }
            return std::nullopt;
          });
    }
    if (schema.contains("if")) {
      Check when = make(schema["if"], defs), then = make(schema["then"], defs);
      tests.push_back([when, then](const json& v, const std::string& at) -> Problem {
        if (v.is_object() && !when(v, at)) return then(v, at);
        return std::nullopt;
      });
    }
    if (schema.contains("items")) {
      Check item = make(schema["items"], defs);
      tests.push_back([item](const json& v, const std::string& at) -> Problem {
        if (!v.is_array()) return std::nullopt;
        for (std::size_t i = 0; i < v.size(); ++i)
          if (auto p = item(v[i], child(at, std::to_string(i)))) return p;
        return std::nullopt;
      });
    }
    if (tests.size() == 1) return tests.front();
    return [tests](const json& v, const std::string& at) -> Problem {
      for (const auto& t : tests)
        if (auto p = t(v, at)) return p;
      return std::nullopt;
    };
  }

  std::map<const json*, std::shared_ptr<Check>> m_made;
};

const Check& checker(std::string_view part) {
  static Checker made;
  static std::map<std::string, Check, std::less<>> checks;
  if (const auto it = checks.find(part); it != checks.end()) return it->second;
  const json& schema = part.empty() ? results_schema() : results_schema()["$defs"].at(part);
  return checks.emplace(std::string(part), made.make(schema, results_schema()["$defs"]))
      .first->second;
}

// Older names of figures, by what holds them (upgrade.py's RENAMED_IN_VERSION_4).
void rename(json& obj, const char* from, const char* to) {
  if (!obj.is_object() || !obj.contains(from)) return;
  obj[to] = std::move(obj[from]);
  obj.erase(from);
}

void upgrade_row(json& row, int version) {
  if (version >= 4 || !row.is_object()) return;
  rename(row, "speedup", "speedup_over_baseline");
  if (row.contains("metrics")) rename(row["metrics"], "speedup", "speedup_over_serial");
}

int version_of(const json& doc) {
  const auto it = doc.find("schema_version");
  if (it == doc.end()) return 1;
  return it->is_number_integer()
             ? static_cast<int>(
                   std::clamp<std::int64_t>(it->get<std::int64_t>(), INT32_MIN, INT32_MAX))
             : -1;
}

// upgrade.py's check_version(): a version read here, else one line naming it.
void check_version(const json& doc, const std::string& name, const char* what) {
  const auto it = doc.find("schema_version");
  const int version = version_of(doc);
  if (version >= oldest_schema_version && version <= schema_version) return;
  if (version >= 0 && version < oldest_schema_version)
    throw InputError(fmt::format(
        "{}: a {} of schema_version {}, {}older than version {}, the oldest this portalab reads: "
        "run portalab again",
        name, what, it == doc.end() ? "1" : shown_value(*it),
        it == doc.end() ? "written before portalab numbered its formats, " : "",
        oldest_schema_version));
  throw InputError(fmt::format(
      "{}: a {} of schema_version {}; this portalab reads versions {} to {}: import it with "
      "the portalab that wrote it",
      name, what, shown_value(*it), oldest_schema_version, schema_version));
}

json parse_text(std::string_view text, const std::string& name, const char* what) {
  check_json_nesting(text, name, 64);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // nlohmann's message quotes the bytes it stopped at: shown, not echoed.
    throw InputError(fmt::format("{}: not {} (not JSON: {})", name, what, shown(e.what())));
  }
}

void fail_on(const Problem& p, const std::string& name) {
  if (p) throw InputError(fmt::format("{}: {}", name, *p));
}

// The rows of a document, each against $defs/row.
void check_rows(const json& rows, const std::string& name, const std::string& at) {
  if (!rows.is_array()) throw InputError(fmt::format("{}: {}: not a list of rows", name, at));
  if (rows.empty())
    throw InputError(fmt::format("{}: {}: no rows: a run that measured nothing", name, at));
  for (std::size_t i = 0; i < rows.size(); ++i)
    fail_on(first_problem(rows[i], "row", child(at, std::to_string(i))), name);
}

}  // namespace

const nlohmann::json& results_schema() {
  static const json schema = json::parse(results_schema_text);
  return schema;
}

namespace {

const json& schema_of(const std::string& kind) {
  static const json limits = json::parse(limits_schema_text);
  return kind == "limits" ? limits : results_schema();
}

}  // namespace

std::optional<std::string> first_problem(const nlohmann::json& value, std::string_view part,
                                         const std::string& at) {
  return checker(part)(value, at);
}

nlohmann::json upgraded(nlohmann::json doc) {
  if (!doc.is_object()) return doc;
  const int version = version_of(doc);
  if (version < 0 || version >= 4) return doc;
  if (doc.contains("summary")) rename(doc["summary"], "speedups", "speedup_over_host");
  if (doc.contains("results") && doc["results"].is_array())
    for (auto& r : doc["results"]) upgrade_row(r, version);
  return doc;
}

nlohmann::json parse_results(std::string_view text, const std::string& name) {
  json doc = parse_text(text, name, "a portalab results.json");
  if (!doc.is_object() || !doc.contains("provenance") || !doc.contains("results"))
    throw InputError(
        fmt::format("{}: not a portalab results file (expected an object with "
                    "\"provenance\" and \"results\")",
                    name));
  check_version(doc, name, "results file");
  doc = upgraded(std::move(doc));
  // Every field but the rows, then each row: a problem of row 40,000 is
  // named as such, and the rows are not copied to check the rest.
  json rows = std::move(doc["results"]);
  doc["results"] = json::array();
  fail_on(first_problem(doc), name);
  check_rows(rows, name, "results");
  doc["results"] = std::move(rows);
  return doc;
}

nlohmann::json parse_journal(std::string_view text, const std::string& name) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  const std::string head_name = name + ":1";
  json head = parse_text(lines[0], head_name, "a portalab journal");
  if (!head.is_object() || !head.contains("provenance") || !head["provenance"].is_object())
    throw InputError(
        fmt::format("{}: not a portalab journal (no provenance on its first line)", head_name));
  check_version(head, name, "journal");
  const int version = version_of(head);
  fail_on(first_problem(head["provenance"], "provenance", "provenance"), head_name);
  json rows = json::array();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const std::string line_name = fmt::format("{}:{}", name, i + 1);
    json update;
    try {
      update = parse_text(lines[i], line_name, "a journal line");
    } catch (const InputError&) {
      if (i + 1 == lines.size()) break;  // the last line, with no end: cut short by a kill
      throw;
    }
    const auto first = update.is_object() ? update.find("first") : update.end();
    if (!update.is_object() || first == update.end() || !first->is_number_integer() ||
        first->get<std::int64_t>() < 0 ||
        first->get<std::int64_t>() > static_cast<std::int64_t>(rows.size()) ||
        !update.contains("rows") || !update["rows"].is_array())
      throw InputError(fmt::format(
          "{}: not an update {{\"first\": 0 to {}, \"rows\": [...]}} of the {} rows before it",
          line_name, rows.size(), rows.size()));
    rows.erase(rows.begin() + first->get<std::int64_t>(), rows.end());
    for (auto& r : update["rows"]) {
      upgrade_row(r, version);
      rows.push_back(std::move(r));
    }
  }
  check_rows(rows, name, "rows");
  json counts = {{"PASS", 0}, {"FAIL", 0}, {"ERROR", 0}, {"SKIPPED", 0}, {"N/A", 0}};
  for (const auto& r : rows)
    counts[r["check"].get<std::string>()] = counts[r["check"]].get<int>() + 1;
  return json{{"schema_version", head["schema_version"]},
              {"provenance", std::move(head["provenance"])},
              {"summary",
               {{"entries", rows.size()},
                {"failed", counts["FAIL"]},
                {"errors", counts["ERROR"]},
                {"skipped", counts["SKIPPED"]},
                {"not_applicable", counts["N/A"]},
                {"incomplete", "the run did not finish: rows read from its journal"}}},
              {"results", std::move(rows)}};
}

std::optional<double> finite_number(const nlohmann::json& doc, const char* key) {
  if (!doc.is_object()) return std::nullopt;
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

}  // namespace portalab
