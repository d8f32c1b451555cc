// The store's file, its schema, and importing runs into it.
#include "store/store.hpp"

#include "deck/deck.hpp"
#include "support/files.hpp"
#include "support/hash.hpp"
#include "support/interrupt.hpp"
#include "platform/space_names.hpp"
#include "results/results_check.hpp"
#include "results/schema_version.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <unordered_map>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <ostream>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace portalab::store {

namespace {

constexpr int exit_bad_input = 2;
// 'PLAB': tells a portalab store from any other SQLite file.
constexpr std::int64_t application_id = 0x504c4142;
// A results.json of 100,000 rows is about 300 MB.
constexpr std::size_t max_results_bytes = std::size_t{1} << 30;

// The row keys, each with its runs over time. A device space's key names
// its GPU too (the run's GPUs by UUID): two GPUs of one node are two keys,
// never one key's successive runs.
std::string series_sql(const std::string& table) {
  return fmt::format(R"sql(
CREATE TABLE {}(
  id INTEGER PRIMARY KEY,
  experiment TEXT NOT NULL,
  variant TEXT NOT NULL,
  dtype TEXT NOT NULL,
  n INTEGER NOT NULL,
  space TEXT NOT NULL,
  copies TEXT NOT NULL,
  library TEXT NOT NULL,
  threads INTEGER NOT NULL,
  machine TEXT NOT NULL,
  gpu TEXT NOT NULL,
  UNIQUE(experiment, variant, dtype, n, space, copies, library, threads, machine, gpu));
)sql",
                     table);
}

// A key's runs, newest first, with what history reads of them (the total
// phase, the code path): history reads the index alone, a run's points side
// by side.
constexpr const char* rows_series_sql =
    "CREATE INDEX rows_series ON rows(series, started_unix, id, run, check_result, reps, total_ms, "
    "total_min_ms, total_max_ms, total_std_ms, path)";

// Each repetition of a row (results schema 5), the first
// max_stored_repetitions of each phase: what history's test compares. As
// little-endian float64 BLOBs: exact, 8 bytes a repetition (JSON text takes
// about twice that), read without parsing, and by any client
// (Python: struct.unpack(f"<{len(blob) // 8}d", blob)). A table of its own:
// history's scans of `rows` never page through them. A row measured in
// passes keeps each pass's kernel and total median alike (NULL: one pass).
constexpr const char* repetitions_sql = R"sql(
CREATE TABLE repetitions(
  row INTEGER PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
  kernel_ms BLOB NOT NULL,
  total_ms BLOB NOT NULL,
  pass_kernel_ms BLOB,
  pass_total_ms BLOB);
)sql";

// Version 6 (store_schema_version); migrate() brings versions 1 to 5 up to
// it. A row's path (the code path its kernel phase took) is no part of its
// key: a run whose calibration chose another path is judged against the
// same history, and says that the path changed.
constexpr const char* schema_sql = R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  imported_at TEXT NOT NULL,
  started_at TEXT NOT NULL,
  started_unix REAL NOT NULL,
  machine TEXT NOT NULL,
  job_id TEXT NOT NULL,
  array_task_id TEXT NOT NULL,
  deck TEXT NOT NULL,
  ranks INTEGER NOT NULL,
  incomplete INTEGER NOT NULL,
  portalab_version TEXT NOT NULL,
  kokkos_version TEXT NOT NULL,
  kokkos_kernels_version TEXT NOT NULL,
  compiler TEXT NOT NULL,
  gpu_driver TEXT NOT NULL,
  cuda_runtime TEXT NOT NULL,
  cpu_model TEXT NOT NULL,
  host_blas TEXT NOT NULL);
CREATE INDEX runs_started ON runs(started_unix);
CREATE INDEX runs_job ON runs(job_id, started_unix);
CREATE TABLE provenance(
  run INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  json TEXT NOT NULL);
CREATE TABLE gpus(
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  host TEXT NOT NULL,
  uuid TEXT NOT NULL,
  pci_bus_id TEXT NOT NULL,
  name TEXT NOT NULL,
  power_limit_w REAL,
  applications_sm_mhz REAL,
  ecc_enabled INTEGER,
  ecc_errors INTEGER,
  pcie_width INTEGER,
  pcie_max_width INTEGER,
  pcie_generation INTEGER,
  PRIMARY KEY(run, rank));
CREATE INDEX gpus_uuid ON gpus(uuid);
CREATE TABLE limits(
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  space TEXT NOT NULL,
  host_space INTEGER NOT NULL,
  gpu_uuid TEXT,
  quantity TEXT NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  unsteady_ratio REAL, -- slowest / fastest where the calibration found it unsteady
  PRIMARY KEY(run, rank, space, quantity));
CREATE INDEX limits_gpu ON limits(gpu_uuid);
CREATE TABLE rows(
  id INTEGER PRIMARY KEY,
  run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  series INTEGER NOT NULL REFERENCES series(id),
  started_unix REAL NOT NULL,
  ranks INTEGER NOT NULL,
  check_result TEXT NOT NULL,
  reps INTEGER,
  h2d_ms REAL, h2d_min_ms REAL, h2d_max_ms REAL, h2d_std_ms REAL,
  kernel_ms REAL, kernel_min_ms REAL, kernel_max_ms REAL, kernel_std_ms REAL,
  d2h_ms REAL, d2h_min_ms REAL, d2h_max_ms REAL, d2h_std_ms REAL,
  total_ms REAL, total_min_ms REAL, total_max_ms REAL, total_std_ms REAL,
  bytes REAL, flops REAL, gbps REAL, gflops REAL, pct_of_limit REAL,
  path TEXT,
  limit_level TEXT, -- the level of the space's ladder the row was held to (L2, memory, ...)
  limit_suspect TEXT, -- why its limit is suspect (above 105% of it); NULL when not
  rel_ci95 REAL, noise_target REAL, stopped_by TEXT, -- results.json's; NULL before its version 5
  noisy INTEGER); -- 1: the budget of repetitions ran out before the median was steady
CREATE INDEX rows_run ON rows(run);
CREATE TABLE energy(
  row INTEGER PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
  gpu_joules_per_rep REAL,
  cpu_joules_per_rep REAL,
  power_w REAL,
  sm_clock_mhz REAL,
  mem_clock_mhz REAL,
  temperature_c REAL,
  throttled INTEGER NOT NULL,
  reasons TEXT NOT NULL);
CREATE TABLE rank_rows(
  row INTEGER NOT NULL REFERENCES rows(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  kernel_ms REAL,
  total_ms REAL,
  PRIMARY KEY(row, rank));
)sql";

// ---- reading a results document, leniently where a field is optional ----

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return {};
  const auto it = j.find(key);
  if (it == j.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<std::int64_t>());
  return {};
}

