#include "deck/deck.hpp"

#include "deck/deck_search.hpp"
#include "support/files.hpp"
#include "support/hash.hpp"
#include "platform/space_names.hpp"
#include "support/suggest.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace portalab {

const std::vector<std::string>& experiment_keys() {
  static const std::vector<std::string> keys{"sizes",        "dtypes",   "variants", "spaces",
                                             "copies",       "reps",     "warmups",  "ranks",
                                             "noise",        "min_reps", "max_reps", "max_time_s",
                                             "min_warmup_s", "passes"};
  return keys;
}
const std::vector<std::string>& global_keys() {
  static const std::vector<std::string> keys{"dtypes",   "spaces",     "copies",       "reps",
                                             "warmups",  "calibrate",  "profile_reps", "ranks",
                                             "energy",   "watchdog_s", "noise",        "min_reps",
                                             "max_reps", "max_time_s", "min_warmup_s", "passes"};
  return keys;
}

std::string content_hash(std::string_view bytes) {
  const std::uint64_t h = fnv1a64(bytes);
  return fmt::format("fnv1a64:{:016x}", h);
}

namespace {

// Sizes above this cannot be allocated on any machine: their bytes would not
// fit in 64 bits for the widest experiment.
constexpr double max_size = 0x1p48;

// What is read before parsing. toml++ recurses once per level of nesting
// (a dotted key a.a.a... of 300,000 levels overflows an 8 MiB stack, fewer
// under a sanitizer); a deck needs three levels ([table], key, { range }).
constexpr std::size_t max_deck_bytes = 1 << 20;
constexpr std::size_t max_set_bytes = 1 << 16;
constexpr int max_nesting = 32;

// toml++'s "line:column" of a byte offset (columns count bytes here).
std::string line_column(std::string_view text, std::size_t at) {
  const std::size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
  const std::size_t start = text.rfind('\n', at == 0 ? 0 : at - 1);
  const std::size_t column = at == 0 || start == std::string_view::npos ? at + 1 : at - start;
  return fmt::format("{}:{}", line, column);
}

// The deepest nesting of tables, arrays and inline tables in TOML text, by
// a scan that knows strings, comments, keys and brackets, checked against
// max_nesting before toml++ sees the text. Not a validator: on text that is
// no TOML it keeps counting and leaves the error to toml++.
class NestingScan {
 public:
  NestingScan(std::string_view text, std::string where) : m_text(text), m_where(std::move(where)) {}

  void run() {
    while (m_at < m_text.size()) line();
  }

 private:
  struct Open {
    char bracket;  // '[' array, '{' inline table
    int key = 0;   // segments of the inline table's current key
  };

  // header levels + the line's key + every open bracket and its key.
  int depth() const {
    int d = m_header + m_key;
    for (const auto& o : m_open) d += 1 + o.key;
    return d;
  }
  void check(int more = 0) {
    if (depth() + more > max_nesting) {
      const std::string at = line_column(m_text, std::min(m_at, m_text.size()));
      throw InputError(
          fmt::format("{}{}: nested more than {} levels deep (tables, dotted keys, "
                      "lists); a deck needs three",
                      m_where, m_where.back() == '\'' ? "" : ":" + at, max_nesting));
    }
  }

  char peek(std::size_t ahead = 0) const {
    return m_at + ahead < m_text.size() ? m_text[m_at + ahead] : '\0';
  }
  bool starts(std::string_view s) const { return m_text.substr(m_at, s.size()) == s; }
  void blanks() {
    while (peek() == ' ' || peek() == '\t') ++m_at;
  }
  void to_line_end() {
    while (m_at < m_text.size() && peek() != '\n') ++m_at;
  }

  // A string of any of TOML's four kinds, from its opening quote.
  void string() {
    const char q = peek();
    if (starts(q == '"' ? "\"\"\"" : "'''")) {
      const std::string_view close = q == '"' ? "\"\"\"" : "'''";
      m_at += 3;
      while (m_at < m_text.size() && !starts(close)) m_at += q == '"' && peek() == '\\' ? 2 : 1;
      m_at += 3;
      return;
    }
    ++m_at;
    while (m_at < m_text.size() && peek() != q && peek() != '\n')
      m_at += q == '"' && peek() == '\\' ? 2 : 1;
    if (peek() == q) ++m_at;
  }

