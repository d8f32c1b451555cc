#include "interrupt.hpp"

#include <csignal>
#include <cstring>
#include <unistd.h>

namespace portalab {
namespace {

volatile std::sig_atomic_t received = 0;

extern "C" void on_signal(int sig) {
  if (received != 0) {  // asked twice: stop now
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  received = sig;
  // write(2) is async-signal-safe; fmt and iostreams are not.
  static const char message[] =
      "\nportalab: signal received: stopping at the next safe point; results so far are "
      "kept (send it again to stop at once)\n";
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, message, sizeof message - 1);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking calls (file writes, cuda) resume
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

int interrupt_signal() { return received; }

void clear_interrupt() { received = 0; }

std::string signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "signal " + std::to_string(signal);
  }
}

Interrupted::Interrupted(int sig)
    : std::runtime_error("interrupted by " + signal_name(sig)), signal(sig) {}

void throw_if_interrupted() {
  if (const int sig = received) throw Interrupted(sig);
}

}  // namespace portalab
