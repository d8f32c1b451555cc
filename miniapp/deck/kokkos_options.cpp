#include "deck/kokkos_options.hpp"

#include "deck/deck.hpp"  // InputError
#include "support/suggest.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>

#include <dlfcn.h>
#include <sched.h>
#include <sys/stat.h>

namespace portalab {
namespace {

enum class Kind { integer, boolean, choice, text, flag };

struct Option {
  std::string_view name;  // without "--kokkos-"
  Kind kind;
  const char* env;  // the variable Kokkos reads for it, or nullptr
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

// Read by Kokkos before 4.3, no more: Kokkos 4.6 warns of such an option
// and ignores it, and ignores such a variable without a word.
struct Removed {
  std::string_view name;  // without "--kokkos-"; "" for a variable alone
  const char* env;
  const char* instead;
};
constexpr const char* choose_gpus =
    "KOKKOS_VISIBLE_DEVICES lists the devices to use, and --kokkos-map-device-id-by maps ranks "
    "to them";
constexpr Removed removed[] = {
    {"num-devices", "KOKKOS_NUM_DEVICES", choose_gpus},
    {"ndevices", nullptr, choose_gpus},
    {"skip-device", "KOKKOS_SKIP_DEVICE", choose_gpus},
    {"", "KOKKOS_RAND_DEVICES", "--kokkos-map-device-id-by=random"},
    {"threads", nullptr, "--kokkos-num-threads"},
    {"device", nullptr, "--kokkos-device-id"},
    {"numa", "KOKKOS_NUMA", "OMP_PROC_BIND and OMP_PLACES to place threads"},
};

std::string no_longer_read(const Removed& r) {
  return fmt::format("Kokkos 4.6 no longer reads it (removed in 4.3) and would ignore it; {}",
                     r.instead);
}

// Why an option cannot apply to this build, or nullptr when it can.
const char* inapplicable(std::string_view name, const KokkosOptionLimits& limits) {
  if ((name == "device-id" || name == "map-device-id-by") && !limits.device_space)
    return "this build has no device space (Cuda, HIP or SYCL): there is no device to choose";
  if (name == "num-threads" && !limits.host_threads)
    return "this build's host spaces run one thread each (no OpenMP, Threads or HPX space)";
  return nullptr;
}

// KOKKOS_VISIBLE_DEVICES=0,2: the devices Kokkos may choose among, checked
// as Kokkos does not (it reads "x" as no device, and says nothing of an id
// beyond the devices present). Returns how many it lists.
int visible_devices(std::string_view value, const KokkosOptionLimits& limits) {
  std::vector<long long> ids;
  bool ok = !value.empty();
  for (std::size_t at = 0; ok && at <= value.size();) {
    const auto comma = std::min(value.find(',', at), value.size());
    std::string_view item = value.substr(at, comma - at);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    const auto id = whole_number(item);
    ok = id && (limits.device_count < 0 || *id < limits.device_count) && *id <= 1 << 20 &&
         std::find(ids.begin(), ids.end(), *id) == ids.end();
    if (ok) ids.push_back(*id);
    at = comma + 1;
  }
  if (!ok)
    throw InputError(fmt::format(
        "environment variable KOKKOS_VISIBLE_DEVICES={}: expected device ids{}, separated by "
        "commas, each once",
        shown(value),
        limits.device_count > 0
            ? fmt::format(" from 0 to {} ({} device{} present)", limits.device_count - 1,
                          limits.device_count, limits.device_count == 1 ? "" : "s")
        : limits.device_count == 0 ? std::string(" (no device is present)")
                                   : std::string()));
  return static_cast<int>(ids.size());
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
              what, limits.max_threads, shown(value)));
      } else if (limits.device_count == 0 && limits.device_space) {
        throw InputError(fmt::format("{}: no device is visible to this process", what));
      } else if (limits.device_count > 0) {
        if (!v || *v < 0 || *v >= limits.device_count)
          throw InputError(
              fmt::format("{}: expected a device id from 0 to {} ({} device{} visible); got '{}'",
                          what, limits.device_count - 1, limits.device_count,
                          limits.device_count == 1 ? "" : "s", shown(value)));
      } else if (!v || *v < 0 || *v > 1 << 20) {
        throw InputError(
            fmt::format("{}: expected a device id >= 0; got '{}'", what, shown(value)));
      }
      return;
    }
    case Kind::boolean: {
      const std::string v = lower(value);
      if (v != "yes" && v != "true" && v != "1" && v != "no" && v != "false" && v != "0")
        throw InputError(
            fmt::format("{}: expected true or false (yes/no, 1/0); got '{}'", what, shown(value)));
      return;
    }
    case Kind::choice:
      if (value != "random" && value != "mpi_rank")
        throw InputError(
            fmt::format("{}: expected random or mpi_rank; got '{}'", what, shown(value)));
      return;
    case Kind::text:
      if (value.empty()) throw InputError(fmt::format("{}: expected a value; got none", what));
      return;
    case Kind::flag: return;
  }
}

}  // namespace

