// The variables of the environment portalab reads of its own (PORTALAB_*):
// one list, each with the form its value takes, read through these. A value
// set but empty or of another form is a mistake said in one line naming the
// variable (exit 2), never read as the default: as OMP_NUM_THREADS=abc is
// refused (Kokkos' and OpenMP's variables are checked as Kokkos reads them,
// deck/kokkos_options.hpp). No Kokkos: part of portalab_base.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace portalab {

class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// name's value, 0 or 1; nullopt where unset. EnvironmentError otherwise.
std::optional<bool> env_switch(const char* name);
// name's value, a path (any text but empty); nullopt where unset.
std::optional<std::string> env_path(const char* name);
// name's value, seconds (a number >= 0); nullopt where unset.
std::optional<double> env_seconds(const char* name);

// A launcher's count or rank (OMPI_COMM_WORLD_SIZE, SLURM_LOCALID, ...):
// text of decimal digits only, up to INT_MAX; nullopt otherwise (atoi would
// read "1x" as 1 and "x" as 0). environment_problem() names a launcher's
// variable portalab reads that is set to anything else.
std::optional<int> whole_number(const char* text);

// The first variable of the list whose value is not of its form, as a
// message ("" where none is): said at start-up, before anything runs, for a
// variable read only deep in a run (an energy meter, an allocation).
std::string environment_problem();

}  // namespace portalab