const nlohmann::json& obj(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  if (!j.is_object()) return empty;
  const auto it = j.find(key);
  return it != j.end() && (it->is_object() || it->is_array()) ? *it : empty;
}

constexpr const char* journal_name = "results.jsonl";

// A run's folder as found: its results.json, its journal (results.jsonl), or
// both (a run that did not finish, or is still writing).
struct RunFiles {
  std::string folder, json, journal;
  std::string name() const { return journal.empty() ? json : journal; }
};

// Anything but a regular file where a run's file is named: refused, named.
bool regular_or_nothing(const fs::path& p) {
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (ec || !fs::exists(st)) return false;
  if (fs::is_regular_file(st)) return true;
  throw StoreError(exit_bad_input, fmt::format("{}: {}, not a results file", shown(p.string()),
                                               fs::is_symlink(st)     ? "a symbolic link"
                                               : fs::is_directory(st) ? "a folder"
                                               : fs::is_fifo(st)      ? "a named pipe (FIFO)"
                                               : fs::is_socket(st)    ? "a socket"
                                                                      : "a device"));
}

RunFiles run_files(const fs::path& folder, const fs::path& json_file) {
  RunFiles r{folder.string(), "", ""};
  if (regular_or_nothing(json_file)) r.json = json_file.string();
  if (regular_or_nothing(folder / journal_name)) r.journal = (folder / journal_name).string();
  return r;
}

// The runs under one path given: a results.json or results.jsonl file (its
// folder's run), or every folder holding either in a folder tree (links
// not followed: a tree of runs holds its runs, not links to others').
void find_runs(const std::string& given, std::vector<RunFiles>& runs) {
  std::error_code ec;
  const auto status = fs::symlink_status(given, ec);
  if (ec || !fs::exists(status))
    throw StoreError(exit_bad_input,
                     fmt::format("{}: no such file or folder to import", shown(given)));
  if (fs::is_regular_file(fs::status(given, ec))) {
    const fs::path p(given);
    if (p.filename() == journal_name) {
      runs.push_back(run_files(p.parent_path(), p.parent_path() / "results.json"));
    } else if (p.filename() == "results.json") {
      // Its journal beside it, where one is, is the run's more recent record.
      runs.push_back(run_files(p.parent_path(), p));
      runs.back().json = given;
    } else {  // a copy under another name: that file alone
      runs.push_back({p.parent_path().string(), given, ""});
    }
    return;
  }
  if (!fs::is_directory(fs::status(given, ec)))
    throw StoreError(exit_bad_input,
                     fmt::format("{}: neither a results.json nor a folder of runs", shown(given)));
  std::vector<RunFiles> here;
  fs::recursive_directory_iterator it(given, fs::directory_options::none, ec), end;
  if (ec)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: cannot read the folder: {}", shown(given), ec.message()));
  std::vector<fs::path> folders;
  for (; it != end; it.increment(ec)) {
    if (ec)
      throw StoreError(exit_bad_input, fmt::format("{}: cannot read the folder: {}",
                                                   shown(it->path().string()), ec.message()));
    const auto& entry = *it;
    if (entry.is_symlink(ec)) continue;
    const std::string name = entry.path().filename().string();
    if (name == "results.json" || name == journal_name)
      folders.push_back(entry.path().parent_path());
  }
  std::sort(folders.begin(), folders.end());
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  for (const auto& f : folders) here.push_back(run_files(f, f / "results.json"));
  if (here.empty())
    throw StoreError(exit_bad_input,
                     fmt::format("{}: no results.json in this folder or below it", shown(given)));
  runs.insert(runs.end(), here.begin(), here.end());
}

// An open file, closed when done.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A regular file's text, opened without waiting on a pipe nor following a
// link, read with a bound: its size then, and room to see it grow.
std::string read_run_file(int fd, const std::string& file) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw StoreError(exit_bad_input,
                     fmt::format("{}: {}, not a results file", shown(file), file_type(st.st_mode)));
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_results_bytes)
    throw StoreError(exit_bad_input, fmt::format("{}: more than {} bytes; not a results file",
                                                 shown(file), max_results_bytes));
  const std::size_t bound = std::min<std::size_t>(max_results_bytes, size + 65536);
  std::string text(bound + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw StoreError(exit_bad_input,
                       fmt::format("{}: cannot read it: {}", shown(file), std::strerror(errno)));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > bound)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: grew past {} bytes while read; import it once its run "
                                 "has ended",
                                 shown(file), bound));
  text.resize(got);
  return text;
}

Fd open_run_file(const std::string& file) {
  Fd f;
  f.fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (f.fd < 0)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: cannot open it: {}", shown(file), std::strerror(errno)));
  return f;
}

// What a run's folder holds, to import: its document, or why not now.
struct RunRead {
  nlohmann::json doc;
  std::string from;  // the file read
  bool running = false;
};

RunRead read_run(const RunFiles& run) {
  RunRead r;
  if (!run.journal.empty()) {
    Fd f = open_run_file(run.journal);
    // A run holds its journal locked (flock) while it writes: still
    // running, its rows are not all there yet.
    if (::flock(f.fd, LOCK_SH | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK)
        throw StoreError(exit_bad_input, fmt::format("{}: cannot lock it to read: {}",
                                                     shown(run.journal), std::strerror(errno)));
      r.running = true;
      r.from = run.journal;
      return r;
    }
    const std::string text = read_run_file(f.fd, run.journal);
    // A journal begun but empty (a run killed as it started): its
    // results.json, where there is one, stands.
    if (text.empty() && run.json.empty())
      throw StoreError(exit_bad_input,
                       fmt::format("{}: an empty journal and no results.json: a run that "
                                   "recorded nothing",
                                   shown(run.journal)));
    if (!text.empty()) {
      try {
        r.doc = parse_journal(text, shown(run.journal));
      } catch (const InputError& e) {
        throw StoreError(exit_bad_input, e.what());
      }
      r.from = run.journal;
      return r;
    }
  }
  Fd f = open_run_file(run.json);
  try {
    r.doc = parse_results(read_run_file(f.fd, run.json), shown(run.json));
  } catch (const InputError& e) {
    throw StoreError(exit_bad_input, e.what());
  }
  r.from = run.json;
  return r;
}

// A row's field that names it: a string, or a whole number for n and threads.
std::string key_text(const nlohmann::json& row, const char* key, const std::string& file,
                     std::size_t i) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_string())
    throw StoreError(exit_bad_input,
                     fmt::format("{}: row {}: \"{}\" missing or not a string", file, i, key));
  return it->get<std::string>();
}