  // A key's segments (a.b."c" is 3); stops before what follows it. `at`:
  // the nesting it starts from (a header's is none).
  int key(int at) {
    int segments = 0;
    for (;;) {
      check(at - depth() + segments);  // stops at the segment too deep
      blanks();
      if (peek() == '"' || peek() == '\'') {
        string();
      } else {
        const std::size_t from = m_at;
        while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '-')
          ++m_at;
        if (m_at == from) return segments;
      }
      ++segments;
      blanks();
      if (peek() != '.') return segments;
      ++m_at;
    }
  }

  // A value up to the end of its line, or of the last bracket it opens.
  void value() {
    while (m_at < m_text.size()) {
      const char c = peek();
      if (c == '"' || c == '\'') {
        string();
        continue;
      }
      if (c == '#') {
        to_line_end();
        continue;
      }
      if (c == '\n' && m_open.empty()) return;
      ++m_at;
      if (c == '[' || c == '{') {
        m_open.push_back({c});
        check();
        if (c == '{') inline_key();
      } else if ((c == ']' || c == '}') && !m_open.empty()) {
        m_open.pop_back();
      } else if (c == ',' && !m_open.empty() && m_open.back().bracket == '{') {
        inline_key();
      }
    }
  }

  void inline_key() {
    m_open.back().key = 0;
    const int segments = key(depth());
    blanks();
    if (peek() == '=') {
      m_open.back().key = std::max(0, segments - 1);
      check();
      ++m_at;
    }
  }

  void line() {
    m_key = 0;
    while (peek() == ' ' || peek() == '\t' || peek() == '\r' || peek() == '\n') ++m_at;
    if (m_at >= m_text.size()) return;
    if (peek() == '#') return to_line_end();
    if (peek() == '[') {  // [table] or [[array of tables]]
      m_at += starts("[[") ? 2 : 1;
      m_header = key(0);
      check();
      return to_line_end();  // a comment at most; toml++ rejects anything else
    }
    const std::size_t from = m_at;
    m_key = key(depth());
    check();
    blanks();
    if (peek() == '=') ++m_at;
    if (m_at == from) ++m_at;  // no key: always move on
    value();
  }

  std::string_view m_text;
  std::string m_where;
  std::size_t m_at = 0;
  int m_header = 0, m_key = 0;
  std::vector<Open> m_open;
};

std::string where(const toml::source_region& src) {
  const std::string path = src.path ? *src.path : std::string("<deck>");
  if (path.rfind("--set ", 0) == 0)  // a command-line override, named by its literal prefix
    return fmt::format("'--set {}'", shown(std::string_view(path).substr(6)));
  return fmt::format("{}:{}:{}", shown(path), src.begin.line, src.begin.column);
}

[[noreturn]] void fail(const toml::source_region& src, std::string_view what) {
  throw InputError(fmt::format("{}: {}", where(src), what));
}
[[noreturn]] void fail(const toml::node& node, std::string_view what) { fail(node.source(), what); }

