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

bool standard_output_written() {
  errno = 0;
  std::cout.flush();
  const int cout_error = std::cout.bad() ? errno : 0;
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  // The system's reason where one was seen: this flush's, an earlier write's.
  const int err = !flushed ? errno : stdout_error != 0 ? stdout_error : cout_error;
  if (flushed && !std::ferror(stdout) && !std::cout.bad()) return true;
  print_to(stderr,
           "error: standard output {}: what portalab printed there is incomplete (result "
           "files, if any, are not affected)\n",
           stdout_was_closed ? std::string("was closed (>&-)")
           : err != 0        ? fmt::format("could not be written: {}", std::strerror(err))
                             : std::string("could not be written"));
  return false;
}

}  // namespace portalab
