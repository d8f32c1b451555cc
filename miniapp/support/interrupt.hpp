// Stopping a run early without losing it. Every signal that ends a job
// (stop_signals(): SIGTERM from Slurm's time limit or scancel, SIGINT from
// Ctrl-C, SIGHUP from a closed terminal, SIGUSR1/2 and SIGXCPU from batch
// systems, SIGQUIT, SIGPIPE) only raises a flag; the runner looks at it at
// safe points (between entries and between fenced repetitions), abandons the
// entry in progress, writes what it has and returns. A second signal ends
// the process at once, as the default action would (SIGPIPE excepted: it
// repeats with every write to a closed pipe).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace portalab {

// The signals handled so, in the order installed.
const std::vector<int>& stop_signals();
// message: what the first signal prints (a line, static); default: a run's.
void install_interrupt_handlers(const char* message = nullptr);
// The signal that asked the run to stop, or 0.
int interrupt_signal();
std::string signal_name(int signal);

// Thrown at a safe point once a signal has arrived.
struct Interrupted : std::runtime_error {
  explicit Interrupted(int signal);
  int signal;
};
void throw_if_interrupted();

// For tests: forget a signal received.
void clear_interrupt();

}  // namespace portalab
