// The --kokkos-* options and KOKKOS_* / OMP_NUM_THREADS variables that
// Kokkos::initialize reads, checked before it runs: Kokkos aborts with a
// backtrace on a value it cannot read (0, -1, "four" threads), reads "4x" as
// 4 and 2^32+1 as 1, ignores a misspelt option, and a thread count beyond
// what the machine can start crashes it. No Kokkos here, so that the checks
// are tested and fuzzed without it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace portalab {

struct KokkosOptionLimits {
  int max_threads = 1;        // threads the run may start (kokkos_thread_limit)
  int device_count = -1;      // devices the runtime sees; -1 not known (ids not checked)
  bool openmp = true;         // OpenMP compiled in: OMP_NUM_THREADS is checked too
  bool device_space = false;  // a device space (Cuda, HIP, SYCL) compiled in
  bool host_threads = true;   // a host space of several threads (OpenMP, Threads, HPX)
};

// The most threads a Kokkos host space may be asked for on this machine: 16
// per CPU this process may run on, at least 64 (oversubscribed runs stay
// possible; the tens of thousands that crash Kokkos are refused).
int kokkos_thread_limit();

// args: the --kokkos-* arguments as given; getenv: the environment (a
// parameter so that tests and fuzzers give their own). Throws InputError
// naming the option or variable and what it expects: for a value Kokkos
// would abort or crash on, or misread; an option it no longer reads or that
// cannot apply to this build (a device id without a device space); an
// option given twice. Returns warnings, each naming its option or variable,
// for what Kokkos would ignore: a variable that cannot apply to this build
// (it may be set for every program of a site), a setting another overrides.
std::vector<std::string> check_kokkos_options(const std::vector<std::string>& args,
                                              const std::function<const char*(const char*)>& getenv,
                                              const KokkosOptionLimits& limits);

// The Kokkos Tools libraries a run asks for, read as Kokkos 4.6 reads them:
// --kokkos-tools-libs= (or the older --kokkos-tools-library=) over
// KOKKOS_TOOLS_LIBS over KOKKOS_PROFILE_LIBRARY; a list separated by ';', of
// which Kokkos loads the first (kokkos-tools' kernel-filter and sampler load
// the next). args may hold other arguments too.
struct KokkosToolsRequest {
  std::vector<std::string> libs;
  std::string from;  // the option or variable that named them
  std::string args;  // --kokkos-tools-args= or KOKKOS_TOOLS_ARGS
};
KokkosToolsRequest kokkos_tools_requested(const std::vector<std::string>& args,
                                          const std::function<const char*(const char*)>& getenv);

// Loads each library asked for (the first as Kokkos will, and keeps it
// loaded) and throws InputError naming it, where it was named and what
// is wrong: it cannot be loaded (no such file, not a shared library for this
// machine, a symbol it needs missing), it is not a regular file, or it
// defines none of the kokkosp_* functions Kokkos looks for (not a Kokkos
// Tools library). Kokkos 4.6 says "Unable to load" and runs without a
// library it cannot load; one that is no tool it loads and calls nothing.
void check_kokkos_tools(const KokkosToolsRequest& request);

}  // namespace portalab
