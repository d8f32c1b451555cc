// libFuzzer target for the command line before Kokkos starts: --kokkos-*
// options and the variables Kokkos and OpenMP read (check_kokkos_options),
// --set and --spaces applied to a fixed deck (parse_deck). Input: one
// argument per line; a line "%NAME=VALUE" sets a variable instead.
// InputError is the expected answer to bad input, and it must name the
// option or variable; an accepted thread count or device id must be one
// Kokkos can use. Anything else aborts the run.
#include "deck/deck.hpp"
#include "deck/kokkos_options.hpp"
#include "fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace {

using namespace portalab;
using portalab::fuzz::broken;
using portalab::fuzz::check_message;
using portalab::fuzz::fuzz_catalog;

constexpr KokkosOptionLimits limits{64, 2, true, /*device_space=*/true, /*host_threads=*/true};

// What Kokkos will be given once the options were accepted: whole numbers
// in range (its strtol would take "4x" as 4 and 2^32+1 as 1).
void check_accepted(const std::vector<std::string>& kokkos,
                    const std::map<std::string, std::string>& env) {
  auto number_in = [](std::string_view v, long long lo, long long hi) {
    if (v.empty()) return false;
    // Leading zeros are no overflow: strtol reads 000...030 as 30.
    while (v.size() > 1 && v.front() == '0') v.remove_prefix(1);
    if (v.size() > 18) return false;
    long long x = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return false;
      x = 10 * x + (c - '0');
    }
    return x >= lo && x <= hi;
  };
  for (const auto& a : kokkos) {
    const std::string_view s(a);
    for (const auto& [name, lo, hi] :
         {std::tuple{std::string_view("--kokkos-num-threads="), 1, limits.max_threads},
          std::tuple{std::string_view("--kokkos-device-id="), 0, limits.device_count - 1}})
      if (s.rfind(name, 0) == 0 && !number_in(s.substr(name.size()), lo, hi))
        broken("accepted an unusable option", s);
  }
  for (const auto& [name, lo, hi] : {std::tuple{"KOKKOS_NUM_THREADS", 1, limits.max_threads},
                                     std::tuple{"KOKKOS_DEVICE_ID", 0, limits.device_count - 1}})
    if (const auto it = env.find(name); it != env.end() && !number_in(it->second, lo, hi))
      broken("accepted an unusable variable", it->second);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> kokkos, ours;
  std::map<std::string, std::string> env;
  for (std::size_t at = 0; at <= input.size();) {
    const auto eol = std::min(input.find('\n', at), input.size());
    const std::string line(input.substr(at, eol - at));
    at = eol + 1;
    if (!line.empty() && line[0] == '%') {
      const auto eq = line.find('=');
      // An environment value ends at its first NUL, as setenv stores it.
      if (eq != std::string::npos)
        env[line.substr(1, eq - 1)] = line.substr(eq + 1, line.find('\0', eq + 1) - eq - 1);
    } else if (line.rfind("--kokkos-", 0) == 0) {
      kokkos.push_back(line);
    } else {
      ours.push_back(line);
    }
  }
  auto getenv = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto names_its_source = [](std::string_view m) {
    return m.rfind("'--kokkos-", 0) == 0 || m.rfind("environment variable ", 0) == 0;
  };
  try {
    for (const auto& warning : check_kokkos_options(kokkos, getenv, limits)) {
      if (!names_its_source(warning)) broken("a warning that does not name the option", warning);
      check_message(warning);
    }
    check_accepted(kokkos, env);
  } catch (const InputError& e) {
    const std::string_view m = e.what();
    if (!names_its_source(m)) broken("an error that does not name the option", m);
    check_message(m);
  }
  // --set VALUE and --spaces A,B pairs, as the driver hands them on.
  DeckOverrides overrides;
  for (std::size_t i = 0; i + 1 < ours.size(); i += 2) {
    if (ours[i] == "--set") overrides.set.push_back(ours[i + 1]);
    if (ours[i] == "--spaces") {
      std::vector<std::string> spaces;
      std::string_view s(ours[i + 1]);
      for (std::size_t at = 0; at <= s.size();) {
        const auto comma = std::min(s.find(',', at), s.size());
        spaces.emplace_back(s.substr(at, comma - at));
        at = comma + 1;
      }
      overrides.spaces = spaces;
    }
  }
  try {
    parse_deck("reps = 3\n[vector_poly]\nsizes = [10]\n[stream_copy]\n", "fuzz.toml",
               fuzz_catalog(), overrides);
  } catch (const InputError& e) {
    const std::string_view m = e.what();
    if (m.rfind("'--set ", 0) != 0 && m.rfind("--spaces", 0) != 0 && m.rfind("fuzz.toml", 0) != 0)
      broken("an override error that does not say where", m);
    check_message(m);
  }
  return 0;
}