std::int64_t key_integer(const nlohmann::json& row, const char* key, const std::string& file,
                         std::size_t i) {
  const auto it = row.find(key);
  if (it == row.end() || !it->is_number_integer())
    throw StoreError(exit_bad_input,
                     fmt::format("{}: row {}: \"{}\" missing or not a whole number", file, i, key));
  return it->get<std::int64_t>();
}

// The GPUs a run's device rows ran on (the `gpu` of their keys): its ranks'
// UUIDs, sorted, joined by commas; "" for a run without a GPU.
std::string gpu_key(std::vector<std::string> uuids) {
  std::sort(uuids.begin(), uuids.end());
  uuids.erase(std::unique(uuids.begin(), uuids.end()), uuids.end());
  std::string key;
  for (const auto& u : uuids) key += (key.empty() ? "" : ",") + u;
  return key;
}

// How far apart the calibration's repetitions of a limit were, where it
// found them unsteady (slowest more than 1.5 times the fastest). A limit
// that is the best of a sweep (transfers) is unsteady only where the size
// that gave the best was.
std::optional<double> unsteady_ratio(const nlohmann::json& space, const std::string& quantity,
                                     double value) {
  std::optional<double> ratio;
  for (const auto& u : obj(space, "unsteady")) {
    std::string name = str(u, "limit");
    const std::string dtype = str(u, "dtype");
    if (name == "gemm_gflops" && !dtype.empty()) name = "gemm_" + dtype + "_gflops";
    const auto fastest = finite_number(u, "fastest"), slowest = finite_number(u, "slowest");
    if (name != quantity || !fastest || !slowest || *fastest <= 0 || *slowest <= 0) continue;
    const bool best_of = u.contains("bytes") || u.contains("dtype");
    if (best_of && !quantity.starts_with("gemm_") && std::abs(*fastest - value) > 1e-6 * value)
      continue;
    const double r = std::max(*fastest, *slowest) / std::min(*fastest, *slowest);
    ratio = std::max(ratio.value_or(1.0), r);
  }
  return ratio;
}

