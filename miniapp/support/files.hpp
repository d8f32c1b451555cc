// The files portalab writes, and what stands where one is to be read or
// written. A shared results folder must not let a link planted in it make a
// run overwrite another file (the link's target), nor a named pipe make it
// hang: every file is created anew under a temporary name (O_EXCL, never
// following a link) in its folder and renamed into place, or created under
// its own name the same way; anything but a regular file at a name portalab
// writes is refused, naming what is there. No Kokkos: part of portalab_base.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <sys/types.h>

namespace portalab {

// An output that cannot be written: the message names the path and says
// why (what is there, or the system's reason).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What is at a path that exists but is not a regular file, by its type:
// "a folder", "a named pipe (FIFO)", "a character device", ...
const char* file_type(mode_t mode);

// A folder portalab writes files into. Its path (given by the user: it may
// be a symbolic link to a folder, followed once here) is opened once, and
// every file in it is reached through that descriptor and never followed: a
// folder renamed or replaced by a link while a run writes changes nothing.
class OutputFolder {
 public:
  // Creates the folder (and its parents) where needed, unless `create` is
  // false, opens it, and proves it writable now: a probe file created,
  // written, removed. OutputError otherwise (it is a file, a pipe, ...; the
  // system's reason).
  explicit OutputFolder(std::string path, bool create = true);
  ~OutputFolder();
  OutputFolder(OutputFolder&& other) noexcept;
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  OutputFolder& operator=(OutputFolder&&) = delete;

  const std::string& path() const { return m_path; }
  // path/name, for messages.
  std::string path_of(std::string_view name) const;

  // True for a regular file `name`, false for nothing there; OutputError
  // naming what is there when it is anything else (a symbolic link and its
  // target, a folder, a named pipe, a device, a socket).
  bool has_file(std::string_view name) const;
  // A regular file `name` opened to read, without following a link or
  // waiting on a pipe; -1 when nothing is there; OutputError otherwise.
  int open_existing(std::string_view name) const;
  // `name` created, open for writing: it must not exist (O_EXCL, no link
  // followed). -1 with errno EEXIST when something is there; OutputError
  // for any other failure.
  int create(std::string_view name) const;
  // Writes content to `name` through a temporary of a unique name created
  // here, renamed over `name` (a regular file there is replaced; anything
  // else refused first). On failure the temporary is removed.
  void write_atomically(std::string_view name, std::string_view content) const;
  // renameat within the folder; OutputError naming both on failure.
  void rename(std::string_view from, std::string_view to) const;
  // mkdirat: false when something is there already.
  bool make_folder(std::string_view name) const;
  // unlinkat; the errno of a failure (0 also when nothing was there).
  int remove(std::string_view name) const;
  int fd() const { return m_fd; }

 private:
  std::string m_path;
  int m_fd = -1;
};

// What OutputFolder::has_file says, of a path that SQLite or another
// library will open itself: true for a regular file, false for nothing;
// OutputError naming anything else there (its folder is not probed).
bool regular_file_or_nothing(const std::string& path);

// Writes content to `path` as OutputFolder::write_atomically does, in the
// folder holding it, which must exist.
void write_file_atomically(const std::string& path, std::string_view content);

// A name no other writer uses: this process's id and a counter.
std::string unique_suffix();

// Writes the whole buffer to fd: 0, or the errno of the failure (ENOSPC for
// a write of 0 bytes).
int write_all(int fd, std::string_view data);

}  // namespace portalab
