#include "ranks/watchdog.hpp"

#include "deck/deck.hpp"
#include "support/text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace portalab {

Watchdog::Watchdog(double seconds, std::function<void(const std::string&, double)> expire)
    : m_limit(seconds),
      m_expire(std::move(expire)),
      m_last(std::chrono::steady_clock::now()),
      m_where("the start of the run"),
      m_thread([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    const std::lock_guard lock(m_mutex);
    m_done = true;
  }
  m_wake.notify_all();
  m_thread.join();
}

void Watchdog::beat() {
  const std::lock_guard lock(m_mutex);
  m_last = std::chrono::steady_clock::now();
}

void Watchdog::at(const std::string& where) {
  const std::lock_guard lock(m_mutex);
  m_last = std::chrono::steady_clock::now();
  m_where = where;
}

void Watchdog::watch() {
  std::unique_lock lock(m_mutex);
  while (!m_done) {
    const auto deadline = m_last +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(m_limit);
    if (m_wake.wait_until(lock, deadline, [&] { return m_done; })) return;
    if (std::chrono::steady_clock::now() >= m_last + m_limit) {
      const std::string where = m_where;
      lock.unlock();
      m_expire(where, m_limit.count());
      return;
    }
  }
}

double seconds_from_environment(const char* name, double fallback, std::string_view zero_means) {
  const char* text = std::getenv(name);
  if (!text) return fallback;  // set but empty: refused, as any other mistake
  errno = 0;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(s) || s < 0)
    throw InputError(
        fmt::format("environment variable {}={}: expected seconds, a number >= 0 (0 {}); unset "
                    "it for the default",
                    name, shown(text), zero_means));
  // Months: no limit (a time point that far would overflow the clock).
  return s > 1e7 ? 0 : s;
}

double watchdog_seconds(std::optional<int> from_deck) {
  return seconds_from_environment(
      "PORTALAB_WATCHDOG_S", from_deck ? *from_deck : default_watchdog_s, "turns the watchdog off");
}

}  // namespace portalab
