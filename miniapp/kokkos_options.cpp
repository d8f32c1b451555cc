#include "kokkos_options.hpp"

#include "deck.hpp"  // InputError

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include <sched.h>

namespace portalab {
namespace {

enum class Kind { integer, boolean, choice, text, flag };

struct Option {
  std::string_view name;   // without "--kokkos-"
  Kind kind;
  const char* env;         // the variable Kokkos reads for it, or nullptr
};

// Kokkos 4.6's options (core/src/impl/Kokkos_Core.cpp, Kokkos_Profiling.cpp).
constexpr Option known[] = {
    {"num-threads", Kind::integer, "KOKKOS_NUM_THREADS"},
    {"device-id", Kind::integer, "KOKKOS_DEVICE_ID"},
    {"map-device-id-by", Kind::choice, "KOKKOS_MAP_DEVICE_ID_BY"},
    {"disable-warnings", Kind::boolean, "KOKKOS_DISABLE_WARNINGS"},
    {"print-configuration", Kind::boolean, "KOKKOS_PRINT_CONFIGURATION"},
    {"tune-internals", Kind::boolean, "KOKKOS_TUNE_INTERNALS"},
    {"tools-libs", Kind::text, "KOKKOS_TOOLS_LIBS"},
    {"tools-library", Kind::text, nullptr},
    {"tools-args", Kind::text, "KOKKOS_TOOLS_ARGS"},
    {"tools-help", Kind::flag, nullptr},
    {"help", Kind::flag, nullptr},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// Digits only, in range: Kokkos' strtol would take "4x" as 4, "" as an
// abort, 4294967297 as 1 once narrowed to int.
std::optional<long long> whole_number(std::string_view s) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;  // no sign: "-0"
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// `what` names the option or variable in the message.
void check_value(const Option& o, std::string_view value, const std::string& what,
                 const KokkosOptionLimits& limits) {
  switch (o.kind) {
    case Kind::integer: {
      const auto v = whole_number(value);
      if (o.name == "num-threads") {
        if (!v || *v < 1 || *v > limits.max_threads)
          throw InputError(fmt::format(
              "{}: expected a number of threads from 1 to {} (16 per CPU this process may run "
              "on, at least 64); got '{}'",
              what, limits.max_threads, value));
      } else if (limits.device_count >= 0) {
        if (!v || *v < 0 || *v >= limits.device_count)
          throw InputError(fmt::format(
              "{}: expected a device id from 0 to {} ({} device{} visible); got '{}'", what,
              limits.device_count - 1, limits.device_count, limits.device_count == 1 ? "" : "s",
              value));
      } else if (!v || *v < 0 || *v > 1 << 20) {
        throw InputError(fmt::format("{}: expected a device id >= 0; got '{}'", what, value));
      }
      return;
    }
    case Kind::boolean: {
      const std::string v = lower(value);
      if (v != "yes" && v != "true" && v != "1" && v != "no" && v != "false" && v != "0")
        throw InputError(fmt::format("{}: expected true or false (yes/no, 1/0); got '{}'", what,
                                     value));
      return;
    }
    case Kind::choice:
      if (value != "random" && value != "mpi_rank")
        throw InputError(fmt::format("{}: expected random or mpi_rank; got '{}'", what, value));
      return;
    case Kind::text:
      if (value.empty()) throw InputError(fmt::format("{}: expected a value; got none", what));
      return;
    case Kind::flag:
      return;
  }
}

}  // namespace

int kokkos_thread_limit() {
  cpu_set_t set;
  int cpus = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
  return std::max(64, 16 * cpus);
}

void check_kokkos_options(const std::vector<std::string>& args,
                          const std::function<const char*(const char*)>& getenv,
                          const KokkosOptionLimits& limits) {
  constexpr std::string_view prefix = "--kokkos-";
  for (const std::string& arg : args) {
    if (std::string_view(arg).substr(0, prefix.size()) != prefix)
      throw InputError(fmt::format("'{}': not a --kokkos-* option", arg));
    const std::string_view rest = std::string_view(arg).substr(prefix.size());
    const auto eq = rest.find('=');
    const std::string_view name = rest.substr(0, eq);
    const auto* o = std::find_if(std::begin(known), std::end(known),
                                 [&](const Option& k) { return k.name == name; });
    if (o == std::end(known)) {
      std::vector<std::string> names;
      for (const auto& k : known) names.push_back(fmt::format("--kokkos-{}", k.name));
      throw InputError(fmt::format("'{}': unknown Kokkos option; Kokkos 4.6 knows [{}]", arg,
                                   fmt::join(names, ", ")));
    }
    const bool has_value = eq != std::string_view::npos;
    if (o->kind == Kind::flag && has_value)
      throw InputError(fmt::format("'{}': takes no value", arg));
    if (o->kind == Kind::boolean && !has_value) continue;  // a flag: true
    if (o->kind != Kind::flag && !has_value)
      throw InputError(fmt::format("'{}': expected --kokkos-{}=VALUE", arg, o->name));
    if (has_value) check_value(*o, rest.substr(eq + 1), fmt::format("'{}'", arg), limits);
  }
  for (const auto& o : known) {
    if (!o.env) continue;
    if (const char* v = getenv(o.env))
      check_value(o, v, fmt::format("environment variable {}={}", o.env, v), limits);
  }
  // Kokkos' OpenMP space starts as many threads as OpenMP would (its first
  // level: OMP_NUM_THREADS=8,2 asks 8).
  if (const char* v = getenv("OMP_NUM_THREADS"); v && limits.openmp) {
    std::string_view s(v);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    if (s.empty()) return;  // as if unset, for OpenMP too
    const auto first = whole_number(s.substr(0, s.find(',')));
    if (!first || *first < 1 || *first > limits.max_threads)
      throw InputError(fmt::format(
          "environment variable OMP_NUM_THREADS={}: expected a number of threads from 1 to {} "
          "(16 per CPU this process may run on, at least 64)",
          v, limits.max_threads));
  }
}

}  // namespace portalab