int kokkos_thread_limit() {
  cpu_set_t set;
  int cpus = 1;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = std::max(1, CPU_COUNT(&set));
  return std::max(64, 16 * cpus);
}

std::vector<std::string> check_kokkos_options(const std::vector<std::string>& args,
                                              const std::function<const char*(const char*)>& getenv,
                                              const KokkosOptionLimits& build) {
  std::vector<std::string> warnings;
  // A device id chooses among KOKKOS_VISIBLE_DEVICES where it is set.
  KokkosOptionLimits limits = build;
  if (const char* v = getenv("KOKKOS_VISIBLE_DEVICES")) {
    if (!build.device_space)
      warnings.push_back(fmt::format("environment variable KOKKOS_VISIBLE_DEVICES={}: ignored: {}",
                                     shown(v), inapplicable("device-id", build)));
    else
      limits.device_count = visible_devices(v, build);
  }
  constexpr std::string_view prefix = "--kokkos-";
  std::map<std::string_view, std::string> given;  // by name: the argument
  for (const std::string& arg : args) {
    const std::string said = shown(arg);  // as messages show it
    if (std::string_view(arg).substr(0, prefix.size()) != prefix)
      throw InputError(fmt::format("'{}': not a --kokkos-* option", said));
    const std::string_view rest = std::string_view(arg).substr(prefix.size());
    const auto eq = rest.find('=');
    const std::string_view name = rest.substr(0, eq);
    const auto* o = std::find_if(std::begin(known), std::end(known),
                                 [&](const Option& k) { return k.name == name; });
    if (o == std::end(known)) {
      for (const auto& r : removed)
        if (!r.name.empty() && r.name == name)
          throw InputError(fmt::format("'{}': {}", said, no_longer_read(r)));
      std::vector<std::string> names;
      for (const auto& k : known) names.push_back(fmt::format("--kokkos-{}", k.name));
      throw InputError(fmt::format("'{}': unknown Kokkos option; Kokkos 4.6 knows [{}]{}", said,
                                   fmt::join(names, ", "),
                                   did_you_mean(arg.substr(0, arg.find('=')), names)));
    }
    // Kokkos would take the last, unsaid; portalab's own options are refused twice too.
    if (const auto [before, first] = given.try_emplace(o->name, arg); !first)
      throw InputError(
          fmt::format("'{}': given twice (also '{}'); give it once", said, shown(before->second)));
    const bool has_value = eq != std::string_view::npos;
    if (o->kind == Kind::flag && has_value)
      throw InputError(fmt::format("'{}': takes no value", said));
    if (o->kind != Kind::flag && o->kind != Kind::boolean && !has_value)
      throw InputError(fmt::format("'{}': expected --kokkos-{}=VALUE", said, o->name));
    if (has_value) check_value(*o, rest.substr(eq + 1), fmt::format("'{}'", said), limits);
    if (const char* why = inapplicable(o->name, limits))
      throw InputError(fmt::format("'{}': cannot apply: {}", said, why));
  }
  for (const auto& o : known) {
    if (!o.env) continue;
    const char* v = getenv(o.env);
    if (!v) continue;
    check_value(o, v, fmt::format("environment variable {}={}", o.env, shown(v)), limits);
    // Set for every program, perhaps: said, not refused.
    if (const char* why = inapplicable(o.name, limits))
      warnings.push_back(
          fmt::format("environment variable {}={}: ignored: {}", o.env, shown(v), why));
  }
  for (const auto& r : removed)
    if (const char* v = r.env ? getenv(r.env) : nullptr)
      warnings.push_back(fmt::format("environment variable {}={}: ignored: {}", r.env, shown(v),
                                     no_longer_read(r)));
  // Kokkos takes a device id over a mapping, the command line over the
  // environment.
  auto setting = [&](std::string_view name, const char* env) -> std::string {
    if (const auto it = given.find(name); it != given.end()) return "'" + shown(it->second) + "'";
    if (const char* v = getenv(env))
      return fmt::format("environment variable {}={}", env, shown(v));
    return {};
  };
  const std::string id = setting("device-id", "KOKKOS_DEVICE_ID");
  const std::string map = setting("map-device-id-by", "KOKKOS_MAP_DEVICE_ID_BY");
  if (limits.device_space && !id.empty() && !map.empty())
    warnings.push_back(
        fmt::format("{}: ignored: a device id is given ({}), which Kokkos takes "
                    "instead",
                    map, id));
  // Kokkos' OpenMP space starts as many threads as OpenMP would (its first
  // level: OMP_NUM_THREADS=8,2 asks 8).
  if (const char* v = getenv("OMP_NUM_THREADS"); v && limits.openmp) {
    std::string_view s(v);
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    if (s.empty()) return warnings;  // as if unset, for OpenMP too
    const auto first = whole_number(s.substr(0, s.find(',')));
    if (!first || *first < 1 || *first > limits.max_threads)
      throw InputError(fmt::format(
          "environment variable OMP_NUM_THREADS={}: expected a number of threads from 1 to {} "
          "(16 per CPU this process may run on, at least 64)",
          shown(v), limits.max_threads));
  }
  return warnings;
}

