// The start-up of a run on several ranks: before Kokkos starts, every rank
// says what it will run (its plan: the entries expanded from its deck and
// options, the spaces, portalab's version) or why it cannot (its error), and
// all of them agree to go, or every rank says why not and the job ends
// within seconds. Ranks given different decks, a different --set or
// --spaces, or one rank's bad option would otherwise meet in different
// collectives and wait there until the watchdog.
//
// Rank 0 gathers the ranks' words (point to point, polled against a
// deadline: a rank that never comes cannot hold the others) and sends its
// verdict to each. A rank that never reaches the agreement, or never gets
// through MPI_Init because a peer never called it (Open MPI's MPI_Init
// waits for every rank), ends the job once PORTALAB_STARTUP_TIMEOUT_S have
// passed since the process began (init_world), naming what it waited for.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace portalab {

class Comm;

// What one rank brings to the agreement.
struct StartupState {
  int code = 0;       // 0: ready to run; else the exit status it would end with
  std::string error;  // why it cannot run, where code != 0
  std::string given;  // what it was given, for messages: "deck a.toml --set reps=7"
  // What it will run, "key: value" lines in order ("entry 3: ..."); ranks
  // that agree have the same lines.
  std::vector<std::string> plan;
};

struct StartupVerdict {
  int code = 0;         // 0: every rank is ready and agrees
  std::string message;  // why not: the same words on every rank
  bool alike = false;   // every rank failed with the same error: said once
};

// Every rank once, before anything else talks between them. Returns the
// same verdict on every rank; a rank (or rank 0's word) missing at the
// deadline ends the job (MPI_Abort) with the reason, exit status 3.
StartupVerdict agree_at_startup(const Comm& world, const StartupState& mine);

// PORTALAB_STARTUP_TIMEOUT_S: how long after the process began a rank waits
// for the others to start and agree; 0 waits forever. InputError for a
// value that is no number of seconds.
double startup_timeout_seconds();
// Without the variable: 5 s where the launcher says every rank runs on this
// node (they start together, from one file cache: the agreement takes well
// under a second), 30 s otherwise (processes of other nodes may start
// seconds apart, their libraries read from a shared file system).
double default_startup_timeout();
// When this process began its start-up: the first call (init_world's).
std::chrono::steady_clock::time_point startup_began();

// Where two plans first differ, in words: "entry 3: rank 1 'a', rank 0 'b'".
// "" when they are the same.
std::string plan_difference(const std::vector<std::string>& mine, int my_rank,
                            const std::vector<std::string>& theirs, int their_rank);

}  // namespace portalab
