#include "support/console.hpp"

#include "support/text.hpp"

#include <cerrno>
#include <cstring>
#include <iostream>

#include <fcntl.h>
#include <unistd.h>

namespace portalab {
namespace {

bool stdout_was_closed = false;
int stdout_error = 0;  // the first failed write's errno, where write_to saw it
int json_fd = -1;      // the real stdout, once keep_stdout_for_json moved others' prints away

}  // namespace

void keep_standard_streams_open() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() returns the lowest free descriptor: this one.
    const int opened = ::open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
    if (fd == 1) stdout_was_closed = true;
  }
}

void write_to(std::FILE* stream, std::string_view text) {
  if (stream == stderr) {
    const std::string safe = terminal_safe(text);
    std::fwrite(safe.data(), 1, safe.size(), stream);
  } else {
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), stream) != text.size() && stream == stdout &&
        stdout_error == 0)
      stdout_error = errno;
  }
}

void keep_stdout_for_json() {
  if (json_fd >= 0) return;
  std::cout.flush();
  std::fflush(stdout);
  json_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (json_fd >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

void write_json(std::string_view text) {
  if (json_fd < 0) {
    write_to(stdout, text);
    return;
  }
  while (!text.empty()) {
    const ssize_t n = ::write(json_fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (stdout_error == 0) stdout_error = n < 0 ? errno : ENOSPC;
      return;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

bool standard_output_written() {
  errno = 0;
  std::cout.flush();
  const int cout_error = std::cout.bad() ? errno : 0;
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  // The system's reason where one was seen: this flush's, an earlier write's.
  const int err = !flushed ? errno : stdout_error != 0 ? stdout_error : cout_error;
  if (flushed && !std::ferror(stdout) && !std::cout.bad() && stdout_error == 0) return true;
  print_to(stderr,
           "error: standard output {}: what portalab printed there is incomplete (result "
           "files, if any, are not affected)\n",
           stdout_was_closed ? std::string("was closed (>&-)")
           : err != 0        ? fmt::format("could not be written: {}", std::strerror(err))
                             : std::string("could not be written"));
  return false;
}

}  // namespace portalab
