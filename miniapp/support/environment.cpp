#include "support/environment.hpp"

#include "support/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <string_view>

namespace portalab {

namespace {

enum class Form { switch_01, path, seconds };

struct Variable {
  const char* name;
  Form form;
  const char* meaning;  // what its values do, for the message
};

// Every PORTALAB_* variable portalab reads (docs/troubleshooting.md lists
// them), but PORTALAB_FAULT, the tests' fault injection.
constexpr Variable variables[] = {
    {"PORTALAB_DB", Form::path, "the results store `portalab db` uses"},
    {"PORTALAB_REFERENCE", Form::path, "the reference figures `portalab db fleet` reads"},
    {"PORTALAB_STREAMING_STORES", Form::switch_01,
     "0 plain stores, 1 streaming stores beyond the last-level cache; unset, calibration "
     "measures both and keeps the faster"},
    {"PORTALAB_HUGE_PAGES", Form::switch_01,
     "0 no transparent huge pages advised for large arrays, 1 advised (the default)"},
    {"PORTALAB_TOOLS_RAW", Form::switch_01,
     "1 a Kokkos tool sees Kokkos' events as raised, 0 guarded (the default)"},
    {"PORTALAB_TOOLS_CONCURRENT", Form::switch_01,
     "1 the loaded Kokkos tool follows several threads, 0 host instances run in turn under a "
     "tool (the default)"},
    {"PORTALAB_MPI", Form::switch_01,
     "1 start MPI, 0 do not; unset, MPI starts where a launcher started the process"},
    {"PORTALAB_MPI_CUDA_AWARE", Form::switch_01,
     "1 the MPI library reads device memory, 0 it does not; unset, as the library says"},
    {"PORTALAB_NVML_LIBRARY", Form::path, "the NVML library to load (libnvidia-ml.so.1)"},
    {"PORTALAB_POWERCAP_ROOT", Form::path, "the powercap (RAPL) folder (/sys/class/powercap)"},
    {"PORTALAB_WATCHDOG_S", Form::seconds, "0 turns the watchdog off"},
    {"PORTALAB_STARTUP_TIMEOUT_S", Form::seconds, "0 waits for the other ranks without end"},
};

const Variable& variable(const char* name) {
  const auto it = std::find_if(std::begin(variables), std::end(variables),
                               [&](const Variable& v) { return std::string_view(v.name) == name; });
  if (it == std::end(variables)) throw std::logic_error(std::string(name) + ": not in the list");
  return *it;
}

[[noreturn]] void refuse(const Variable& v, const char* value, const char* expected) {
  throw EnvironmentError(fmt::format(
      "environment variable {}={}: expected {} ({}); unset it for "
      "the default",
      v.name, *value ? "'" + shown(value) + "'" : "'' (set, empty)", expected, v.meaning));
}

std::optional<double> seconds(const char* text) {
  errno = 0;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(s) || s < 0) return std::nullopt;
  return s;
}

}  // namespace

std::optional<bool> env_switch(const char* name) {
  const Variable& v = variable(name);
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  const std::string_view text(value);
  if (text != "0" && text != "1") refuse(v, value, "0 or 1");
  return text == "1";
}

std::optional<std::string> env_path(const char* name) {
  const Variable& v = variable(name);
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  if (!*value) refuse(v, value, "a path");
  return std::string(value);
}

std::optional<double> env_seconds(const char* name) {
  const Variable& v = variable(name);
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  const auto s = seconds(value);
  if (!s) refuse(v, value, "seconds, a number >= 0");
  return s;
}

std::optional<int> whole_number(const char* text) {
  if (!text || !*text) return std::nullopt;
  long long n = 0;
  for (const char* c = text; *c; ++c) {
    if (*c < '0' || *c > '9') return std::nullopt;
    n = 10 * n + (*c - '0');
    if (n > INT_MAX) return std::nullopt;
  }
  return static_cast<int>(n);
}

namespace {
// Open MPI's, MVAPICH's, MPICH's (Hydra, PMI), PMIx's and Slurm's.
constexpr const char* launcher_variables[] = {"OMPI_COMM_WORLD_SIZE",
                                              "OMPI_COMM_WORLD_LOCAL_SIZE",
                                              "OMPI_COMM_WORLD_LOCAL_RANK",
                                              "MV2_COMM_WORLD_LOCAL_RANK",
                                              "MPI_LOCALRANKID",
                                              "MPI_LOCALNRANKS",
                                              "PMI_SIZE",
                                              "PMI_RANK",
                                              "PMI_LOCAL_RANK",
                                              "PMIX_SIZE",
                                              "PMIX_RANK",
                                              "SLURM_LOCALID",
                                              "SLURM_STEP_NUM_TASKS",
                                              "SLURM_STEP_NUM_NODES"};
}  // namespace

std::string environment_problem() {
  for (const char* name : launcher_variables)
    if (const char* value = std::getenv(name); value && !whole_number(value))
      return fmt::format(
          "environment variable {}='{}': expected a whole number (a launcher's count or "
          "rank); the launcher did not set it so: unset it",
          name, shown(value));
  try {
    for (const auto& v : variables) switch (v.form) {
        case Form::switch_01: env_switch(v.name); break;
        case Form::path: env_path(v.name); break;
        case Form::seconds: env_seconds(v.name); break;
      }
  } catch (const EnvironmentError& e) {
    return e.what();
  }
  return {};
}

}  // namespace portalab