class Importer {
 public:
  explicit Importer(Connection& db)
      : m_db(db),
        m_run(db.prepare(
            "INSERT INTO runs(run_id, path, imported_at, started_at, started_unix, machine, job_id, "
            "array_task_id, deck, ranks, incomplete, portalab_version, kokkos_version, "
            "kokkos_kernels_version, compiler, gpu_driver, cuda_runtime, cpu_model, host_blas) "
            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
        m_known(db.prepare("SELECT id, incomplete, (SELECT count(*) FROM rows WHERE run = runs.id) "
                           "FROM runs WHERE run_id = ?")),
        m_forget(db.prepare("DELETE FROM runs WHERE id = ?")),
        m_provenance(db.prepare("INSERT INTO provenance(run, json) VALUES(?,?)")),
        m_gpu(db.prepare(
            "INSERT OR REPLACE INTO gpus(run, rank, host, uuid, pci_bus_id, name, power_limit_w, "
            "applications_sm_mhz, ecc_enabled, ecc_errors, pcie_width, pcie_max_width, "
            "pcie_generation) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)")),
        m_limit(db.prepare(
            "INSERT OR REPLACE INTO limits(run, rank, space, host_space, gpu_uuid, quantity, value, "
            "unit, unsteady_ratio) VALUES(?,?,?,?,?,?,?,?,?)")),
        m_series_find(db.prepare(
            "SELECT id FROM series WHERE experiment=? AND variant=? AND dtype=? AND n=? AND space=? "
            "AND copies=? AND library=? AND threads=? AND machine=? AND gpu=?")),
        m_series_add(db.prepare(
            "INSERT INTO series(experiment, variant, dtype, n, space, copies, library, threads, "
            "machine, gpu) VALUES(?,?,?,?,?,?,?,?,?,?)")),
        m_row(db.prepare(
            "INSERT INTO rows(run, series, started_unix, ranks, check_result, reps, h2d_ms, "
            "h2d_min_ms, h2d_max_ms, h2d_std_ms, kernel_ms, kernel_min_ms, kernel_max_ms, "
            "kernel_std_ms, d2h_ms, d2h_min_ms, d2h_max_ms, d2h_std_ms, total_ms, total_min_ms, "
            "total_max_ms, total_std_ms, bytes, flops, gbps, gflops, pct_of_limit, path, "
            "limit_level, limit_suspect, rel_ci95, noise_target, stopped_by, noisy) "
            "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")),
        m_energy(
            db.prepare("INSERT INTO energy(row, gpu_joules_per_rep, cpu_joules_per_rep, power_w, "
                       "sm_clock_mhz, mem_clock_mhz, temperature_c, throttled, reasons) "
                       "VALUES(?,?,?,?,?,?,?,?,?)")),
        m_rank_row(db.prepare(
            "INSERT OR REPLACE INTO rank_rows(row, rank, kernel_ms, total_ms) VALUES(?,?,?,?)")),
        m_repetitions(
            db.prepare("INSERT INTO repetitions(row, kernel_ms, total_ms, pass_kernel_ms, "
                       "pass_total_ms) VALUES(?,?,?,?,?)")) {}

  enum class Added { added, replaced, already };

  // The store holds a run once (by run id): a run it holds as incomplete is
  // replaced by a later read of it that is complete or holds more rows.
  Added add(const std::string& file, const nlohmann::json& doc, std::int64_t& rows) {
    const auto& p = doc["provenance"];
    const std::string id = run_id_of(p);
    const auto& summary = obj(doc, "summary");
    const bool incomplete = summary.contains("incomplete") || summary.contains("interrupted");
    m_known.bind(1, id);
    Added added = Added::added;
    if (m_known.step()) {
      const std::int64_t old = m_known.integer(0);
      const bool old_incomplete = m_known.integer(1) != 0;
      const std::int64_t old_rows = m_known.integer(2);
      m_known.reset();
      if (!old_incomplete ||
          (incomplete && static_cast<std::int64_t>(doc["results"].size()) <= old_rows))
        return Added::already;
      m_forget.bind(1, old).run();
      added = Added::replaced;
    } else {
      m_known.reset();
    }

    const auto& host = obj(p, "host");
    const auto& slurm = obj(p, "slurm");
    const auto& build = obj(p, "build");
    const std::string started_at = str(p, "started_at");
    const std::optional<double> started = unix_time(started_at);
    if (!started)  // of the schema's pattern, but no date (month 13)
      throw StoreError(exit_bad_input, fmt::format("{}: provenance/started_at: {} is not a date",
                                                   shown(file), shown(started_at, 40)));
    std::string driver, runtime;
    for (const auto& d : obj(p, "devices"))
      if (d.is_object() && d.contains("cuda_driver")) {
        driver = str(d, "cuda_driver");
        runtime = str(d, "cuda_runtime");
      }
    const auto& ranks = obj(p, "ranks");
    std::string blas = str(obj(host, "blas_kernels"), "library");
    if (blas.empty()) blas = str(host, "blas");
    const std::string machine = str(host, "hostname");
    // A task of an array is its array's run: the array is the job a site
    // asks about (`db fleet --job`), each task a node of it.
    std::string job_id = str(slurm, "array_job_id");
    if (job_id.empty()) job_id = str(slurm, "job_id");
    m_run.bind(1, id)
        .bind(2, fs::absolute(file).parent_path().string())
        .bind(3, iso8601(static_cast<double>(std::time(nullptr))))
        .bind(4, started_at)
        .bind(5, *started)
        .bind(6, machine)
        .bind(7, job_id)
        .bind(8, str(slurm, "array_task_id"))
        .bind(9, str(obj(p, "deck"), "path"))
        .bind(10, static_cast<std::int64_t>(std::max<std::size_t>(1, ranks.size())))
        .bind(11, incomplete ? 1 : 0)
        .bind(12, str(obj(p, "portalab"), "git_commit"))
        .bind(13, str(obj(p, "kokkos"), "version"))
        .bind(14, str(obj(p, "kokkos_kernels"), "version"))
        .bind(15, fmt::format("{} {}", str(build, "compiler_id"), str(build, "compiler_version")))
        .bind(16, driver)
        .bind(17, runtime)
        .bind(18, str(host, "cpu_model"))
        .bind(19, blas)
        .run();
    const std::int64_t run = m_db.last_id();
    m_provenance.bind(1, run)
        .bind(2, p.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        .run();

    // Each rank's GPU (provenance.ranks), or the devices of a run without them.
    std::string rank0_gpu;
    std::vector<std::string> uuids;
    auto add_gpu = [&](int rank, const std::string& rank_host, const nlohmann::json& device,
                       const nlohmann::json& settings) {
      const std::string uuid = str(device, "uuid");
      if (uuid.empty()) return;
      if (rank == 0) rank0_gpu = uuid;
      uuids.push_back(uuid);
      auto integer = [&](const char* key) -> std::optional<double> {
        return finite_number(settings, key);
      };
      m_gpu.bind(1, run)
          .bind(2, rank)
          .bind(3, rank_host)
          .bind(4, uuid)
          .bind(5, str(device, "pci_bus_id"))
          .bind(6, str(device, "name"))
          .bind(7, finite_number(settings, "power_limit_w"))
          .bind(8, finite_number(settings, "applications_sm_mhz"));
      if (settings.contains("ecc") && settings["ecc"].is_boolean())
        m_gpu.bind(9, settings["ecc"].get<bool>() ? 1 : 0);
      m_gpu.bind(10, integer("ecc_uncorrected_errors"))
          .bind(11, integer("pcie_link_width"))
          .bind(12, integer("pcie_link_max_width"))
          .bind(13, integer("pcie_link_generation"))
          .run();
    };
    bool any_rank = false;
    for (const auto& r : ranks) {
      if (!r.is_object() || !r.contains("device")) continue;
      any_rank = true;
      add_gpu(static_cast<int>(finite_number(r, "rank").value_or(0)), str(r, "host"),
              obj(r, "device"), obj(obj(r, "energy"), "gpu"));
    }
    if (!any_rank)
      for (const auto& d : obj(p, "devices"))
        if (d.is_object() && d.contains("uuid")) {
          add_gpu(0, machine, d, obj(obj(p, "energy"), "gpu"));
          break;
        }

    // Calibrated limits: a host space's are the node's, a GPU space's the
    // GPU of the rank that wrote the file; on several ranks, each rank's
    // own GPU's too (provenance.ranks[k].calibration).
    add_limits(run, 0, rank0_gpu, obj(obj(p, "calibration"), "spaces"), true);
    for (const auto& r : ranks) {
      const int rank = static_cast<int>(finite_number(r, "rank").value_or(0));
      const std::string uuid = str(obj(r, "device"), "uuid");
      if (rank > 0 && !uuid.empty())
        add_limits(run, rank, uuid, obj(obj(r, "calibration"), "spaces"), false);
    }

    const std::string gpus = gpu_key(std::move(uuids));
    const auto& results = doc["results"];
    for (std::size_t i = 0; i < results.size(); ++i) {
      const auto& r = results[i];
      if (!r.is_object())
        throw StoreError(exit_bad_input, fmt::format("{}: row {}: not an object", file, i));
      const std::int64_t series = series_of(r, machine, gpus, file, i);
      m_row.bind(1, run)
          .bind(2, series)
          .bind(3, *started)
          .bind(4, static_cast<std::int64_t>(finite_number(r, "ranks").value_or(1)))
          .bind(5, str(r, "check"));
      if (const auto reps = finite_number(r, "reps"))
        m_row.bind(6, static_cast<std::int64_t>(*reps));
      int col = 7;
      const auto& stats = obj(r, "stats");
      for (const char* phase : {"h2d", "kernel", "d2h", "total"}) {
        const auto& st = obj(stats, phase);
        m_row.bind(col, finite_number(r, (std::string(phase) + "_ms").c_str()));
        m_row.bind(col + 1, finite_number(st, "min_ms"))
            .bind(col + 2, finite_number(st, "max_ms"))
            .bind(col + 3, finite_number(st, "std_ms"));
        col += 4;
      }
      m_row.bind(col, finite_number(r, "bytes"))
          .bind(col + 1, finite_number(r, "flops"))
          .bind(col + 2, finite_number(r, "gbps"))
          .bind(col + 3, finite_number(r, "gflops"))
          .bind(col + 4, finite_number(r, "pct_of_limit"));
      // NULL where the results file predates paths (schema_version 2).
      if (const auto path = r.find("path"); path != r.end() && path->is_string())
        m_row.bind(col + 5, path->get<std::string>());
      // NULL where the row names no level (no ladder, a link) or its limit is not suspect.
      if (const std::string level = str(obj(r, "limit"), "level"); !level.empty())
        m_row.bind(col + 6, level);
      if (const std::string suspect = str(obj(r, "limit"), "suspect"); !suspect.empty())
        m_row.bind(col + 7, suspect);
      // How steady the row is (results schema 5); NULL in older files.
      m_row.bind(col + 8, finite_number(r, "rel_ci95"))
          .bind(col + 9, finite_number(r, "noise_target"));
      if (const std::string stopped = str(r, "stopped_by"); !stopped.empty())
        m_row.bind(col + 10, stopped);
      if (const auto noisy = r.find("noisy"); noisy != r.end() && noisy->is_boolean())
        m_row.bind(col + 11, noisy->get<bool>() ? 1 : 0);
      m_row.run();
      const std::int64_t row = m_db.last_id();
      add_energy(row, obj(r, "energy"));
      add_repetitions(row, obj(r, "repetitions"));
      for (const auto& pr : obj(r, "per_rank"))
        if (pr.is_object() && finite_number(pr, "rank"))
          m_rank_row.bind(1, row)
              .bind(2, static_cast<std::int64_t>(*finite_number(pr, "rank")))
              .bind(3, finite_number(pr, "kernel_ms"))
              .bind(4, finite_number(pr, "total_ms"))
              .run();
      ++rows;
      if ((i & 1023) == 1023) throw_if_interrupted();
    }
    return added;
  }

 private:
  void add_limits(std::int64_t run, int rank, const std::string& gpu, const nlohmann::json& spaces,
                  bool host_spaces) {
    for (const auto& l : limit_figures(spaces)) {
      if (l.host && !host_spaces) continue;
      m_limit.bind(1, run).bind(2, rank).bind(3, l.space).bind(4, l.host ? 1 : 0);
      if (l.host || gpu.empty())
        m_limit.bind_null(5);
      else
        m_limit.bind(5, gpu);
      m_limit.bind(6, l.quantity).bind(7, l.value).bind(8, l.unit).bind(9, l.unsteady).run();
    }
  }

  std::int64_t series_of(const nlohmann::json& r, const std::string& machine,
                         const std::string& gpus, const std::string& file, std::size_t i) {
    const std::string experiment = key_text(r, "experiment", file, i),
                      variant = key_text(r, "variant", file, i),
                      dtype = key_text(r, "dtype", file, i), space = key_text(r, "space", file, i),
                      copies = key_text(r, "copies", file, i);
    const std::int64_t n = key_integer(r, "n", file, i);
    const std::string library = str(r, "library");
    const std::int64_t threads = r.contains("threads") && r["threads"].is_number_integer()
                                     ? r["threads"].get<std::int64_t>()
                                     : 0;
    const std::string gpu = is_host_space_name(space) ? std::string() : gpus;
    const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}",
                                        experiment, variant, dtype, n, space, copies, library,
                                        threads, machine, gpu);
    if (const auto it = m_series.find(key); it != m_series.end()) return it->second;
    auto bind = [&](Statement& s) {
      s.bind(1, experiment)
          .bind(2, variant)
          .bind(3, dtype)
          .bind(4, n)
          .bind(5, space)
          .bind(6, copies)
          .bind(7, library)
          .bind(8, threads)
          .bind(9, machine)
          .bind(10, gpu);
    };
    bind(m_series_find);
    std::int64_t id = 0;
    if (m_series_find.step()) {
      id = m_series_find.integer(0);
      m_series_find.reset();
    } else {
      m_series_find.reset();
      bind(m_series_add);
      m_series_add.run();
      id = m_db.last_id();
    }
    m_series.emplace(key, id);
    return id;
  }

  void add_energy(std::int64_t row, const nlohmann::json& e) {
    const auto& gpu = obj(e, "gpu");
    const auto& cpu = obj(e, "cpu");
    const bool gpu_read = gpu.is_object() && !gpu.empty() && !gpu.contains("not_available");
    const bool cpu_read = cpu.is_object() && !cpu.empty() && !cpu.contains("not_available");
    const bool clocks = finite_number(e, "sm_clock_mhz").has_value();
    if (!gpu_read && !cpu_read && !clocks) return;
    std::string reasons;
    for (const auto& r : obj(e, "clock_event_reasons"))
      if (r.is_string()) reasons += (reasons.empty() ? "" : ",") + r.get<std::string>();
    m_energy.bind(1, row)
        .bind(2, gpu_read ? finite_number(gpu, "joules_per_rep") : std::nullopt)
        .bind(3, cpu_read ? finite_number(cpu, "joules_per_rep") : std::nullopt)
        .bind(4, finite_number(e, "power_w"))
        .bind(5, finite_number(e, "sm_clock_mhz"))
        .bind(6, finite_number(e, "mem_clock_mhz"))
        .bind(7, finite_number(e, "temperature_c"))
        .bind(8, e.value("throttled", false) ? 1 : 0)
        .bind(9, reasons)
        .run();
  }

  void add_repetitions(std::int64_t row, const nlohmann::json& reps) {
    const auto& kernel = obj(reps, "kernel_ms");
    const auto& total = obj(reps, "total_ms");
    if (!kernel.is_array() || !total.is_array()) return;  // a file before version 5
    auto first = [](const nlohmann::json& times) {
      std::vector<double> ms;
      ms.reserve(std::min(times.size(), max_stored_repetitions));
      for (const auto& t : times) {
        if (ms.size() == max_stored_repetitions) break;
        ms.push_back(t.is_number() ? t.get<double>() : std::nan(""));
      }
      return ms;
    };
    m_repetitions.bind(1, row)
        .bind_blob(2, repetitions_blob(first(kernel)))
        .bind_blob(3, repetitions_blob(first(total)));
    // Each pass's medians, where the row ran in passes (both, or neither).
    const auto& pass_kernel = obj(reps, "pass_kernel_ms");
    const auto& pass_total = obj(reps, "pass_total_ms");
    if (pass_kernel.is_array() && pass_total.is_array() && pass_kernel.size() > 1 &&
        pass_total.size() == pass_kernel.size())
      m_repetitions.bind_blob(4, repetitions_blob(first(pass_kernel)))
          .bind_blob(5, repetitions_blob(first(pass_total)));
    else
      m_repetitions.bind_null(4).bind_null(5);
    m_repetitions.run();
  }

  Connection& m_db;
  Statement m_run, m_known, m_forget, m_provenance, m_gpu, m_limit, m_series_find, m_series_add,
      m_row, m_energy, m_rank_row, m_repetitions;
  std::unordered_map<std::string, std::int64_t> m_series;
};

// The first bytes of every SQLite 3 database.
bool looks_like_sqlite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  if (in.gcount() == 0) return true;  // empty: SQLite makes it a database
  return in.gcount() == 16 &&
         std::string_view(head, 16) == std::string_view("SQLite format 3\0", 16);
}

