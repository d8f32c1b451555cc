#include "results/result_files.hpp"

#include "support/text.hpp"
#include "results/schema_version.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace portalab {
namespace {

namespace fs = std::filesystem;

// Rewrite the full files while they took at most this fraction of the run.
constexpr double rewrite_budget = 0.1;

std::string reason(int err) { return std::strerror(err); }

// JSON as text; strings that are not UTF-8 (a path, a library's message)
// are written with U+FFFD rather than stopping the run.
std::string dump(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Text of an indented dump placed `spaces` deeper.
std::string indented(const std::string& text, int spaces) {
  std::string pad(static_cast<std::size_t>(spaces), ' ');
  std::string out = pad;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// A file that another process holds locked (flock) is in use by another run.
bool locked_by_another(int fd) {
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return false;
  return errno == EWOULDBLOCK;
}

constexpr const char* journal_name = "results.jsonl";
// The files of a run, the journal first.
constexpr std::array<const char*, 3> result_names{journal_name, "results.json", "results.csv"};

OutputError another_run(const OutputFolder& folder) {
  return OutputError(
      fmt::format("{}: another portalab run is writing its results there; give "
                  "each run a folder of its own",
                  shown(folder.path())));
}

// The result files an earlier run left in the folder, regular files all
// (anything else at their names is refused); a folder that another running
// portalab writes into (its journal locked) is refused.
std::vector<std::string> earlier_results(const OutputFolder& folder) {
  std::vector<std::string> found;
  for (const char* name : result_names)
    if (folder.has_file(name)) found.emplace_back(name);
  if (const int j = folder.open_existing(journal_name); j >= 0) {
    const bool busy = locked_by_another(j);
    ::close(j);  // releases the lock, if taken
    if (busy) throw another_run(folder);
  }
  return found;
}

// The temporary files of full rewrites a killed run left (results.csv.<pid>.<n>.tmp).
std::vector<std::string> leftover_temporaries(const OutputFolder& folder) {
  std::vector<std::string> found;
  const int fd = ::dup(folder.fd());
  DIR* dir = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (!dir) {
    if (fd >= 0) ::close(fd);
    return found;
  }
  ::rewinddir(dir);
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    struct stat st;
    if (name.starts_with("results.") && name.ends_with(".tmp") &&
        ::fstatat(folder.fd(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      found.emplace_back(name);
  }
  ::closedir(dir);
  std::sort(found.begin(), found.end());
  return found;
}

// Moves the files of an earlier run into a folder of their own beside the
// new ones, previous-<time of the newest, UTC>; returns the sentence that
// says so.
std::string move_aside(const OutputFolder& folder, std::vector<std::string> names) {
  const bool unfinished = std::find(names.begin(), names.end(), journal_name) != names.end();
  const std::size_t results = names.size();
  for (auto& t : leftover_temporaries(folder)) names.push_back(std::move(t));
  std::time_t newest = 0;
  for (const auto& name : names) {
    struct stat st;
    if (::fstatat(folder.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
      newest = std::max(newest, st.st_mtime);
  }
  std::tm utc{};
  ::gmtime_r(&newest, &utc);
  const std::string stamp = fmt::format("previous-{:%Y%m%d-%H%M%S}", utc);
  std::string aside;
  for (int k = 1; aside.empty(); ++k) {
    const std::string name = k == 1 ? stamp : fmt::format("{}-{}", stamp, k);
    if (folder.make_folder(name))
      aside = name;
    else if (k == 1000)
      throw OutputError(
          fmt::format("cannot create {}: {}", shown(folder.path_of(name)), reason(EEXIST)));
  }
  // Into the folder just made, opened without following a link.
  const int to = ::openat(folder.fd(), aside.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (to < 0)
    throw OutputError(
        fmt::format("cannot open {}: {}", shown(folder.path_of(aside)), reason(errno)));
  for (const auto& name : names)
    if (::renameat(folder.fd(), name.c_str(), to, name.c_str()) != 0) {
      const int err = errno;
      ::close(to);
      throw OutputError(fmt::format("cannot move {} into {}: {}", shown(folder.path_of(name)),
                                    shown(folder.path_of(aside)), reason(err)));
    }
  ::close(to);
  return fmt::format(
      "{}: the result files of an earlier run ({}{}) moved to {}/, kept as they were",
      shown(folder.path()),
      fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(results), ", "),
      unfinished ? "; its journal says it did not finish" : "", shown(folder.path_of(aside)));
}

// The journal, created and locked before its name appears: a run that
// checks the folder meanwhile finds it held, never an earlier run's to move.
int take_journal(const OutputFolder& folder) {
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = fmt::format("{}.{}.tmp", journal_name, unique_suffix());
    fd = folder.create(tmp);
  }
  if (fd < 0)
    throw OutputError(
        fmt::format("cannot create {}: {}", shown(folder.path_of(tmp)), reason(EEXIST)));
  // Appended to only: a line cut short is truncated away, the next at the end.
  int err = ::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::fcntl(fd, F_SETFL, O_APPEND) != 0 ? errno : 0;
  if (err == 0 && ::linkat(folder.fd(), tmp.c_str(), folder.fd(), journal_name, 0) != 0) {
    err = errno;
    // A file system without hard links: renamed, once nothing is there.
    if (err == EPERM || err == EOPNOTSUPP || err == ENOSYS) {
      err = folder.has_file(journal_name)                                          ? EEXIST
            : ::renameat(folder.fd(), tmp.c_str(), folder.fd(), journal_name) == 0 ? 0
                                                                                   : errno;
      if (err == 0) tmp.clear();
    }
  }
  if (!tmp.empty()) folder.remove(tmp);
  if (err != 0) {
    ::close(fd);
    if (err == EEXIST) throw another_run(folder);
    throw OutputError(
        fmt::format("cannot create {}: {}", shown(folder.path_of(journal_name)), reason(err)));
  }
  return fd;
}

}  // namespace

void check_output_dir(const std::string& dir) { earlier_results(OutputFolder(dir)); }

void check_output_file(const std::string& path) {
  const fs::path p(path);
  std::error_code ec;
  if (p.filename().empty() || fs::is_directory(path, ec))
    throw OutputError(fmt::format("{} is a folder; give the path of a file", shown(path)));
  const fs::path parent = p.parent_path();
  std::optional<OutputFolder> folder;
  try {
    folder.emplace(parent.empty() ? std::string(".") : parent.string());
  } catch (const OutputError& e) {
    throw OutputError(fmt::format("cannot write {}: {}", shown(path), e.what()));
  }
  folder->has_file(p.filename().string());
}

ResultFiles::ResultFiles(std::string dir, nlohmann::json provenance)
    : m_folder(std::move(dir)),
      m_dir(m_folder.path()),
      m_journal_path(m_folder.path_of(journal_name)),
      m_provenance_text(dump(provenance, 2)),
      m_start(std::chrono::steady_clock::now()) {
  // An earlier run's files are kept, never replaced: moved aside first.
  if (auto earlier = earlier_results(m_folder); !earlier.empty())
    m_moved_aside = move_aside(m_folder, std::move(earlier));
  m_journal_fd = take_journal(m_folder);
  append_journal(dump({{"portalab_journal", 1},
                       {"schema_version", schema_version},
                       {"provenance", std::move(provenance)}}) +
                 "\n");
  // Files of no entry at once: a reader finds the files of this run only.
  write_full({{"entries", 0}});
}

ResultFiles::~ResultFiles() {
  if (m_journal_fd >= 0) ::close(m_journal_fd);
}

void ResultFiles::append_journal(std::string_view line) {
  if (m_journal_fd < 0) throw OutputError(fmt::format("{}: already finished", m_journal_path));
  const off_t before = ::lseek(m_journal_fd, 0, SEEK_END);
  if (const int err = write_all(m_journal_fd, line); err != 0) {
    // A partial line would end the journal in the middle of a record.
    if (before >= 0 && ::ftruncate(m_journal_fd, before) != 0) {
      // Nothing more to do: the reader skips a last line that does not parse.
    }
    throw OutputError(fmt::format("cannot write {}: {}", shown(m_journal_path), reason(err)));
  }
}

std::string ResultFiles::cache_rows(std::span<const Result> rows) {
  std::string line = fmt::format("{{\"first\":{},\"rows\":[", m_json_rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const nlohmann::json j = to_json(rows[i]);
    if (i > 0) line += ',';
    line += dump(j);
    m_json_rows.push_back(indented(dump(j, 2), 4));
    m_csv_rows.push_back(fmt::format("{}\n", fmt::join(csv_row(rows[i]), ",")));
  }
  line += "]}\n";
  return line;
}

void ResultFiles::write_full(const nlohmann::json& summary) {
  const auto start = std::chrono::steady_clock::now();
  std::string csv = fmt::format("{}\n", fmt::join(csv_header(), ","));
  std::string json =
      fmt::format("{{\n  \"schema_version\": {},\n  \"provenance\": ", schema_version) +
      indented(m_provenance_text, 2).substr(2) +
      ",\n  \"summary\": " + indented(dump(summary, 2), 2).substr(2) + ",\n  \"results\": [";
  for (std::size_t i = 0; i < m_json_rows.size(); ++i) {
    json += i ? ",\n" : "\n";
    json += m_json_rows[i];
    csv += m_csv_rows[i];
  }
  json += m_json_rows.empty() ? "]\n}\n" : "\n  ]\n}\n";
  // The CSV first: a kill between the two leaves it the one ahead.
  m_folder.write_atomically("results.csv", csv);
  m_folder.write_atomically("results.json", json);
  m_rows_at_last_rewrite = m_json_rows.size();
  ++m_rewrites;
  m_rewrite_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void ResultFiles::append(std::span<const Result> rows, const nlohmann::json& summary) {
  append_journal(cache_rows(rows));
  // Whole files again while that is cheap against the run, and each time the
  // rows doubled: their total cost stays linear in the rows.
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  if (m_json_rows.size() >= 2 * m_rows_at_last_rewrite ||
      m_rewrite_seconds <= rewrite_budget * elapsed)
    write_full(summary);
}

void ResultFiles::finish(const nlohmann::json& summary) {
  if (m_journal_fd < 0) throw OutputError(fmt::format("{}: already finished", m_dir));
  write_full(summary);
  // The full files are complete: the journal has nothing more to tell.
  // Removed while still locked, so no other run takes it meanwhile.
  const int err = m_folder.remove(journal_name);
  ::close(m_journal_fd);
  m_journal_fd = -1;
  if (err != 0)
    throw OutputError(fmt::format("cannot remove {}: {}", shown(m_journal_path), reason(err)));
}

}  // namespace portalab
