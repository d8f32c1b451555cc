#include "store/sqlite.hpp"

#include "support/text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace portalab::store {

namespace {

constexpr int exit_bad_input = 2;
constexpr int exit_not_written = 1;

}  // namespace

Connection::Connection(const std::string& path, int flags) : m_path(path) {
  const int rc = sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    sqlite3_close(m_db);
    m_db = nullptr;
    throw StoreError(exit_bad_input,
                     fmt::format("{}: cannot open the store: {}", shown(path), why));
  }
  sqlite3_extended_result_codes(m_db, 1);
}

Connection::~Connection() { sqlite3_close_v2(m_db); }

void Connection::fail(int rc, const std::string& doing) const {
  const std::string detail = sqlite3_errmsg(m_db);
  if (rc == SQLITE_READONLY_ROLLBACK)
    throw StoreError(exit_bad_input,
                     fmt::format("{}: an import stopped during its commit left a rollback "
                                 "pending ({}-journal, a hot journal), and this user may not "
                                 "write the store to roll it back while {}: run `portalab db "
                                 "history --db {}` once as a user who may write the file and its "
                                 "folder",
                                 shown(m_path), shown(m_path), doing, shown(m_path)));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw StoreError(exit_not_written,
                       fmt::format("{}: the store is locked by another writer (another `portalab "
                                   "db import`?) while {}: try again when it ends, or wait longer "
                                   "(--wait SECONDS)",
                                   shown(m_path), doing));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      throw StoreError(exit_bad_input,
                       fmt::format("{}: not a portalab store: not an SQLite database, or a damaged "
                                   "one ({}) while {}; give another --db, or move this file away",
                                   shown(m_path), detail, doing));
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
    case SQLITE_AUTH:
      throw StoreError(exit_bad_input,
                       fmt::format("{}: cannot write the store ({}) while {}: the file or its "
                                   "folder is read-only here; give a writable --db",
                                   shown(m_path), detail, doing));
    case SQLITE_FULL:
      throw StoreError(exit_not_written,
                       fmt::format("{}: the disk is full while {}: nothing of this import was "
                                   "kept, the store holds what it held before; free space and "
                                   "import again",
                                   shown(m_path), doing));
    case SQLITE_IOERR:
      throw StoreError(exit_not_written,
                       fmt::format("{}: an I/O error ({}) while {}: nothing of this import was "
                                   "kept, the store holds what it held before",
                                   shown(m_path), detail, doing));
    default:
      throw StoreError(exit_not_written,
                       fmt::format("{}: {} while {}", shown(m_path), detail, doing));
  }
}

void Connection::exec(const std::string& sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  if (rc != SQLITE_OK) fail(rc, fmt::format("running '{}'", sql.substr(0, 60)));
}

Statement Connection::prepare(const std::string& sql) { return Statement(*this, sql); }

Statement::Statement(Connection& c, const std::string& sql) : m_c(c) {
  const int rc = sqlite3_prepare_v2(c.handle(), sql.c_str(), -1, &m_s, nullptr);
  if (rc != SQLITE_OK) c.fail(rc, fmt::format("reading the store ('{}')", sql.substr(0, 60)));
}

Statement::~Statement() { sqlite3_finalize(m_s); }

Statement& Statement::bind(int i, std::int64_t v) {
  sqlite3_bind_int64(m_s, i, v);
  return *this;
}

Statement& Statement::bind(int i, double v) {
  // NaN would be stored as NULL anyway; infinities are no measurement.
  if (std::isfinite(v))
    sqlite3_bind_double(m_s, i, v);
  else
    sqlite3_bind_null(m_s, i);
  return *this;
}

Statement& Statement::bind(int i, const std::string& v) {
  sqlite3_bind_text(m_s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int i, const std::optional<double>& v) {
  return v ? bind(i, *v) : bind_null(i);
}

Statement& Statement::bind_null(int i) {
  sqlite3_bind_null(m_s, i);
  return *this;
}

Statement& Statement::bind_blob(int i, std::string_view bytes) {
  sqlite3_bind_blob64(m_s, i, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(m_s);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  m_c.fail(rc, "writing or reading the store");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(m_s);
  sqlite3_clear_bindings(m_s);
}

std::optional<double> Statement::maybe_real(int col) const {
  // One column call, not two (type, then value): history reads hundreds of
  // thousands of these. The value is "unprotected" (no mutex held), which
  // is all a connection opened NOMUTEX and used by one thread has anyway.
  sqlite3_value* v = sqlite3_column_value(m_s, col);
  if (sqlite3_value_type(v) == SQLITE_NULL) return std::nullopt;
  return sqlite3_value_double(v);
}

std::string Statement::text(int col) const { return maybe_text(col).value_or(std::string()); }

std::optional<std::string> Statement::maybe_text(int col) const {
  sqlite3_value* v = sqlite3_column_value(m_s, col);  // one column call: maybe_real says why
  if (sqlite3_value_type(v) == SQLITE_NULL) return std::nullopt;
  const auto* p = sqlite3_value_text(v);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<std::size_t>(sqlite3_value_bytes(v)))
           : std::string();
}

std::string_view Statement::blob(int col) const {
  const void* p = sqlite3_column_blob(m_s, col);
  return p ? std::string_view(static_cast<const char*>(p),
                              static_cast<std::size_t>(sqlite3_column_bytes(m_s, col)))
           : std::string_view();
}

}  // namespace portalab::store
