// The result files of a run, in one folder, written so that neither a kill
// nor a full disk loses what was measured, at a cost linear in the entries:
//
//   results.jsonl  a journal: one line appended per append() (the rows new
//                  since the last; a row written is never rewritten), flushed
//                  to the kernel before append() returns, so a killed job's
//                  journal holds every completed entry;
//   results.csv,   the complete files, rewritten whole through a temporary
//   results.json   and a rename (a reader never sees half of one), but only
//                  while that costs little: at most a tenth of the run's time
//                  so far, and whenever the rows have doubled since the last
//                  rewrite. finish() writes them a last time, then removes
//                  the journal: a journal left beside them means the run did
//                  not finish, and the journal is the more recent of the two
//                  (scripts/portalab/reading.py reads it so).
//
// Every file is created anew in the folder, never written through a link
// (support/files.hpp). The files of an earlier run found there, finished or
// not, are kept: moved into previous-<time of its last write, UTC>/ there.
#pragma once

#include "support/files.hpp"
#include "results/result.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace portalab {

// Creates dir if needed, proves it writable now (OutputFolder) and checks
// the names of the result files there: anything but a regular file at one
// (a link, a pipe, a folder) is refused, and so is a folder another running
// portalab writes into. Throws OutputError.
void check_output_dir(const std::string& dir);
// For a file to be written alone (calibrate --out): its folder as above, and
// a regular file or nothing at its name.
void check_output_file(const std::string& path);

class ResultFiles {
 public:
  // Checks the folder (check_output_dir), moves the files of an earlier run
  // found there into a folder of their own, previous-<time>/ (moved_aside()
  // says so), and starts a new journal, taken so that no other run can.
  ResultFiles(std::string dir, nlohmann::json provenance);
  ~ResultFiles();
  ResultFiles(const ResultFiles&) = delete;
  ResultFiles& operator=(const ResultFiles&) = delete;

  // After each entry: `rows` follow those written before, which stay as they
  // were written (the journal's line says where they start: {"first": rows
  // written before, "rows": [...]}). Amortised linear total cost. Throws
  // OutputError; the files then hold every row before the failing call's.
  void append(std::span<const Result> rows, const nlohmann::json& summary);
  // At the end (or on a signal): both files complete, the journal removed.
  void finish(const nlohmann::json& summary);

  const std::string& dir() const { return m_dir; }
  // What became of an earlier run's files, a sentence; "" when none was there.
  const std::string& moved_aside() const { return m_moved_aside; }
  // Full rewrites of results.csv and results.json so far (for tests).
  std::size_t rewrites() const { return m_rewrites; }

 private:
  // Caches the rows as text after those cached; returns their journal line.
  std::string cache_rows(std::span<const Result> rows);
  void append_journal(std::string_view line);
  void write_full(const nlohmann::json& summary);

  OutputFolder m_folder;
  std::string m_dir;
  std::string m_journal_path;
  std::string m_moved_aside;
  int m_journal_fd = -1;
  std::string m_provenance_text;         // dumped once
  std::vector<std::string> m_json_rows;  // each row as results.json shows it
  std::vector<std::string> m_csv_rows;   // each row as a CSV line
  std::size_t m_rows_at_last_rewrite = 0;
  std::size_t m_rewrites = 0;
  std::chrono::steady_clock::time_point m_start;
  double m_rewrite_seconds = 0.0;  // spent rewriting the full files so far
};

}  // namespace portalab
