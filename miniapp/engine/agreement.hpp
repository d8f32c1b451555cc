// The start-up agreement (ranks/startup.hpp) as every command meets it:
// each rank's checks before Kokkos starts, its first failure kept, the one
// meeting where every rank learns whether all go on, and the exit status
// they then share (drivers/portalab.cpp's header lists them).
#pragma once

#include "ranks/startup.hpp"
#include "support/exit_status.hpp"

#include <functional>
#include <string>
#include <vector>

namespace portalab {

// The start-up agreement of a run on several ranks (ranks/startup.hpp):
// every path through main meets it once, before Kokkos starts, with what
// this rank will run or why it cannot. A verdict not to go is said on every
// rank (once, by rank 0, where every rank failed alike) and ends them all
// with one exit status; alone, it only says this rank's error.
class Startup {
 public:
  // Keeps this rank's first failure, for the agreement to say.
  void fail(int code, const std::string& why);
  // Runs checks unless this rank failed already; an InputError or an
  // OutputError is its failure (exit 2).
  void check(const std::function<void()>& checks);
  // What this rank was given, for the messages: its command line, its deck.
  void given(const std::string& what);
  // 0: every rank goes on to run `plan` ("key: value" lines); else the exit
  // status, the reason said.
  int agree(const std::vector<std::string>& plan);
  bool agreed() const { return m_agreed; }

 private:
  StartupState m_state;
  bool m_agreed = false;
};

// The process's agreement: met once, whatever the command.
Startup& startup();

// Runs the checks each rank makes before Kokkos starts: a failure is this
// rank's, said at the start-up agreement, where every rank learns of it.
void checked_on_every_rank(const std::function<void()>& checks);

// The host stores a run will use, for the start-up agreement: forced by
// PORTALAB_STREAMING_STORES (a variable one node may set and another not), or
// as calibrated. InputError for a bad value.
std::string host_stores_line();

// An error no check kept: before the start-up agreement, this rank's
// failure, said there. After it, on several ranks, nothing shares it (the
// others would wait for this rank in their next collective): MPI ends them
// all.
int unshared_error(int code, const std::string& what);

// Rank 0's exit status, on every rank: mpirun and srun report the worst.
int agreed_exit(int code);

}  // namespace portalab
