#include "store/references.hpp"

#include "store/sqlite.hpp"
#include "store/store.hpp"

#include "deck/deck.hpp"
#include "support/environment.hpp"
#include "support/text.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace portalab::store {

namespace {
constexpr int exit_bad_input = 2;
}

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

References read_references(const std::string& path) {
  References refs;
  if (path.empty()) return refs;
  // Opened without waiting on a pipe, a regular file only, read with a
  // bound: a site's table is a few hundred lines.
  constexpr std::size_t max_bytes = std::size_t{16} << 20;
  std::string text;
  try {
    text = read_bounded(path, max_bytes, "a reference figures file (CSV)");
  } catch (const InputError& e) {
    throw StoreError(exit_bad_input, e.what());
  }
  if (text.size() > max_bytes)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: more than {} bytes; not a reference figures file",
                                 shown(path), max_bytes));
  std::istringstream in(text);
  const std::vector<std::string> header{"model",  "quantity", "value", "unit",
                                        "source", "date",     "basis"};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = csv_fields(line);
    if (f == header || f == std::vector<std::string>(header.begin(), header.end() - 1)) continue;
    if (f.size() != header.size() && f.size() != header.size() - 1)
      throw StoreError(exit_bad_input, fmt::format("{}:{}: {} fields; expected 6 or 7: "
                                                   "model,quantity,value,unit,source,date[,basis]",
                                                   shown(path), number, f.size()));
    if (f[0].empty() || f[1].empty())
      throw StoreError(exit_bad_input,
                       fmt::format("{}:{}: an empty model or quantity", shown(path), number));
    char* end = nullptr;
    const double v = std::strtod(f[2].c_str(), &end);
    if (f[2].empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
      throw StoreError(exit_bad_input, fmt::format("{}:{}: value '{}': expected a positive number",
                                                   shown(path), number, shown(f[2])));
    const std::string basis = f.size() == header.size() ? f[6] : "portalab";
    if (basis != "portalab" && basis != "public")
      throw StoreError(exit_bad_input,
                       fmt::format("{}:{}: basis '{}': expected portalab (measured by portalab, "
                                   "judged against) or public (a vendor's or published figure, "
                                   "shown beside it)",
                                   shown(path), number, shown(basis)));
    auto& figures = refs[f[0]][f[1]];
    (basis == "public" ? figures.published : figures.measured) = Reference{v, f[3], f[4], f[5]};
  }
  if (refs.empty())
    throw StoreError(exit_bad_input,
                     fmt::format("{}: no reference figures in it (expected CSV lines "
                                 "model,quantity,value,unit,source,date[,basis])",
                                 shown(path)));
  return refs;
}

std::string reference_file(const std::string& given) {
  if (!given.empty()) return given;
  if (const auto env = env_path("PORTALAB_REFERENCE")) return *env;
  return default_reference_figures();
}

}  // namespace portalab::store