std::int64_t pragma(Connection& db, const std::string& name) {
  auto s = db.prepare("PRAGMA " + name);
  return s.step() ? s.integer(0) : 0;
}

// host_space(NAME) in SQL: is_host_space_name, the one list of host spaces.
void add_host_space_function(Connection& db) {
  auto host_space = [](sqlite3_context* c, int, sqlite3_value** v) {
    const auto* text = sqlite3_value_text(v[0]);
    sqlite3_result_int(c, text && is_host_space_name(reinterpret_cast<const char*>(text)) ? 1 : 0);
  };
  sqlite3_create_function(db.handle(), "host_space", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                          host_space, nullptr, nullptr);
}

// Version 1 to 2: a device space's row keys name the run's GPUs (each key
// of version 1 split by the GPUs its runs were on), and a limit says how
// unsteady its calibration found it (unknown for the runs imported before).
// rows_series, dropped for the rows' new keys, is made again by the step to
// version 3, which follows in the same transaction.
void migrate_1_to_2(Connection& db) {
  db.exec("ALTER TABLE limits ADD COLUMN unsteady_ratio REAL");
  db.exec("CREATE TEMP TABLE run_gpu(run INTEGER PRIMARY KEY, gpu TEXT NOT NULL)");
  {
    auto gpus = db.prepare("SELECT run, uuid FROM gpus ORDER BY run");
    auto add = db.prepare("INSERT INTO temp.run_gpu VALUES(?, ?)");
    std::int64_t run = -1;
    std::vector<std::string> uuids;
    auto flush = [&] {
      if (run >= 0) add.bind(1, run).bind(2, gpu_key(std::move(uuids))).run();
      uuids.clear();
    };
    while (gpus.step()) {
      if (gpus.integer(0) != run) {
        flush();
        run = gpus.integer(0);
      }
      uuids.push_back(gpus.text(1));
    }
    flush();
  }
  add_host_space_function(db);
  db.exec(R"sql(
DROP INDEX rows_series;
CREATE TEMP TABLE row_key(row INTEGER PRIMARY KEY, old INTEGER NOT NULL, gpu TEXT NOT NULL);
INSERT INTO temp.row_key
  SELECT r.id, r.series, CASE WHEN host_space(s.space) THEN '' ELSE coalesce(g.gpu, '') END
  FROM rows r JOIN series s ON s.id = r.series LEFT JOIN temp.run_gpu g ON g.run = r.run;
)sql" + series_sql("series_v2") +
          R"sql(
INSERT INTO series_v2(experiment, variant, dtype, n, space, copies, library, threads, machine, gpu)
  SELECT s.experiment, s.variant, s.dtype, s.n, s.space, s.copies, s.library, s.threads, s.machine, k.gpu
  FROM (SELECT DISTINCT old, gpu FROM temp.row_key) k JOIN series s ON s.id = k.old
  ORDER BY k.old, k.gpu;
CREATE TEMP TABLE series_map(old INTEGER, gpu TEXT, new INTEGER, PRIMARY KEY(old, gpu)) WITHOUT ROWID;
INSERT INTO temp.series_map
  SELECT s.id, v.gpu, v.id FROM series_v2 v
  JOIN series s USING(experiment, variant, dtype, n, space, copies, library, threads, machine);
UPDATE rows SET series = (SELECT m.new FROM temp.row_key k JOIN temp.series_map m
                          ON m.old = k.old AND m.gpu = k.gpu WHERE k.row = rows.id);
DROP TABLE series;
ALTER TABLE series_v2 RENAME TO series;
DROP TABLE temp.row_key;
DROP TABLE temp.series_map;
DROP TABLE temp.run_gpu;
)sql");
}