KokkosToolsRequest kokkos_tools_requested(const std::vector<std::string>& args,
                                          const std::function<const char*(const char*)>& getenv) {
  KokkosToolsRequest request;
  std::string libs;
  for (const char* name : {"KOKKOS_PROFILE_LIBRARY", "KOKKOS_TOOLS_LIBS"})
    if (const char* v = getenv(name)) libs = v, request.from = name;
  if (const char* v = getenv("KOKKOS_TOOLS_ARGS")) request.args = v;
  for (const std::string& a : args) {
    for (std::string option : {"--kokkos-tools-libs=", "--kokkos-tools-library="})
      if (a.rfind(option, 0) == 0) {
        libs = a.substr(option.size());
        request.from = option.substr(0, option.size() - 1);
      }
    if (const std::string option = "--kokkos-tools-args="; a.rfind(option, 0) == 0)
      request.args = a.substr(option.size());
  }
  for (std::size_t start = 0; start < libs.size();) {
    const std::size_t end = std::min(libs.find(';', start), libs.size());
    if (end > start) request.libs.push_back(libs.substr(start, end - start));
    start = end + 1;
  }
  return request;
}

void check_kokkos_tools(const KokkosToolsRequest& request) {
  // What Kokkos 4.6 looks up in a tool (Kokkos_Profiling.cpp): one suffices.
  static constexpr const char* callbacks[] = {"kokkosp_init_library",
                                              "kokkosp_finalize_library",
                                              "kokkosp_begin_parallel_for",
                                              "kokkosp_end_parallel_for",
                                              "kokkosp_begin_parallel_reduce",
                                              "kokkosp_end_parallel_reduce",
                                              "kokkosp_begin_parallel_scan",
                                              "kokkosp_end_parallel_scan",
                                              "kokkosp_push_profile_region",
                                              "kokkosp_pop_profile_region",
                                              "kokkosp_allocate_data",
                                              "kokkosp_deallocate_data",
                                              "kokkosp_begin_deep_copy",
                                              "kokkosp_end_deep_copy",
                                              "kokkosp_begin_fence",
                                              "kokkosp_end_fence",
                                              "kokkosp_dual_view_sync",
                                              "kokkosp_dual_view_modify",
                                              "kokkosp_declare_metadata",
                                              "kokkosp_create_profile_section",
                                              "kokkosp_start_profile_section",
                                              "kokkosp_stop_profile_section",
                                              "kokkosp_destroy_profile_section",
                                              "kokkosp_profile_event",
                                              "kokkosp_print_help",
                                              "kokkosp_parse_args",
                                              "kokkosp_provide_tool_programming_interface",
                                              "kokkosp_request_tool_settings",
                                              "kokkosp_declare_output_type",
                                              "kokkosp_declare_input_type",
                                              "kokkosp_request_values",
                                              "kokkosp_begin_context",
                                              "kokkosp_end_context",
                                              "kokkosp_declare_optimization_goal"};
  for (const std::string& lib : request.libs) {
    const std::string what = fmt::format("Kokkos Tools library '{}' ({})", lib, request.from);
    // A path is looked at first: dlopen would wait forever on a FIFO. A bare
    // name is searched for as the dynamic linker does.
    if (struct stat st{};
        lib.find('/') != std::string::npos && stat(lib.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw InputError(fmt::format("{}: not a regular file (a {}); expected a shared library", what,
                                   S_ISDIR(st.st_mode)    ? "directory"
                                   : S_ISFIFO(st.st_mode) ? "FIFO"
                                                          : "device or socket"));
    // The first as Kokkos loads it, and kept; the others, which Kokkos does
    // not load, are let go (provenance says what is loaded).
    const bool first = &lib == &request.libs.front();
    dlerror();
    void* handle = dlopen(lib.c_str(), RTLD_NOW | (first ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!handle) {
      const char* why = dlerror();
      throw InputError(fmt::format("{}: cannot be loaded: {}; Kokkos would run without it", what,
                                   why ? why : "dlopen failed"));
    }
    if (std::none_of(std::begin(callbacks), std::end(callbacks),
                     [&](const char* name) { return dlsym(handle, name) != nullptr; }))
      throw InputError(fmt::format(
          "{}: not a Kokkos Tools library: it defines none of the kokkosp_* functions Kokkos "
          "calls (kokkosp_init_library, kokkosp_begin_parallel_for, ...); Kokkos would load it "
          "and call nothing",
          what));
    if (!first) dlclose(handle);
  }
}

}  // namespace portalab
