#include "results/result_files.hpp"

#include "results/schema_version.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace portalab {
namespace {

namespace fs = std::filesystem;

// Rewrite the full files while they took at most this fraction of the run.
constexpr double rewrite_budget = 0.1;

std::string reason(int err) { return std::strerror(err); }

// A name no other writer uses: this process's id and a counter.
std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}.{}", ::getpid(), counter++);
}

// The whole buffer, or the errno of the failure (ENOSPC for a write of 0).
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

}  // namespace

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string tmp = fmt::format("{}.{}.tmp", path, unique_suffix());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputError(fmt::format("cannot create {}: {}", tmp, reason(errno)));
  int err = write_all(fd, content);
  // close() reports what a network file system could not store.
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    throw OutputError(fmt::format("cannot rename {} to {}: {}", tmp, path, reason(err)));
  }
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw OutputError(fmt::format("cannot write {}: {}", path, reason(err)));
  }
}

void check_output_dir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw OutputError(fmt::format("cannot create the folder {}: {}", dir, ec.message()));
  if (!fs::is_directory(dir, ec)) throw OutputError(fmt::format("{} is not a folder", dir));
  // Writable now, with room for a block: a probe file, removed at once.
  const std::string probe = (fs::path(dir) / fmt::format(".portalab-probe.{}", unique_suffix()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputError(fmt::format("cannot write into {}: {}", dir, reason(errno)));
  int err = write_all(fd, std::string(4096, '\n'));
  if (::close(fd) != 0 && err == 0) err = errno;
  ::unlink(probe.c_str());
  if (err != 0) throw OutputError(fmt::format("cannot write into {}: {}", dir, reason(err)));
  // Another run writing there now would overwrite these files, or they its.
  const std::string journal = (fs::path(dir) / journal_name).string();
  if (const int j = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC); j >= 0) {
    const bool busy = locked_by_another(j);
    ::close(j);  // releases the lock, if taken
    if (busy)
      throw OutputError(fmt::format("{}: another portalab run is writing its results there; "
                                    "give each run a folder of its own",
                                    dir));
  }
}

void check_output_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw OutputError(fmt::format("{} is a folder; give the path of a file", path));
  const fs::path parent = fs::path(path).parent_path();
  try {
    check_output_dir(parent.empty() ? std::string(".") : parent.string());
  } catch (const OutputError& e) {
    throw OutputError(fmt::format("cannot write {}: {}", path, e.what()));
  }
}

ResultFiles::ResultFiles(std::string dir, nlohmann::json provenance)
    : m_dir(std::move(dir)),
      m_journal_path((fs::path(m_dir) / journal_name).string()),
      m_provenance_text(dump(provenance, 2)),
      m_start(std::chrono::steady_clock::now()) {
  check_output_dir(m_dir);
  // Not O_TRUNC: a journal that another run holds must be left as it is.
  m_journal_fd = ::open(m_journal_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (m_journal_fd < 0)
    throw OutputError(fmt::format("cannot create {}: {}", m_journal_path, reason(errno)));
  if (locked_by_another(m_journal_fd) || ::ftruncate(m_journal_fd, 0) != 0) {
    const int err = errno;
    ::close(m_journal_fd);
    m_journal_fd = -1;
    throw OutputError(err == EWOULDBLOCK
                          ? fmt::format("{}: another portalab run is writing its results there; "
                                        "give each run a folder of its own",
                                        m_dir)
                          : fmt::format("cannot write {}: {}", m_journal_path, reason(err)));
  }
  append_journal(dump({{"portalab_journal", 1},
                       {"schema_version", schema_version},
                       {"provenance", std::move(provenance)}}) +
                 "\n");
  // Files of no entry at once: a reader finds none of an earlier run's.
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
    throw OutputError(fmt::format("cannot write {}: {}", m_journal_path, reason(err)));
  }
}

std::string ResultFiles::cache_rows(std::span<const Result> rows, std::size_t first_changed) {
  first_changed = std::min(first_changed, rows.size());
  m_json_rows.resize(rows.size());
  m_csv_rows.resize(rows.size());
  std::string line = fmt::format("{{\"first\":{},\"rows\":[", first_changed);
  for (std::size_t i = first_changed; i < rows.size(); ++i) {
    const nlohmann::json j = to_json(rows[i]);
    if (i > first_changed) line += ',';
    line += dump(j);
    m_json_rows[i] = indented(dump(j, 2), 4);
    m_csv_rows[i] = fmt::format("{}\n", fmt::join(csv_row(rows[i]), ","));
  }
  line += "]}\n";
  return line;
}

void ResultFiles::write_full(const nlohmann::json& summary) {
  const auto start = std::chrono::steady_clock::now();
  std::string csv = fmt::format("{}\n", fmt::join(csv_header(), ","));
  std::string json =
      fmt::format("{{\n  \"schema_version\": {},\n  \"provenance\": ", schema_version) +
      indented(m_provenance_text, 2).substr(2) + ",\n  \"summary\": " +
      indented(dump(summary, 2), 2).substr(2) + ",\n  \"results\": [";
  for (std::size_t i = 0; i < m_json_rows.size(); ++i) {
    json += i ? ",\n" : "\n";
    json += m_json_rows[i];
    csv += m_csv_rows[i];
  }
  json += m_json_rows.empty() ? "]\n}\n" : "\n  ]\n}\n";
  // The CSV first: a kill between the two leaves it the one ahead.
  write_file_atomically((fs::path(m_dir) / "results.csv").string(), csv);
  write_file_atomically((fs::path(m_dir) / "results.json").string(), json);
  m_rows_at_last_rewrite = m_json_rows.size();
  ++m_rewrites;
  m_rewrite_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void ResultFiles::update(std::span<const Result> rows, std::size_t first_changed,
                         const nlohmann::json& summary) {
  append_journal(cache_rows(rows, first_changed));
  // Whole files again while that is cheap against the run, and each time the
  // rows doubled: their total cost stays linear in the rows.
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  if (rows.size() >= 2 * m_rows_at_last_rewrite || m_rewrite_seconds <= rewrite_budget * elapsed)
    write_full(summary);
}

void ResultFiles::finish(std::span<const Result> rows, const nlohmann::json& summary) {
  if (m_journal_fd < 0) throw OutputError(fmt::format("{}: already finished", m_dir));
  cache_rows(rows, 0);  // every row: speedups may have changed since
  write_full(summary);
  // The full files are complete: the journal has nothing more to tell.
  // Removed while still locked, so no other run takes it meanwhile.
  const int err = ::unlink(m_journal_path.c_str()) != 0 && errno != ENOENT ? errno : 0;
  ::close(m_journal_fd);
  m_journal_fd = -1;
  if (err != 0)
    throw OutputError(fmt::format("cannot remove {}: {}", m_journal_path, reason(err)));
}

}  // namespace portalab