// Version 2 to 3: a row's code path (NULL for the rows imported before: not
// known), and rows_series covering it.
void migrate_2_to_3(Connection& db) {
  db.exec("DROP INDEX IF EXISTS rows_series");
  db.exec("ALTER TABLE rows ADD COLUMN path TEXT");
  db.exec(rows_series_sql);
}

// Version 3 to 4: the level each row was held to, and why its limit is
// suspect (NULL for the rows imported before: not known).
void migrate_3_to_4(Connection& db) {
  db.exec("ALTER TABLE rows ADD COLUMN limit_level TEXT");
  db.exec("ALTER TABLE rows ADD COLUMN limit_suspect TEXT");
}

// Version 4 to 5: each row's noise figures and repetitions (results schema
// 5); NULL, and no repetitions, for the rows imported before: history
// judges those by the older rule.
void migrate_4_to_5(Connection& db) {
  for (const char* column :
       {"rel_ci95 REAL", "noise_target REAL", "stopped_by TEXT", "noisy INTEGER"})
    db.exec(fmt::format("ALTER TABLE rows ADD COLUMN {}", column));
  db.exec(R"sql(
CREATE TABLE repetitions(
  row INTEGER PRIMARY KEY REFERENCES rows(id) ON DELETE CASCADE,
  kernel_ms BLOB NOT NULL,
  total_ms BLOB NOT NULL);
)sql");  // as version 5 made it: version 6 adds its passes
}

// Version 5 to 6: each pass's medians of a row measured in passes; NULL for
// the rows imported before (one pass, as far as history knows).
void migrate_5_to_6(Connection& db) {
  db.exec("ALTER TABLE repetitions ADD COLUMN pass_kernel_ms BLOB");
  db.exec("ALTER TABLE repetitions ADD COLUMN pass_total_ms BLOB");
}

// Brings a store of an older schema up to this portalab's, in one
// transaction: all of it or nothing (another portalab doing the same at
// once waits, then finds it done).
void migrate(Connection& db, std::ostream* notes) {
  db.exec("PRAGMA foreign_keys = OFF");  // tables are rebuilt under the rows that refer to them
  db.exec("BEGIN IMMEDIATE");
  std::int64_t from = 0;
  try {
    from = pragma(db, "user_version");
    for (std::int64_t v = from; v < store_schema_version; ++v) {
      if (v == 1) migrate_1_to_2(db);
      if (v == 2) migrate_2_to_3(db);
      if (v == 3) migrate_3_to_4(db);
      if (v == 4) migrate_4_to_5(db);
      if (v == 5) migrate_5_to_6(db);
      throw_if_interrupted();
    }
    if (auto check = db.prepare("PRAGMA foreign_key_check"); check.step())
      throw StoreError(1, fmt::format("{}: upgrading the store from schema version {} broke a "
                                      "reference between its tables; it was left as it was",
                                      db.path(), from));
    db.exec(fmt::format("PRAGMA user_version = {}", store_schema_version));
    db.exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_exec(db.handle(), "PRAGMA foreign_keys = ON", nullptr, nullptr, nullptr);
    throw;
  }
  db.exec("PRAGMA foreign_keys = ON");
  if (notes && from < store_schema_version)
    *notes << fmt::format("{}: upgraded the store from schema version {} to {}\n", db.path(), from,
                          store_schema_version);
}

}  // namespace

std::string store_path(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("PORTALAB_DB")) {
    if (!*env)
      throw StoreError(exit_bad_input,
                       "PORTALAB_DB is set but empty: expected the path of the store (an "
                       "SQLite file); unset it for the default, results/portalab.sqlite");
    return env;
  }
  return "results/portalab.sqlite";
}

