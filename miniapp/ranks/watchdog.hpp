// A rank that fails before a collective its peers are in leaves them waiting
// there: the gates cannot say so, as no gate is reached. The watchdog ends
// such a run: where no gate has passed for its time, it names where the rank
// was and aborts every rank (MPI_Abort). Rank 0 has written each completed
// entry's files already; Slurm's or mpirun's time limit would end the job
// too, but later and without saying why.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace portalab {

class Watchdog {
 public:
  // Calls expire(where, seconds) from its own thread once `seconds` pass
  // without a beat; expire must not return (it aborts).
  Watchdog(double seconds, std::function<void(const std::string&, double)> expire);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Progress: a gate passed.
  void beat();
  // What the rank does now, for the message; also progress.
  void at(const std::string& where);

 private:
  void watch();

  const std::chrono::duration<double> m_limit;
  const std::function<void(const std::string&, double)> m_expire;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::chrono::steady_clock::time_point m_last;
  std::string m_where;
  bool m_done = false;
  std::thread m_thread;
};

// The seconds without a gate after which a multi-rank run is aborted; 0
// turns the watchdog off. PORTALAB_WATCHDOG_S, else the deck's watchdog_s,
// else the default. Every rank passes a gate before each repetition, so the
// limit bounds one step (a repetition, or an entry's setup and check) and a
// rank's wait for its slowest peer: the default leaves the steps of the
// shipped decks room several times over (docs/several-gpus.md), and a deck
// whose steps run longer raises it.
inline constexpr double default_watchdog_s = 300;
double watchdog_seconds(std::optional<int> from_deck = {});

// A variable of seconds, a number >= 0 (0: `zero_means`; more than months:
// 0 too): `fallback` where it is unset; InputError naming it otherwise.
double seconds_from_environment(const char* name, double fallback, std::string_view zero_means);

}  // namespace portalab
