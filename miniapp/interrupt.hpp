// Stopping a run early without losing it. SIGTERM (Slurm's time limit,
// scancel) and SIGINT (Ctrl-C) only raise a flag; the runner looks at it at
// safe points (between entries and between fenced repetitions), abandons the
// entry in progress, writes what it has and returns. A second signal of
// either kind ends the process at once, as the default action would.
#pragma once

#include <stdexcept>
#include <string>

namespace portalab {

void install_interrupt_handlers();
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