std::string repetitions_blob(const std::vector<double>& ms) {
  std::string out(ms.size() * 8, '\0');
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const auto bits = std::bit_cast<std::uint64_t>(ms[i]);
    for (int b = 0; b < 8; ++b) out[8 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return out;
}

std::vector<double> repetitions_of_blob(std::string_view blob) {
  std::vector<double> ms(blob.size() / 8);
  for (std::size_t i = 0; i < ms.size(); ++i) {
    std::uint64_t bits = 0;
    for (int b = 0; b < 8; ++b)
      bits |= std::uint64_t{static_cast<unsigned char>(blob[8 * i + b])} << (8 * b);
    ms[i] = std::bit_cast<double>(bits);
  }
  return ms;
}

std::string run_id_of(const nlohmann::json& provenance) {
  return fmt::format(
      "fnv1a64:{:016x}",
      fnv1a64(provenance.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
}

std::vector<LimitFigure> limit_figures(const nlohmann::json& spaces) {
  std::vector<LimitFigure> out;
  for (const auto& s : spaces) {
    const std::string space = str(s, "space");
    if (space.empty()) continue;
    const bool host = s.is_object() && s.value("host", false);
    auto limit = [&](const std::string& quantity, std::optional<double> v, const char* unit) {
      if (v && *v > 0)
        out.push_back({space, host, quantity, unit, *v, unsteady_ratio(s, quantity, *v)});
    };
    for (const char* q :
         {"memory_gbps", "copy_kernel_gbps", "copy_deep_copy_gbps", "triad_gbps", "read_gbps"})
      limit(q, finite_number(s, q), "GB/s");
    limit("launch_us", finite_number(s, "launch_us"), "us");
    for (const auto& [dtype, v] : obj(s, "gemm_gflops").items())
      if (v.is_number()) limit("gemm_" + dtype + "_gflops", v.get<double>(), "GFLOP/s");
    for (const auto& [kind, t] : obj(s, "transfers").items())
      limit(kind + "_gbps", finite_number(t, "best_gbps"), "GB/s");
  }
  return out;
}

namespace {

// A store is never reached through a link, nor its journal: a link planted
// at either in a shared folder would make an import write into another
// file, a FIFO there would block every reader (support/files.hpp says what
// is there instead).
void check_store_names(const std::string& path) {
  try {
    for (const char* suffix : {"", "-journal", "-wal", "-shm"})
      regular_file_or_nothing(path + suffix);
  } catch (const OutputError& e) {
    throw StoreError(exit_bad_input, e.what());
  }
}

// SQLite opens a path of at most this many bytes, made absolute
// (SQLITE_MAX_PATHNAME of its unix VFS); past it, it says only "unable to
// open database file".
constexpr std::size_t sqlite_max_path = 512;

void check_path_length(const std::string& path) {
  std::error_code ec;
  const std::string absolute = fs::absolute(path, ec).string();
  if (!ec && absolute.size() >= sqlite_max_path)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: a path of {} bytes (absolute); SQLite opens paths of fewer "
                                 "than {}: give a shorter --db",
                                 shown(path), absolute.size(), sqlite_max_path));
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENAMETOOLONG)
    throw StoreError(exit_bad_input, fmt::format("{}: {}: a name in it is longer than the file "
                                                 "system allows; give a shorter --db",
                                                 shown(path), std::strerror(ENAMETOOLONG)));
}

// The tables of the schema: a store of portalab's without one is damaged.
constexpr std::array<const char*, 9> store_tables{
    "runs", "provenance", "gpus", "limits", "rows", "energy", "rank_rows", "series", "repetitions"};

void check_tables(Connection& db) {
  std::vector<std::string> missing;
  auto find = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  for (const char* t : store_tables) {
    find.bind(1, t);
    if (!find.step()) missing.push_back(t);
    find.reset();
  }
  if (!missing.empty())
    throw StoreError(exit_bad_input,
                     fmt::format("{}: a portalab store without its table{} {}: damaged; move it "
                                 "away and import the runs again into a new one",
                                 shown(db.path()), missing.size() > 1 ? "s" : "",
                                 fmt::join(missing, ", ")));
}

// A store whose last import was stopped during its commit holds a hot
// journal: the next open that may write rolls it back. A reader cannot, so
// it does so first where it may write the file, and says so truly where not.
void roll_back_pending(const std::string& path, double wait_s) {
  struct stat st {};
  if (::lstat((path + "-journal").c_str(), &st) != 0 || st.st_size == 0) return;
  std::unique_ptr<Connection> rw;
  try {
    rw = std::make_unique<Connection>(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
                                                SQLITE_OPEN_NOMUTEX);
  } catch (const StoreError&) {
    return;  // the read-only open says why
  }
  if (sqlite3_db_readonly(rw->handle(), "main") == 1) return;
  sqlite3_busy_timeout(rw->handle(), static_cast<int>(std::clamp(wait_s, 0.0, 86400.0) * 1000));
  // Any read of a database with a hot journal rolls the journal back first.
  pragma(*rw, "user_version");
}

}  // namespace

