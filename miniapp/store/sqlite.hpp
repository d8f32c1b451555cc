// A thin RAII layer over SQLite's C API for the results store: a
// connection, prepared statements, and errors that say what the store is.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace portalab::store {

// What went wrong with the store, and the exit status it asks for: 2 bad
// input (not a store, a newer schema, read-only), 1 the store could not be
// written (locked, disk full, I/O).
class StoreError : public std::runtime_error {
 public:
  StoreError(int exit_code, const std::string& what) : std::runtime_error(what), code(exit_code) {}
  int code;
};

class Statement;

class Connection {
 public:
  Connection(const std::string& path, int flags);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void exec(const std::string& sql);
  Statement prepare(const std::string& sql);
  std::int64_t last_id() const { return sqlite3_last_insert_rowid(m_db); }
  sqlite3* handle() const { return m_db; }
  const std::string& path() const { return m_path; }
  // Throws the StoreError an SQLite result code means, naming the store.
  [[noreturn]] void fail(int rc, const std::string& doing) const;

 private:
  sqlite3* m_db = nullptr;
  std::string m_path;
};

class Statement {
 public:
  Statement(Connection& c, const std::string& sql);
  ~Statement();
  Statement(Statement&& o) noexcept : m_c(o.m_c), m_s(o.m_s) { o.m_s = nullptr; }
  Statement(const Statement&) = delete;

  Statement& bind(int i, std::int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, const std::string& v);
  Statement& bind(int i, const char* v) { return bind(i, std::string(v)); }
  Statement& bind(int i, const std::optional<double>& v);
  Statement& bind_null(int i);
  Statement& bind_blob(int i, std::string_view bytes);
  // true while a row is there.
  bool step();
  // Runs it to the end and makes it ready for new bindings.
  void run();
  void reset();
  std::int64_t integer(int col) const { return sqlite3_column_int64(m_s, col); }
  double real(int col) const { return sqlite3_column_double(m_s, col); }
  std::optional<double> maybe_real(int col) const;
  std::string text(int col) const;
  std::optional<std::string> maybe_text(int col) const;  // none: NULL
  // A BLOB's bytes (empty for NULL), valid until the next step or reset.
  std::string_view blob(int col) const;
  bool null(int col) const { return sqlite3_column_type(m_s, col) == SQLITE_NULL; }

 private:
  Connection& m_c;
  sqlite3_stmt* m_s = nullptr;
};

}  // namespace portalab::store