std::string type_of(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "a list";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

// What refuses a list's item, in a deck and on the command line alike (one
// rule for both: a name listed twice is refused, never merged).
std::string not_one_of(std::string_view context, std::string_view given,
                       const std::vector<std::string>& allowed) {
  return fmt::format("{}: '{}' is not one of [{}]{}", context, shown(given),
                     fmt::join(allowed, ", "), did_you_mean(given, allowed));
}
std::string listed_twice(std::string_view context, std::string_view given) {
  return fmt::format("{}: '{}' is listed twice", context, shown(given));
}

// A string or a list of strings, each one of `allowed` (compared by `match`).
template <class Match>
std::vector<std::string> strings(const toml::node& node, std::string_view context,
                                 const std::vector<std::string>& allowed, Match match) {
  std::vector<const toml::node*> items;
  if (const auto* arr = node.as_array()) {
    if (arr->empty()) fail(node, fmt::format("{} must not be an empty list", context));
    for (const auto& item : *arr) items.push_back(&item);
  } else {
    items.push_back(&node);
  }
  std::vector<std::string> out;
  for (const auto* item : items) {
    const auto s = item->value<std::string>();
    if (!s)
      fail(*item, fmt::format("{} expects a string or a list of strings, one of [{}]; got {}",
                              context, fmt::join(allowed, ", "), type_of(*item)));
    const std::string found = match(*s);
    if (found.empty()) fail(*item, not_one_of(context, *s, allowed));
    if (std::find(out.begin(), out.end(), found) != out.end())
      fail(*item, listed_twice(context, *s));
    out.push_back(found);
  }
  return out;
}

std::vector<std::string> strings(const toml::node& node, std::string_view context,
                                 const std::vector<std::string>& allowed) {
  return strings(node, context, allowed, [&](const std::string& s) {
    return std::find(allowed.begin(), allowed.end(), s) != allowed.end() ? s : std::string();
  });
}

// An int from min up: larger values would wrap when stored (2^32 reps gave 0).
int integer(const toml::node& node, std::string_view context, int min,
            int max = std::numeric_limits<int>::max()) {
  const auto v = node.value_exact<std::int64_t>();
  if (!v)
    fail(node, fmt::format("{} expects an integer >= {}; got {}", context, min, type_of(node)));
  if (*v < min) fail(node, fmt::format("{} expects an integer >= {}; got {}", context, min, *v));
  if (*v > max)
    fail(node, fmt::format("{} expects an integer from {} to {}; got {}", context, min, max, *v));
  return static_cast<int>(*v);
}

// A number (integer or float) in (above, at_most], or [above, at_most]
// where `or_equal`.
double number_in(const toml::node& node, std::string_view context, double above, double at_most,
                 bool or_equal = false) {
  const auto expected = [&] {
    return fmt::format("{} expects a number {} {} and at most {}", context,
                       or_equal ? "of at least" : "above", above, at_most);
  };
  double v = 0;
  if (const auto i = node.value_exact<std::int64_t>())
    v = static_cast<double>(*i);
  else if (const auto f = node.value_exact<double>())
    v = *f;
  else
    fail(node, fmt::format("{}; got {}", expected(), type_of(node)));
  if (!((v > above || (or_equal && v == above)) && v <= at_most))
    fail(node, fmt::format("{}; got {}", expected(), v));
  return v;
}

// The keys of adaptive repetitions (AdaptiveReps), which a fixed `reps` excludes.
constexpr const char* adaptive_keys[] = {"noise",      "min_reps",     "max_reps",
                                         "max_time_s", "min_warmup_s", "passes"};
// Repetitions past this are not kept: a row's times stay a bounded list.
constexpr int max_kept_reps = 100000;
// Passes past a few add little but set-up; a hundred bounds a typo.
constexpr int max_passes = 100;

// A value of --set, not of the deck's text (where() names it so).
bool from_set(const toml::node& node) {
  const auto& path = node.source().path;
  return path && path->rfind("--set", 0) == 0;
}

// An experiment's parameter: an integer within its bounds.
std::int64_t parameter(const toml::node& node, std::string_view context, const ParameterSpec& p) {
  if (!p.choices.empty()) {
    const auto name = node.value_exact<std::string>();
    const auto it = name ? std::find(p.choices.begin(), p.choices.end(), *name) : p.choices.end();
    if (it == p.choices.end())
      fail(node, fmt::format("{} ({}) expects one of \"{}\"; got {}", context, p.meaning,
                             fmt::join(p.choices, "\", \""),
                             name ? "\"" + shown(*name) + "\"" : type_of(node)));
    return it - p.choices.begin();
  }
  const auto v = node.value_exact<std::int64_t>();
  if (!v || *v < p.min || *v > p.max)
    fail(node, fmt::format("{} ({}) expects an integer from {} to {}; got {}", context, p.meaning,
                           p.min, p.max, v ? std::to_string(*v) : type_of(node)));
  return *v;
}

// A size: a positive integer, or a float with an integral value (1e8).
std::size_t size_value(const toml::node& node, std::string_view context) {
  double v = 0;
  if (auto i = node.value_exact<std::int64_t>())
    v = static_cast<double>(*i);
  else if (auto f = node.value_exact<double>())
    v = *f;
  else
    fail(node, fmt::format("{} expects positive integers (5000000, 5_000_000 or 5e6); got {}",
                           context, type_of(node)));
  if (!(v >= 1.0)) fail(node, fmt::format("{} expects positive integers; got {}", context, v));
  if (v != std::floor(v)) fail(node, fmt::format("{} expects whole numbers; got {}", context, v));
  if (v > max_size)
    fail(node, fmt::format("{}: {} elements cannot be allocated on any machine (limit 2^48)",
                           context, v));
  return static_cast<std::size_t>(v);
}

// ranks = 2 | [1, 2, 4]: how many ranks run each entry together, ascending
// (a scaling study compares them with the one-rank row).
std::vector<int> ranks_list(const toml::node& node, std::string_view context) {
  constexpr int max_ranks = 1 << 20;
  std::vector<int> out;
  if (const auto* arr = node.as_array()) {
    if (arr->empty()) fail(node, fmt::format("{} must not be an empty list", context));
    for (const auto& item : *arr) {
      const int k = integer(item, context, 1, max_ranks);
      if (std::find(out.begin(), out.end(), k) != out.end())
        fail(item, fmt::format("{}: {} is listed twice", context, k));
      out.push_back(k);
    }
  } else {
    out.push_back(integer(node, context, 1, max_ranks));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// sizes = 1000 | [1000, 1e6] | { from = 1e3, to = 1e9, factor = 10 }
std::vector<std::size_t> sizes(const toml::node& node, std::string_view context) {
  std::vector<std::size_t> out;
  if (const auto* range = node.as_table()) {
    for (auto&& [k, v] : *range)
      if (k.str() != "from" && k.str() != "to" && k.str() != "factor")
        fail(k.source(), fmt::format("{}: unknown key '{}' in a range; expected from, to, factor",
                                     context, shown(k.str())));
    for (const char* key : {"from", "to", "factor"})
      if (!range->contains(key))
        fail(node,
             fmt::format("{}: a range needs from, to and factor; '{}' is missing", context, key));
    const std::size_t from = size_value(*range->get("from"), context);
    const std::size_t to = size_value(*range->get("to"), context);
    const std::size_t factor = size_value(*range->get("factor"), context);
    if (factor < 2) fail(*range->get("factor"), fmt::format("{}: factor must be >= 2", context));
    if (to < from) fail(*range->get("to"), fmt::format("{}: 'to' is below 'from'", context));
    for (std::size_t n = from; n <= to; n *= factor) {
      out.push_back(n);
      if (n > to / factor) break;
    }
  } else if (const auto* arr = node.as_array()) {
    if (arr->empty()) fail(node, fmt::format("{} must not be an empty list", context));
    for (const auto& item : *arr) {
      const std::size_t n = size_value(item, context);
      // 1000, 1e3 and 1_000 are one size: each would run, and be listed, twice.
      if (std::find(out.begin(), out.end(), n) != out.end())
        fail(item, fmt::format("{}: {} is listed twice", context, n));
      out.push_back(n);
    }
  } else {
    out.push_back(size_value(node, context));
  }
  return out;
}

std::vector<CopyMode> copies(const toml::node& node, std::string_view context) {
  std::vector<std::string> names;
  for (auto m : {CopyMode::pageable, CopyMode::pinned, CopyMode::none})
    names.emplace_back(to_string(m));
  std::vector<CopyMode> out;
  for (const auto& s : strings(node, context, names)) out.push_back(*parse_copy_mode(s));
  return out;
}

// Kokkos' spelling of a compiled space given in any case, or "".
std::string canonical_space(const Catalog& catalog, std::string_view name) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (auto& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return out;
  };
  for (const auto& s : catalog.spaces)
    if (lower(s) == lower(name)) return s;
  return {};
}

// Spaces run in the order compiled: host spaces first, the baseline leading.
std::vector<std::string> in_compiled_order(const Catalog& catalog,
                                           const std::vector<std::string>& names) {
  std::vector<std::string> ordered;
  for (const auto& c : catalog.spaces)
    if (std::find(names.begin(), names.end(), c) != names.end()) ordered.push_back(c);
  return ordered;
}

std::vector<std::string> spaces(const Catalog& catalog, const toml::node& node,
                                std::string_view context) {
  auto names = strings(node, fmt::format("{} (spaces compiled into this Kokkos)", context),
                       catalog.spaces,
                       [&](const std::string& s) { return canonical_space(catalog, s); });
  return in_compiled_order(catalog, names);
}

void apply_override(toml::table& root, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(
        fmt::format("'--set {}': expected experiment.key=value or key=value", shown(text)));
  const std::string path = text.substr(0, eq);
  const std::string raw = text.substr(eq + 1);
  const std::string source = "--set " + text;
  // Named by its literal prefix: shown() may cut the text short.
  const std::string option = fmt::format("'--set {}'", shown(text));

  if (text.size() > max_set_bytes)
    throw InputError(
        fmt::format("'--set {}': an override is at most {} bytes", shown(text, 40), max_set_bytes));
  NestingScan("value = " + raw, option).run();

  toml::table parsed;
  try {
    parsed = toml::parse("value = " + raw, source);
  } catch (const toml::parse_error&) {
    // A bare word such as float32 is taken as a string; one that is no TOML
    // string either (a backslash, a control character) is bad input.
    if (raw.find_first_of("[]{}\"'=,") == std::string::npos) {
      try {
        parsed = toml::parse("value = \"" + raw + "\"", source);
      } catch (const toml::parse_error&) {
      }
    }
  }
  // One value: "3\nwarmups = 0" would otherwise drop the second line unseen.
  if (!parsed.contains("value") || parsed.size() != 1)
    throw InputError(fmt::format("{}: '{}' is not a TOML value", option, shown(raw)));
  toml::node& value = *parsed.get("value");

  toml::table* target = &root;
  std::string key = path;
  if (const auto dot = path.find('.'); dot != std::string::npos) {
    const std::string experiment = path.substr(0, dot);
    key = path.substr(dot + 1);
    target = root[experiment].as_table();
    if (!target)
      throw InputError(
          fmt::format("{}: the deck has no [{}] table to override", option, shown(experiment)));
  }
  if (key.empty() || key.find('.') != std::string::npos)
    throw InputError(fmt::format("{}: expected experiment.key=value or key=value", option));
  // The key carries the option's source, so that an error about it names the
  // option: the deck's key, and its line, are dropped first (insert_or_assign
  // would keep them).
  target->erase(key);
  target->insert(toml::key(key, value.source()), std::move(value));
}

void check_keys(const toml::table& table, const std::vector<std::string>& allowed,
                std::string_view context) {
  for (auto&& [k, v] : table)
    if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
      fail(k.source(),
           fmt::format("unknown key '{}' in {}; expected one of [{}]{}", shown(k.str()), context,
                       fmt::join(allowed, ", "), did_you_mean(k.str(), allowed)));
}

}  // namespace

std::string read_bounded(const std::string& path, std::size_t max_bytes, std::string_view what) {
  // What is there first: a pipe would block the open, a device be read.
  if (const InputPath found = inspect_input_path(path); found.kind != InputPath::file)
    throw InputError(fmt::format("{}: {}", shown(path), found.describe(what)));
  // Not waiting on a pipe put there since, and checked again once open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    throw InputError(
        fmt::format("{}: cannot open {}: {}", shown(path), what, std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(fmt::format("{}: {}, not {}", shown(path),
                                 S_ISDIR(st.st_mode) ? "a folder" : file_type(st.st_mode), what));
  }
  // At most one byte past the limit: a file growing while read is not read whole.
  std::string text(max_bytes + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(
          fmt::format("{}: cannot read {}: {}", shown(path), what, std::strerror(err)));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

void check_json_nesting(std::string_view text, const std::string& path, int max_depth) {
  // nlohmann::json recurses once per level: a million '[' overflowed the stack.
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw InputError(fmt::format("{}:{}: nested more than {} levels deep", shown(path),
                                     line_column(text, i), max_depth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

Deck parse_deck(std::string_view text, const std::string& path, const Catalog& catalog,
                const DeckOverrides& overrides) {
  if (text.size() > max_deck_bytes)
    throw InputError(fmt::format("{}: {} bytes; a deck is at most {} (1 MiB)", shown(path),
                                 text.size(), max_deck_bytes));
  NestingScan(text, shown(path)).run();
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw InputError(
        fmt::format("{}: invalid TOML: {}", where(e.source()), shown(e.description(), 1000)));
  }
  // In order: a key set again takes the later value, so that a script's
  // defaults (`--set warmups=1` in profile.sbatch) can be overridden.
  for (const auto& o : overrides.set) apply_override(root, o);

  // Globals first, then each experiment table in the deck's order.
  std::vector<std::pair<std::string, const toml::table*>> tables;
  std::map<std::string, const toml::node*> globals;
  for (auto&& [k, v] : root) {
    const std::string key(k.str());
    const bool global = std::find(global_keys().begin(), global_keys().end(), key) !=
                        global_keys().end();
    if (const auto* t = v.as_table(); t && !global) {
      if (!catalog.find(key)) {
        std::vector<std::string> known;
        for (const auto& e : catalog.experiments) known.push_back(e.name);
        fail(k.source(), fmt::format("unknown experiment [{}]; known experiments: [{}]{}",
                                     shown(key), fmt::join(known, ", "), did_you_mean(key, known)));
      }
      tables.emplace_back(key, t);
    } else {
      if (!global)
        fail(k.source(), fmt::format("unknown key '{}' at the top of the deck; expected one of "
                                     "[{}] or an [experiment] table{}",
                                     shown(key), fmt::join(global_keys(), ", "),
                                     did_you_mean(key, global_keys())));
      globals[key] = &v;
    }
  }
  if (tables.empty())
    throw InputError(
        fmt::format("{}: the deck names no experiment; add a table such as "
                    "[vector_poly]",
                    shown(path)));
  std::stable_sort(tables.begin(), tables.end(), [](const auto& a, const auto& b) {
    const auto& sa = a.second->source().begin;
    const auto& sb = b.second->source().begin;
    return sa.line != sb.line ? sa.line < sb.line : sa.column < sb.column;
  });

  Deck deck;
  deck.path = path;
  deck.hash = content_hash(text);
  if (const auto g = globals.find("calibrate"); g != globals.end()) {
    if (!g->second->is_string())
      fail(*g->second, fmt::format("calibrate expects one of \"quick\", \"full\", \"none\"; got {}",
                                   type_of(*g->second)));
    deck.calibrate = strings(*g->second, "calibrate", {"quick", "full", "none"}).front();
  }
  if (const auto g = globals.find("energy"); g != globals.end()) {
    if (!g->second->is_string())
      fail(*g->second,
           fmt::format("energy expects \"on\" or \"off\"; got {}", type_of(*g->second)));
    deck.energy = strings(*g->second, "energy", {"on", "off"}).front() == "on";
  }
  if (const auto g = globals.find("watchdog_s"); g != globals.end())
    deck.watchdog_s = integer(*g->second,
                              "watchdog_s (seconds a rank may wait at a barrier; 0: "
                              "no watchdog)",
                              0);
  std::vector<const toml::node*> copies_nodes;  // of each plan, where given
  for (const auto& entry : tables) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const std::string& name = entry.first;
    const toml::table* table = entry.second;
    const ExperimentSpec& info = *catalog.find(name);
    std::vector<std::string> allowed = experiment_keys();
    for (const auto& p : info.parameters) allowed.push_back(p.name);
    check_keys(*table, allowed, "[" + name + "]");
    // A key of the table, else the global one, else nullptr.
    auto lookup = [&](const char* key) -> const toml::node* {
      if (const auto* n = table->get(key)) return n;
      const auto g = globals.find(key);
      return g == globals.end() ? nullptr : g->second;
    };
    const std::string ctx = "[" + name + "]";
    // What a message calls a key: the table's, or the top-level one (and the
    // table it is checked for, where its values depend on the experiment).
    auto context = [&](const char* key, bool per_experiment = false) {
      if (table->get(key)) return fmt::format("{} {}", ctx, key);
      return per_experiment ? fmt::format("top-level {} (for {})", key, ctx)
                            : fmt::format("top-level {}", key);
    };
    ExperimentPlan plan;
    plan.experiment = name;
    plan.sizes = lookup("sizes") ? sizes(*lookup("sizes"), context("sizes")) : info.default_sizes;
    plan.dtypes = lookup("dtypes")
                      ? strings(*lookup("dtypes"), context("dtypes", true), info.dtypes)
                      : info.default_dtypes;
    plan.variants = lookup("variants")
                        ? strings(*lookup("variants"), context("variants", true), info.variants)
                        : info.variants;
    // --spaces replaces the deck's spaces: a deck written for an OpenMP build
    // runs on a Threads build with --spaces Threads.
    plan.spaces = overrides.spaces   ? spaces_option(*overrides.spaces, catalog)
                  : lookup("spaces") ? spaces(catalog, *lookup("spaces"), context("spaces"))
                                     : catalog.spaces;
    plan.copies = lookup("copies")
                      ? copies(*lookup("copies"), context("copies"))
                      : std::vector<CopyMode>{CopyMode::pageable, CopyMode::pinned, CopyMode::none};
    // reps fixes the count; the adaptive keys ask for repetitions until the
    // median is steady. The command line's choice wins over the deck's, and
    // a table's over the top level's; both at one level of the deck are
    // refused.
    auto strength = [&](const char* key) {
      if (const auto* n = table->get(key)) return 2 * from_set(*n) + 2;
      const auto g = globals.find(key);
      return g == globals.end() ? 0 : 2 * from_set(*g->second) + 1;
    };
    int adaptive_strength = 0;
    const char* adaptive_key = nullptr;
    for (const char* k : adaptive_keys)
      if (strength(k) > adaptive_strength) adaptive_strength = strength(k), adaptive_key = k;
    if (adaptive_strength > 0 && adaptive_strength == strength("reps"))
      fail(*lookup(adaptive_key),
           fmt::format("{} {} repetitions until the median is steady, and {} fixes their "
                       "count: give one or the other",
                       context(adaptive_key),
                       std::string_view(adaptive_key) == "min_warmup_s" ? "times the warm-ups of"
                                                                        : "asks for",
                       context("reps")));
    const bool fixed = strength("reps") > adaptive_strength;
    if (fixed) {
      plan.reps = integer(*lookup("reps"), context("reps"), 1, max_kept_reps);
    } else {
      AdaptiveReps a;
      if (const auto* n = lookup("noise"))
        a.noise = number_in(*n, context("noise") + " (the 95% interval of the median, relative)",
                            0.0, 0.5);
      if (const auto* n = lookup("min_reps"))
        a.min_reps = integer(*n, context("min_reps"), 1, max_kept_reps);
      if (const auto* n = lookup("max_reps"))
        a.max_reps = integer(*n, context("max_reps"), 1, max_kept_reps);
      if (a.max_reps < a.min_reps)
        fail(lookup("max_reps") ? *lookup("max_reps") : *lookup("min_reps"),
             fmt::format("{} = {} is below {} = {}: the most repetitions cannot be fewer than "
                         "the least",
                         context("max_reps"), a.max_reps, context("min_reps"), a.min_reps));
      if (const auto* n = lookup("max_time_s"))
        a.max_time_s = number_in(*n, context("max_time_s"), 0.0, 86400.0);
      if (const auto* n = lookup("min_warmup_s"))  // 0: the count of warm-ups alone
        a.min_warmup_s = number_in(*n, context("min_warmup_s"), 0.0, 3600.0, /*or_equal=*/true);
      if (const auto* n = lookup("passes"))
        a.passes = integer(*n, context("passes"), 1, max_passes);
      if (a.passes > a.max_reps)
        fail(lookup("passes") ? *lookup("passes") : *lookup("max_reps"),
             fmt::format("{} = {} is above {} = {}: each pass times one repetition at least",
                         context("passes"), a.passes, context("max_reps"), a.max_reps));
      plan.reps = a.min_reps;
      plan.adaptive = a;
    }
    if (const auto* n = lookup("warmups")) plan.warmups = integer(*n, context("warmups"), 0);
    if (const auto* n = lookup("ranks")) plan.ranks = ranks_list(*n, context("ranks"));
    plan.parameters = info.default_parameters();
    for (const auto& p : info.parameters)
      if (const auto* n = table->get(p.name))
        plan.parameters[p.name] = parameter(*n, ctx + " " + p.name, p);
    deck.plans.push_back(std::move(plan));
    copies_nodes.push_back(lookup("copies"));
  }
  // For a profiler: a few repetitions everywhere, whatever each table says.
  if (const auto g = globals.find("profile_reps"); g != globals.end()) {
    const int reps = integer(*g->second, "profile_reps", 1);
    for (auto& plan : deck.plans) {
      plan.reps = reps;
      plan.adaptive.reset();
    }
  } else if (overrides.noise) {
    if (!(*overrides.noise > 0.0 && *overrides.noise <= 0.5))
      throw InputError(fmt::format(
          "--noise expects a number above 0 and at most 0.5 (the 95% interval of the median, "
          "relative); got {}",
          *overrides.noise));
    for (auto& plan : deck.plans) {
      if (!plan.adaptive) plan.adaptive = AdaptiveReps{};
      plan.adaptive->noise = *overrides.noise;
      plan.reps = plan.adaptive->min_reps;
    }
  }
  // A deck of no experiment table still checks the option.
  if (overrides.spaces) spaces_option(*overrides.spaces, catalog);
  // Pinned copies run in device spaces only: a plan of pinned copies and
  // host spaces alone would run nothing, and say nothing.
  for (std::size_t i = 0; i < deck.plans.size(); ++i) {
    const auto& plan = deck.plans[i];
    const bool only_pinned = std::all_of(plan.copies.begin(), plan.copies.end(),
                                         [](CopyMode m) { return m == CopyMode::pinned; });
    const bool only_host = std::all_of(plan.spaces.begin(), plan.spaces.end(),
                                       [](const std::string& s) { return is_host_space_name(s); });
    if (only_pinned && only_host) {
      const std::string what = fmt::format(
          "[{}] copies: pinned copies apply to device spaces only, and its spaces [{}] are host "
          "spaces: nothing would run; add \"pageable\" or \"none\", or a device space",
          plan.experiment, fmt::join(plan.spaces, ", "));
      if (copies_nodes[i]) fail(*copies_nodes[i], what);
      throw InputError(fmt::format("{}: {}", shown(path), what));
    }
  }
  return deck;
}

std::string repetitions_text(int reps, const std::optional<AdaptiveReps>& adaptive) {
  if (!adaptive) return fmt::format("reps={}", reps);
  return fmt::format("noise={} min_reps={} max_reps={} max_time_s={} min_warmup_s={} passes={}",
                     adaptive->noise, adaptive->min_reps, adaptive->max_reps, adaptive->max_time_s,
                     adaptive->min_warmup_s, adaptive->passes);
}

AdaptiveReps AdaptiveReps::share(int pass) const {
  const auto split = [&](int total) { return total / passes + (pass < total % passes ? 1 : 0); };
  AdaptiveReps a = *this;
  a.min_reps = std::max(1, split(min_reps));
  a.max_reps = std::max(1, split(max_reps));
  a.max_time_s = max_time_s / passes;
  a.passes = 1;
  return a;
}

std::vector<std::string> spaces_option(const std::vector<std::string>& given,
                                       const Catalog& catalog) {
  constexpr std::string_view context = "--spaces (spaces compiled into this Kokkos)";
  std::vector<std::string> chosen;
  for (const auto& s : given) {
    const std::string c = canonical_space(catalog, s);
    if (c.empty()) throw InputError(not_one_of(context, s, catalog.spaces));
    if (std::find(chosen.begin(), chosen.end(), c) != chosen.end())
      throw InputError(listed_twice(context, s));
    chosen.push_back(c);
  }
  return in_compiled_order(catalog, chosen);
}

Deck load_deck(const std::string& path, const Catalog& catalog, const DeckOverrides& overrides) {
  return parse_deck(read_bounded(path, max_deck_bytes, "a deck file"), path, catalog, overrides);
}

}  // namespace portalab