std::unique_ptr<Connection> open_store(const std::string& path, bool write, double wait_s,
                                       std::ostream* notes) {
  if (path.empty())
    throw StoreError(exit_bad_input, "--db '': expected the path of the store, an SQLite file");
  check_path_length(path);
  check_store_names(path);
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (exists && !fs::is_regular_file(path, ec))
    throw StoreError(exit_bad_input,
                     fmt::format("{}: not a file; the store is one SQLite file", path));
  if (!exists && !write)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: no store here: import runs first (`portalab db import "
                                 "RESULTS_FOLDER --db {}`), or give --db or PORTALAB_DB",
                                 shown(path), shown(path)));
  if (exists && !write) roll_back_pending(path, wait_s);
  if (exists && !looks_like_sqlite(path))
    throw StoreError(exit_bad_input,
                     fmt::format("{}: not a portalab store: not an SQLite database; give another "
                                 "--db, or move this file away",
                                 path));
  if (!exists) {
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::exists(parent, ec) && !fs::create_directories(parent, ec) && ec)
      throw StoreError(exit_bad_input,
                       fmt::format("{}: cannot make its folder: {}", path, ec.message()));
  }
  auto db = std::make_unique<Connection>(
      path, SQLITE_OPEN_NOMUTEX |  // one thread uses a connection
                (write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW
                       : SQLITE_OPEN_READONLY));
  sqlite3_busy_timeout(db->handle(), static_cast<int>(std::clamp(wait_s, 0.0, 86400.0) * 1000));
  if (write && sqlite3_db_readonly(db->handle(), "main") == 1)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: the store is read-only here (its permissions); give a "
                                 "writable --db",
                                 path));
  db->exec("PRAGMA foreign_keys = ON");
  // A writer's page cache the size of a large import: a smaller one spills
  // pages to the file mid-transaction, each spill syncing the journal first.
  // (A reader reads each page about once: SQLite's default cache.)
  if (write) db->exec("PRAGMA cache_size = -262144");
  const std::int64_t version = pragma(*db, "user_version");
  const std::int64_t app = pragma(*db, "application_id");
  std::int64_t count = 0;
  {  // finished here: a statement left open would hold a read lock an upgrade waits on
    auto tables = db->prepare("SELECT count(*) FROM sqlite_master");
    if (tables.step()) count = tables.integer(0);
  }
  if (app != application_id && (count > 0 || version != 0))
    throw StoreError(exit_bad_input,
                     fmt::format("{}: an SQLite database, but not a portalab store (none of "
                                 "portalab's schema): give another --db",
                                 path));
  if (version > store_schema_version)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: a store of schema version {}; this portalab reads versions "
                                 "up to {}: use the newer portalab that wrote it",
                                 path, version, store_schema_version));
  if (app == application_id && version < 1)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: a portalab store without a schema version: damaged", path));
  if (app == application_id && version < store_schema_version) {
    if (write) {
      migrate(*db, notes);
    } else {  // a reader upgrades it where it may write it
      check_store_names(path);
      Connection rw(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX);
      if (sqlite3_db_readonly(rw.handle(), "main") == 1)
        throw StoreError(
            exit_bad_input,
            fmt::format("{}: a store of schema version {}, an older portalab's; this one "
                        "reads it once upgraded to version {}, which needs writing it: "
                        "run `portalab db history --db {}` once as a user who may write "
                        "the file and its folder",
                        path, version, store_schema_version, path));
      sqlite3_busy_timeout(rw.handle(), static_cast<int>(std::clamp(wait_s, 0.0, 86400.0) * 1000));
      migrate(rw, notes);
    }
  }
  if (count == 0 && app != application_id) {
    if (!write)
      throw StoreError(exit_bad_input, fmt::format("{}: an empty store: import runs first", path));
    // Made once: another writer may be making it at the same time.
    db->exec("BEGIN IMMEDIATE");
    try {
      if (pragma(*db, "application_id") != application_id) {
        db->exec(schema_sql);
        db->exec(series_sql("series"));
        db->exec(rows_series_sql);
        db->exec(repetitions_sql);
        db->exec(fmt::format("PRAGMA application_id = {}", application_id));
        db->exec(fmt::format("PRAGMA user_version = {}", store_schema_version));
      }
      db->exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
  check_tables(*db);
  return db;
}

void forget_new_store(std::unique_ptr<Connection> db, const std::string& path) {
  std::int64_t runs = 1;
  try {
    auto count = db->prepare("SELECT count(*) FROM runs");
    if (count.step()) runs = count.integer(0);
  } catch (const StoreError&) {
    return;  // not ours to judge: left as it is
  }
  db.reset();
  // Made by this import, which kept nothing: no empty store left behind
  // (unless another import has filled it meanwhile).
  if (runs == 0) {
    ::unlink(path.c_str());
    ::unlink((path + "-journal").c_str());
  }
}

ImportSummary import_runs(Connection& db, const std::vector<std::string>& paths,
                          std::ostream* progress, std::ostream& notes) {
  ImportSummary sum;
  std::vector<RunFiles> runs;
  for (const auto& p : paths) find_runs(p, runs);
  sum.found = static_cast<int>(runs.size());
  // One writer at a time: the write lock is taken at once, and waited for
  // (the busy timeout) where another import holds it.
  db.exec("BEGIN IMMEDIATE");
  try {
    Importer importer(db);
    for (const auto& run : runs) {
      throw_if_interrupted();
      const RunRead r = read_run(run);
      if (r.running) {  // said even with --quiet: a run left out
        ++sum.running;
        notes << fmt::format(
            "skipped {}: a run still writing (its journal {} is locked by the portalab run "
            "writing it); import it again once the run has ended\n",
            shown(run.folder), journal_name);
        continue;
      }
      std::int64_t rows = 0;
      const auto added = importer.add(r.from, r.doc, rows);
      const bool incomplete = r.from == run.journal;
      const std::string what = incomplete
                                   ? " (incomplete: the run did not finish; its journal's rows)"
                                   : "";
      if (added == Importer::Added::already) {
        ++sum.already;
        if (progress) *progress << fmt::format("already in the store: {}\n", shown(r.from));
        continue;
      }
      ++(added == Importer::Added::replaced ? sum.replaced : sum.imported);
      sum.incomplete += incomplete;
      sum.rows += rows;
      if (progress)
        *progress << fmt::format("{} {} ({} rows){}\n",
                                 added == Importer::Added::replaced
                                     ? "imported, replacing the incomplete copy in the store,"
                                     : "imported",
                                 shown(r.from), rows, what);
    }
    throw_if_interrupted();
    db.exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  // A signal during the commit is answered once it ends: the store holds
  // the whole import (a commit is all or nothing), never half a run.
  sum.signal_during_commit = interrupt_signal();
  return sum;
}

std::optional<double> unix_time(const std::string& iso, bool end_of_day) {
  // Digits where digits go, a day of its month, a time of a day: no
  // 2026-13-45 read as 2027-02-14 by timegm.
  const bool date_only = iso.size() == 10;
  if (!date_only && !(iso.size() == 19 || (iso.size() == 20 && iso.back() == 'Z')))
    return std::nullopt;
  for (std::size_t i = 0; i < std::min<std::size_t>(iso.size(), 19); ++i) {
    const char want = i == 4 || i == 7 ? '-' : i == 10 ? 'T' : i == 13 || i == 16 ? ':' : '0';
    const char c = iso[i];
    if (want == '0' ? !(c >= '0' && c <= '9') : c != want) return std::nullopt;
  }
  auto at = [&](std::size_t i, std::size_t n) { return std::stoi(iso.substr(i, n)); };
  const int y = at(0, 4), m = at(5, 2), d = at(8, 2);
  const int hh = date_only ? 0 : at(11, 2), mm = date_only ? 0 : at(14, 2),
            ss = date_only ? 0 : at(17, 2);
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1 || d > days[m - 1] + (m == 2 && leap) || hh > 23 || mm > 59 ||
      ss > 60)
    return std::nullopt;
  const int got = date_only ? 3 : 6;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = m - 1;
  tm.tm_mday = d;
  tm.tm_hour = hh;
  tm.tm_min = mm;
  tm.tm_sec = ss;
  return static_cast<double>(timegm(&tm)) + (got == 3 && end_of_day ? 86400.0 : 0.0);
}

std::string iso8601(double unix_s) {
  const auto t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string default_reference_figures() {
  std::vector<fs::path> candidates{fs::path(PORTALAB_SOURCE_DIR) / "data/reference-figures.csv"};
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    candidates.push_back(self.parent_path().parent_path() /
                         "share/portalab/data/reference-figures.csv");
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c.string();
  return {};
}

}  // namespace portalab::store
