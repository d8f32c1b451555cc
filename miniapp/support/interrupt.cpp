#include "support/interrupt.hpp"

#include <csignal>
#include <cstring>
#include <unistd.h>

namespace portalab {
namespace {

volatile std::sig_atomic_t received = 0;
// What the first signal prints: set before the handlers are installed.
const char* volatile said = nullptr;
constexpr char run_message[] =
    "\nportalab: signal received: stopping at the next safe point, then saying what was "
    "kept (send it again to stop at once)\n";

extern "C" void on_signal(int sig) {
  // Once the reader of stdout is gone every write to it raises SIGPIPE
  // again: the first asks to stop, the others are left to fail (EPIPE).
  if (sig == SIGPIPE && received != 0) return;
  if (received != 0) {  // asked twice: stop now
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  received = sig;
  // write(2) and strlen are async-signal-safe; fmt and iostreams are not.
  const char* message = said;
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, message, std::strlen(message));
}

}  // namespace

const std::vector<int>& stop_signals() {
  // SIGTERM: Slurm's time limit, scancel, kill, PBS and LSF's ends; SIGINT:
  // Ctrl-C; SIGHUP: the terminal closed; SIGQUIT: Ctrl-\; SIGUSR1/SIGUSR2:
  // a batch system's warning before the end (Slurm --signal, LSF); SIGXCPU:
  // a CPU-time limit (ulimit -t, PBS, LSF); SIGPIPE: the reader of stdout
  // gone (| head, a tee killed). Each one's default would end the process
  // at once, results of the entry in progress lost and files unfinished.
  static const std::vector<int> s{SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,
                                  SIGUSR1, SIGUSR2, SIGXCPU, SIGPIPE};
  return s;
}

void install_interrupt_handlers(const char* message) {
  said = message ? message : run_message;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // blocking calls (file writes, cuda) resume
  for (int sig : stop_signals()) sigaction(sig, &action, nullptr);
  // A file-size limit (ulimit -f) would kill the process mid-write: ignored,
  // the write fails with EFBIG and is reported as any other output error.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, nullptr);
}

int interrupt_signal() { return received; }

void clear_interrupt() { received = 0; }

std::string signal_name(int signal) {
  switch (signal) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    case SIGXCPU: return "SIGXCPU";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(signal);
  }
}

Interrupted::Interrupted(int sig)
    : std::runtime_error("interrupted by " + signal_name(sig)), signal(sig) {}

void throw_if_interrupted() {
  if (const int sig = received) throw Interrupted(sig);
}

}  // namespace portalab
