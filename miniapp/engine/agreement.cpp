#include "engine/agreement.hpp"

#include "deck/deck.hpp"
#include "limits/calibrate.hpp"
#include "support/console.hpp"
#include "support/files.hpp"
#include "platform/space_names.hpp"
#include "ranks/comm.hpp"
#include "ranks/placement.hpp"
#include "results/provenance.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace portalab {

void Startup::fail(int code, const std::string& why) {
  if (m_state.code == 0) {
    m_state.code = code;
    m_state.error = why;
  }
}

void Startup::check(const std::function<void()>& checks) {
  if (m_state.code != 0) return;
  try {
    checks();
  } catch (const InputError& e) {
    fail(exit_bad_input, e.what());
  } catch (const OutputError& e) {
    fail(exit_bad_input, e.what());
  }
}

void Startup::given(const std::string& what) {
  m_state.given += (m_state.given.empty() ? "" : ", ") + what;
}

int Startup::agree(const std::vector<std::string>& plan) {
  if (m_agreed) throw std::logic_error("the start-up agreement met twice");
  check([] { startup_timeout_seconds(); });
  if (m_state.code == 0) {
    m_state.plan = {"portalab: " + build_commit(),
                    fmt::format("spaces compiled: {}", fmt::join(enabled_space_names(), ","))};
    m_state.plan.insert(m_state.plan.end(), plan.begin(), plan.end());
  }
  m_agreed = true;  // an error from here on is no longer this rank's alone to say
  const StartupVerdict v = agree_at_startup(world(), m_state);
  const Comm& all = world();
  if (v.code == 0) {
    // Placement is part of it: each rank's share of its node's CPUs, taken
    // before Kokkos starts its threads (ranks/placement.hpp).
    // The GPU's NUMA node matters where ranks split a node.
    const int code = place_ranks(
        all, all.size() > 1 ? device_bus_id_before_kokkos(given_placement().device_chosen) : "");
    if (code != 0) all.barrier();  // said by rank 0 before any rank exits
    return code;
  }
  if (!v.alike)
    print_to(stderr, "error: [rank {} of {}] {}\n", all.rank(), all.size(), v.message);
  else if (all.rank() == 0)
    print_to(stderr, "error: {}\n", v.message);
  // Every rank has said it before any exits: a launcher ends the others
  // at the first exit that is not 0.
  all.barrier();
  return v.code;
}

Startup& startup() {
  static Startup s;
  return s;
}

void checked_on_every_rank(const std::function<void()>& checks) { startup().check(checks); }

std::string host_stores_line() {
  const auto forced = host_stores_forced();
  return fmt::format("host stores: {}", !forced   ? "as calibrated"
                                        : *forced ? "streaming (PORTALAB_STREAMING_STORES=1)"
                                                  : "plain (PORTALAB_STREAMING_STORES=0)");
}

int unshared_error(int code, const std::string& what) {
  if (!startup().agreed()) {
    startup().fail(code, what);
    return startup().agree({});
  }
  if (world().size() > 1) {
    print_to(stderr, "error on rank {}: {}; ending every rank\n", world().rank(), what);
    abort_world(code);
  }
  print_to(stderr, "error: {}\n", what);
  return code;
}

int agreed_exit(int code) {
  const Comm& all = world();
  if (all.size() == 1) return code;
  return std::stoi(all.broadcast(std::to_string(code)));
}

}  // namespace portalab
