#include "support/files.hpp"

#include "support/text.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace portalab {
namespace {

namespace fs = std::filesystem;

std::string reason(int err) { return std::strerror(err); }

// Why a name that portalab writes cannot be written: what is there instead.
[[noreturn]] void refuse(const std::string& shown_path, int dir_fd, std::string_view name,
                         mode_t mode) {
  if (S_ISLNK(mode)) {
    std::vector<char> target(4096);
    const ssize_t n = ::readlinkat(dir_fd, std::string(name).c_str(), target.data(), target.size());
    throw OutputError(fmt::format(
        "{} is a symbolic link{}: portalab writes only regular files of its own, never "
        "through a link; remove it or choose another path",
        shown_path,
        n > 0 ? fmt::format(" (to '{}')", shown(std::string_view(target.data(), n))) : ""));
  }
  throw OutputError(
      fmt::format("{} is {}, not a regular file: portalab writes only regular "
                  "files of its own{}; remove it or choose another path",
                  shown_path, file_type(mode), S_ISFIFO(mode) ? " (it would wait on a pipe)" : ""));
}

// What has_file and regular_file_or_nothing say of `name` in dir_fd.
bool regular_or_nothing(int dir_fd, std::string_view name, const std::string& path) {
  struct stat st;
  if (::fstatat(dir_fd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return false;
    throw OutputError(fmt::format("cannot reach {}: {}", shown(path), reason(errno)));
  }
  if (!S_ISREG(st.st_mode)) refuse(shown(path), dir_fd, name, st.st_mode);
  return true;
}

}  // namespace

const char* file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return ENOSPC;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.{}", ::getpid(), counter++);
}

OutputFolder::OutputFolder(std::string path, bool create) : m_path(std::move(path)) {
  const std::string shown_path = shown(m_path);
  if (m_path.empty()) throw OutputError("an empty path names no folder");
  // What is there first: a pipe or a file is named for what it is.
  struct stat st;
  const int found = ::stat(m_path.c_str(), &st) == 0 ? 0 : errno;
  if (found == 0 && !S_ISDIR(st.st_mode))
    throw OutputError(fmt::format("{} is {}, not a folder", shown_path,
                                  S_ISREG(st.st_mode) ? "a file" : file_type(st.st_mode)));
  if (found == ENOENT && ::lstat(m_path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    throw OutputError(fmt::format("{} is a symbolic link to '{}', which does not exist", shown_path,
                                  shown(fs::read_symlink(m_path, ec).string())));
  }
  std::error_code ec;
  if (create) fs::create_directories(m_path, ec);
  if (ec)
    throw OutputError(fmt::format("cannot create the folder {}: {}", shown_path, ec.message()));
  m_fd = ::open(m_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (m_fd < 0)
    throw OutputError(fmt::format("cannot open the folder {}: {}", shown_path, reason(errno)));
  // Writable now, with room for a block: a probe file, removed at once.
  const std::string probe = fmt::format(".portalab-probe.{}", unique_suffix());
  int err = 0;
  if (const int fd = this->create(probe); fd < 0) {
    err = errno;
  } else {
    err = write_all(fd, std::string(4096, '\n'));
    if (::close(fd) != 0 && err == 0) err = errno;
    remove(probe);
  }
  if (err != 0) {
    ::close(m_fd);
    throw OutputError(fmt::format("cannot write into {}: {}", shown_path, reason(err)));
  }
}

OutputFolder::~OutputFolder() {
  if (m_fd >= 0) ::close(m_fd);
}

OutputFolder::OutputFolder(OutputFolder&& other) noexcept
    : m_path(std::move(other.m_path)), m_fd(other.m_fd) {
  other.m_fd = -1;
}

std::string OutputFolder::path_of(std::string_view name) const {
  // A file given without a folder is named as it was given.
  return m_path == "." ? std::string(name) : (fs::path(m_path) / name).string();
}

bool OutputFolder::has_file(std::string_view name) const {
  return regular_or_nothing(m_fd, name, path_of(name));
}

int OutputFolder::open_existing(std::string_view name) const {
  // Not blocking: a pipe put there since has_file() is seen by fstat below.
  const int fd = ::openat(m_fd, std::string(name).c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    if (errno == ELOOP) has_file(name);  // a link: says so
    throw OutputError(fmt::format("cannot open {}: {}", shown(path_of(name)), reason(errno)));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw OutputError(fmt::format("cannot reach {}: {}", shown(path_of(name)), reason(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(shown(path_of(name)), m_fd, name, st.st_mode);
  }
  return fd;
}

int OutputFolder::create(std::string_view name) const {
  // O_EXCL with O_CREAT fails on any name that exists, a link included, so
  // nothing is ever opened through one; O_NOFOLLOW says so once more.
  const int fd = ::openat(m_fd, std::string(name).c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0 && errno != EEXIST)
    throw OutputError(fmt::format("cannot create {}: {}", shown(path_of(name)), reason(errno)));
  return fd;
}

void OutputFolder::write_atomically(std::string_view name, std::string_view content) const {
  has_file(name);  // a link, a pipe, a folder there: refused, never replaced
  std::string tmp;
  int fd = -1;
  // A name taken (by a leftover, or planted) is passed over.
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = fmt::format("{}.{}.tmp", name, unique_suffix());
    fd = create(tmp);
  }
  if (fd < 0)
    throw OutputError(fmt::format("cannot create {}: {}", shown(path_of(tmp)), reason(EEXIST)));
  int err = write_all(fd, content);
  // close() reports what a network file system could not store.
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::renameat(m_fd, tmp.c_str(), m_fd, std::string(name).c_str()) != 0) {
    err = errno;
    remove(tmp);
    throw OutputError(fmt::format("cannot rename {} to {}: {}", shown(path_of(tmp)),
                                  shown(path_of(name)), reason(err)));
  }
  if (err != 0) {
    remove(tmp);
    throw OutputError(fmt::format("cannot write {}: {}", shown(path_of(name)), reason(err)));
  }
}

void OutputFolder::rename(std::string_view from, std::string_view to) const {
  if (::renameat(m_fd, std::string(from).c_str(), m_fd, std::string(to).c_str()) != 0)
    throw OutputError(fmt::format("cannot move {} to {}: {}", shown(path_of(from)),
                                  shown(path_of(to)), reason(errno)));
}

bool OutputFolder::make_folder(std::string_view name) const {
  if (::mkdirat(m_fd, std::string(name).c_str(), 0755) == 0) return true;
  if (errno == EEXIST) return false;
  throw OutputError(
      fmt::format("cannot create the folder {}: {}", shown(path_of(name)), reason(errno)));
}

int OutputFolder::remove(std::string_view name) const {
  if (::unlinkat(m_fd, std::string(name).c_str(), 0) == 0 || errno == ENOENT) return 0;
  return errno;
}

bool regular_file_or_nothing(const std::string& path) {
  return regular_or_nothing(AT_FDCWD, path, path);
}

void write_file_atomically(const std::string& path, std::string_view content) {
  const fs::path p(path);
  if (p.filename().empty() || p.filename() == "." || p.filename() == "..")
    throw OutputError(
        fmt::format("{}: the path of a file is needed, not of a folder", shown(path)));
  const fs::path parent = p.parent_path();
  OutputFolder(parent.empty() ? std::string(".") : parent.string(), /*create=*/false)
      .write_atomically(p.filename().string(), content);
}

}  // namespace portalab
