#include "engine/session.hpp"

#include "deck/deck_search.hpp"
#include "deck/kokkos_options.hpp"
#include "engine/agreement.hpp"
#include "engine/dry_run.hpp"
#include "engine/expand.hpp"
#include "engine/runner.hpp"
#include "experiment/registry.hpp"
#include "output/console.hpp"
#include "support/console.hpp"
#include "support/interrupt.hpp"
#include "platform/spaces.hpp"
#include "support/text.hpp"
#include "platform/tool_guard.hpp"
#include "ranks/comm.hpp"
#include "ranks/placement.hpp"
#include "ranks/watchdog.hpp"
#include "results/analysis.hpp"
#include "results/provenance.hpp"
#include "results/result_files.hpp"
#include "results/schema_version.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>

namespace portalab {

namespace {

// How the variants of a case take turns at repetitions, as the provenance
// records it: shuffled with a seed (given, or drawn), or in order and why.
// Under a profiler that records NVTX ranges (Nsight Systems loads its
// injection library so), in order unless a seed is given: a timeline, and
// scripts/dev/nsys_check.py, read one variant's measurement at a time.
nlohmann::json repetition_order(const RepetitionOrder& asked) {
  if (asked.in_order) return {{"order", "in order"}, {"why", "--in-order"}};
  if (!asked.seed && (std::getenv("NVTX_INJECTION64_PATH") || std::getenv("NVTX_INJECTION32_PATH")))
    return {{"order", "in order"},
            {"why", "a profiler records the NVTX ranges; --seed N interleaves anyway"}};
  const std::uint64_t seed = asked.seed.value_or((std::uint64_t{std::random_device{}()} << 32) ^
                                                 std::random_device{}());
  return {{"order", "shuffled"}, {"seed", seed}, {"seed_given", asked.seed.has_value()}};
}

// The spaces a deck's plans name, in the order compiled (the order they run).
std::vector<std::string> spaces_used(const Deck& deck) {
  std::vector<std::string> used;
  for (const auto& space : enabled_space_names())
    if (std::any_of(deck.plans.begin(), deck.plans.end(), [&](const ExperimentPlan& p) {
          return std::find(p.spaces.begin(), p.spaces.end(), space) != p.spaces.end();
        }))
      used.push_back(space);
  return used;
}

// Kokkos' arguments, with Threads on one thread where the run measures
// Serial without Threads (serial_alone_threads_option says why), said once.
struct KokkosArgs {
  std::vector<char*> argv;
  std::string added;
  std::vector<std::string> given;  // Kokkos' arguments as given, and the one added
  int argc = 0;
  KokkosArgs(int given_argc, char** given_argv, const std::vector<std::string>& spaces, bool root)
      : argv(given_argv, given_argv + given_argc), given(given_argv + 1, given_argv + given_argc) {
    // Every rank asks its node's rank count (a collective) before its own
    // --kokkos-* options decide whether to use it: ranks may be given other
    // ones, and a rank that skipped it left the others waiting in it.
    const int local_ranks = world().size() > 1 ? rank_place().local_size : 1;
    added = serial_alone_threads_option(spaces, {given_argv + 1, given_argv + given_argc});
    if (!added.empty()) {
      argv.push_back(added.data());
      // Said where it overrides a count (Kokkos' default is one thread).
      if (const char* env = std::getenv("KOKKOS_NUM_THREADS"); root && env)
        print_to(stderr,
                 "Threads: one thread, not KOKKOS_NUM_THREADS={}: Serial is measured "
                 "without Threads, whose idle workers would spin beside it "
                 "(--kokkos-num-threads sets it)\n",
                 env);
    } else if (local_ranks > 1) {
      added = threads_per_rank_option(local_ranks, {given_argv + 1, given_argv + given_argc});
      if (!added.empty()) {
        argv.push_back(added.data());
        if (root)
          print_to(stderr,
                   "host threads: {} a rank, this node's CPUs over its {} ranks ({}; "
                   "OMP_NUM_THREADS sets them too)\n",
                   added.substr(added.find('=') + 1), local_ranks, added);
      }
    }
    if (!added.empty()) given.push_back(added);
    argc = static_cast<int>(argv.size());
    argv.push_back(nullptr);
  }
};

Calibration read_calibration(const std::string& path) {
  // Bounded before parsing, as a deck is: a calibration file is a few kB.
  constexpr std::size_t max_bytes = 16 << 20;
  const std::string text = read_bounded(path, max_bytes, "a calibration file");
  if (text.size() > max_bytes)
    throw InputError(
        fmt::format("{}: more than {} bytes; not a calibration file", shown(path), max_bytes));
  check_json_nesting(text, path, 64);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not JSON: {}", shown(path), shown(e.what(), 1000)));
  }
  // Files before schema_version (1) read as they always did; a newer one
  // may hold what this portalab would misread.
  if (j.is_object() && j.contains("schema_version") &&
      !(j["schema_version"].is_number_integer() &&
        j["schema_version"].get<int>() <= schema_version))
    throw InputError(fmt::format(
        "{}: a calibration file of schema_version {}; this portalab reads versions up to {}: "
        "read it with the portalab that wrote it, or calibrate again",
        shown(path),
        shown(j["schema_version"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
        schema_version));
  // A file written by `portalab calibrate` holds it under "calibration".
  return calibration_from_json(j.contains("calibration") ? j["calibration"] : j, path);
}

// --energy over the deck's key.
bool energy_on(const RunRequest& request, const Deck& deck) {
  return request.energy ? *request.energy == "on" : deck.energy;
}

// Every rank's place and device, for rank 0's provenance and rows; with
// `energy`, what its meters are (each GPU's power limit, clocks, ...).
nlohmann::json gather_rank_places(const EnergyMeters* energy = nullptr) {
  nlohmann::json mine = rank_provenance();
  if (energy) mine["energy"] = energy->describe();
  const auto parts = world().gather(mine.dump());
  nlohmann::json all = nlohmann::json::array();
  for (const auto& p : parts) all.push_back(nlohmann::json::parse(p));
  return all;
}

// A calibration that did not end, on every rank alike: a signal that some
// rank received (signal), during the step named (rank 0's), or the failures
// of some ranks (why: each names its rank and what failed).
struct CalibrationStopped : std::runtime_error {
  CalibrationStopped(int sig, const std::string& why, std::string step)
      : std::runtime_error(sig != 0 ? "interrupted by " + signal_name(sig) : why),
        signal(sig),
        during(std::move(step)) {}
  int signal;
  std::string during;
  int exit_code() const { return signal != 0 ? 128 + signal : exit_unexpected; }
  // "calibration interrupted by SIGTERM during Serial: ...; <kept>"
  std::string said(const std::string& kept) const {
    return fmt::format("{}calibration {}{}{}", signal != 0 ? "" : "error: ",
                       signal != 0 ? what() : fmt::format("failed: {}", what()),
                       signal == 0 || during.empty() ? "" : " (during " + during + ")",
                       kept.empty() ? "" : "; " + kept);
  }
};

// Each rank measures the limits of its own spaces (its own GPU; host cores
// shared as the run shares them), then all of them the links between them.
// A rank's calibration that failed, or a signal any rank received, is
// every rank's at the gate after it (calibrate itself has no collective):
// each rank throws alike, CalibrationStopped, before the links' collectives.
Calibration calibrate_everywhere(const std::vector<std::string>& spaces, bool quick) {
  const Comm& all = world();
  const bool root = all.rank() == 0;
  CalibrationOptions copt;
  copt.quick = quick;
  copt.progress = root ? &std::cerr : nullptr;
  std::string during;
  copt.step = &during;
  Calibration cal;
  std::string error;
  try {
    // For the tests: PORTALAB_FAULT=calibrate:R fails rank R's calibration.
    if (const char* fault = std::getenv("PORTALAB_FAULT");
        fault && std::string_view(fault) == fmt::format("calibrate:{}", all.rank()))
      throw std::runtime_error("fault injected (PORTALAB_FAULT)");
    cal = calibrate(spaces, copt);
  } catch (const Interrupted&) {  // interrupt_signal() carries it to the gate
  } catch (const std::exception& e) {
    error = e.what();
  }
  const GateState gate = all.gate(error.empty(), interrupt_signal());
  if (gate.signal != 0 || !gate.all_ok) {
    const auto errors = all.gather(error);
    std::string why;
    for (std::size_t r = 0; r < errors.size(); ++r)
      if (!errors[r].empty())
        why += fmt::format("{}{}{}", why.empty() ? "" : "; ",
                           all.size() > 1 ? fmt::format("rank {}: ", r) : std::string(), errors[r]);
    throw CalibrationStopped(gate.signal, why, all.broadcast(during));
  }
  cal.links = calibrate_links(all, spaces, copt);
  return cal;
}

// What this build and machine allow the --kokkos-* options and variables.
KokkosOptionLimits kokkos_option_limits(const std::vector<char*>& kokkos_args) {
  KokkosOptionLimits limits;
  limits.max_threads = kokkos_thread_limit();
  const auto compiled = enabled_space_names();
  auto has = [&](const char* space) {
    return std::find(compiled.begin(), compiled.end(), space) != compiled.end();
  };
  limits.openmp = has("OpenMP");
  limits.host_threads = has("OpenMP") || has("Threads") || has("HPX");
  limits.device_space = std::any_of(compiled.begin(), compiled.end(),
                                    [](const std::string& s) { return !is_host_space(s); });
  // The device runtime is asked only where a device is chosen.
  if (limits.device_space &&
      (std::getenv("KOKKOS_DEVICE_ID") || std::getenv("KOKKOS_VISIBLE_DEVICES") ||
       std::any_of(kokkos_args.begin() + 1, kokkos_args.end() - 1, [](const char* a) {
         return std::string_view(a).rfind("--kokkos-device-id", 0) == 0;
       })))
    limits.device_count = visible_device_count();
  return limits;
}

// Once Kokkos started: its OpenMP threads placed in the share the agreement
// gave this rank (ranks/placement.hpp), what was chosen said once (`say`);
// exit 2 on every rank where the user's own lists put two ranks' threads on
// the same CPUs.
int place_threads(bool say) {
  const std::string line = place_host_threads();
  if (say && world().rank() == 0 && !line.empty()) print_to(stderr, "{}\n", line);
  const int code = check_thread_overlap(world());
  if (code != 0) world().barrier();  // said by rank 0 before any rank exits
  return code;
}

}  // namespace

Session::Session(RunRequest request, int& kokkos_argc, char** kokkos_argv)
    : m_request(std::move(request)), m_kokkos_argc(kokkos_argc), m_kokkos_argv(kokkos_argv) {}

int Session::run() {
  if (const int code = agree()) return code;
  if (m_request.dry) return dry_run();
  const bool root = world().rank() == 0;
  install_interrupt_handlers();
  KokkosArgs args(m_kokkos_argc, m_kokkos_argv, m_spaces, root);
  const auto start = std::chrono::steady_clock::now();
  Kokkos::ScopeGuard kokkos(args.argc, args.argv.data());
  guard_kokkos_tool();  // what a loaded tool relies on
  if (const int code = place_threads(root)) return code;
  const double init_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  set_up(init_ms, args.given);
  try {
    set_limits();
  } catch (const CalibrationStopped& e) {  // on every rank alike
    if (root)
      print_to(stderr, "{}\n",
               e.said(fmt::format("no row was measured{}",
                                  m_request.out ? fmt::format(" and nothing was written in {}",
                                                              shown(*m_request.out))
                                                : std::string())));
    return agreed_exit(e.exit_code());
  }
  // Rank 0 alone prints and writes; the others measure.
  m_options.out_dir = root ? m_request.out : std::nullopt;
  m_options.limits = m_limits ? &*m_limits : nullptr;
  m_options.tables = root ? &std::cout : nullptr;
  m_options.progress = root ? &std::cerr : nullptr;
  m_options.energy = m_meters ? &*m_meters : nullptr;
  const auto summary = run_deck(m_entries, m_options, m_provenance);
  return end(summary);
}

int Session::agree() {
  // Everything about the input is checked before Kokkos starts or allocates.
  const Comm& all = world();
  const bool root = all.rank() == 0;
  const auto& out = m_request.out;
  const bool dry = m_request.dry;
  std::vector<std::string> plan;  // what the ranks agree on before any of them starts
  checked_on_every_rank([&] {
    const std::string stores = host_stores_line();  // a bad PORTALAB_STREAMING_STORES, now
    const std::string deck_path = find_deck(m_request.deck, deck_folders(executable_path()));
    startup().given("deck " + std::filesystem::absolute(deck_path).lexically_normal().string());
    m_deck = load_deck(deck_path, catalog(), m_request.overrides);
    m_spaces = spaces_used(m_deck);
    m_options.watchdog_s = watchdog_seconds(m_deck.watchdog_s);
    if (m_request.calibration) m_limits = read_calibration(*m_request.calibration);
    // A dry run measures and writes nothing: --out is left alone.
    if (out && root && !dry) check_output_dir(*out);  // before anything is measured
    plan = {dry ? "command: run --dry-run" : "command: run",
            fmt::format("spaces: {}", fmt::join(m_spaces, ",")),
            m_limits ? "limits: " + content_hash(to_json(*m_limits).dump())
                     : "calibrate: " + m_deck.calibrate,
            fmt::format("energy: {}", energy_on(m_request, m_deck) ? "on" : "off"),
            stores,
            fmt::format("order: {}", m_request.order.in_order ? "in order" : "shuffled")};
    m_entries = expand(m_deck, global_registry(), all.size());
    for (auto& line : entry_lines(m_entries)) plan.push_back(std::move(line));
  });
  if (const int code = startup().agree(plan)) return code;
  if (dry && out && root)
    print_to(stderr, "warning: --out {}: a dry run writes nothing; ignored\n", shown(*out));
  return 0;
}

// `portalab run --dry-run`: the entries, their bytes and estimated times,
// from the limits given or from a quick calibration; nothing runs.
int Session::dry_run() {
  const Deck& deck = m_deck;
  std::optional<Calibration>& limits = m_limits;
  KokkosArgs args(m_kokkos_argc, m_kokkos_argv, m_spaces, world().rank() == 0);
  Kokkos::ScopeGuard kokkos(args.argc, args.argv.data());
  guard_kokkos_tool();  // what a loaded tool relies on
  if (const int code = place_threads(false)) return code;
  const bool given = limits.has_value();
  if (!limits) {
    if (world().rank() == 0)
      print_to(stderr,
               "dry run: a quick calibration of {} for the estimates (--limits FILE "
               "takes them from `portalab calibrate --out FILE`)\n",
               fmt::join(m_spaces, ", "));
    CalibrationOptions copt;
    copt.quick = true;
    copt.progress = world().rank() == 0 ? &std::cerr : nullptr;
    limits = calibrate(m_spaces, copt);
  }
  const int ranks = world().size();
  std::cout << format_plan(deck.path,
                           plan_entries(m_entries, {&*limits, /*ask_spaces=*/true, ranks}));
  if (deck.calibrate != "none")
    print_to(stdout, "before them, without --calibration, the run calibrates ({}){}\n",
             deck.calibrate,
             given ? ""
                   : fmt::format(": the quick calibration here took {}",
                                 format_duration(limits->seconds * 1e3)));
  return 0;
}

void Session::set_up(double init_ms, const std::vector<std::string>& kokkos_given) {
  const Comm& all = world();
  const bool root = all.rank() == 0;
  const Deck& deck = m_deck;
  auto& provenance = m_provenance;
  provenance = collect_provenance(&deck, m_request.command);
  provenance["kokkos_initialize_ms"] = init_ms;
  // --energy over the deck's key; off: NVML is never loaded.
  auto& meters = m_meters;
  if (energy_on(m_request, deck))
    meters = EnergyMeters::open(rank_provenance().value("device", nlohmann::json()));
  // The order of the variants' repetitions: rank 0's, on every rank.
  nlohmann::json order = all.rank() == 0 ? repetition_order(m_request.order) : nlohmann::json();
  if (all.size() > 1) order = nlohmann::json::parse(all.broadcast(order.dump()));
  if (order["order"] == "shuffled") m_options.order_seed = order["seed"].get<std::uint64_t>();
  provenance["repetition_order"] = order;
  const nlohmann::json places = gather_rank_places(meters ? &*meters : nullptr);
  m_options.rank_places = places;
  provenance["ranks"] = places;
  provenance["energy"] = meters ? meters->describe() : nlohmann::json{{"off", true}};
  const std::size_t entries = m_entries.size();
  if (root)
    print_to(stderr,
             "portalab {} | deck {} | {} entries | spaces {} | {} | Kokkos initialised "
             "in {:.1f} ms\n",
             build_commit(), shown(deck.path), entries, fmt::join(m_spaces, ","),
             all.size() > 1 ? fmt::format("{} ranks (MPI)", all.size()) : std::string("1 rank"),
             init_ms);

  if (const auto w = threads_affinity_warning(); root && !w.empty())
    print_to(stderr, "warning: {}\n", w);
  if (const auto w = threads_default_warning(m_spaces, kokkos_given); root && !w.empty())
    print_to(stderr, "warning: {}\n", w);
  if (const auto w = serial_beside_threads_warning(m_spaces); root && !w.empty())
    print_to(stderr, "warning: {}\n", w);
  if (root)
    print_to(stderr, "{}\n",
             m_options.order_seed
                 ? fmt::format("order: the variants of a case take turns at repetitions, "
                               "shuffled with seed {} (--seed {} repeats it)",
                               *m_options.order_seed, *m_options.order_seed)
                 : fmt::format("order: each variant's repetitions in one block ({})",
                               order["why"].get<std::string>()));
  if (root)
    print_to(stderr, "energy: {}\n",
             meters ? meters->summary()
                    : std::string("off (--energy off, or the deck's energy key)"));
}

void Session::set_limits() {
  const Comm& all = world();
  const bool root = all.rank() == 0;
  const Deck& deck = m_deck;
  auto& limits = m_limits;
  auto& provenance = m_provenance;
  const auto& calibration_path = m_request.calibration;
  if (!limits && deck.calibrate != "none") {
    const auto& used = m_spaces;
    if (root)
      print_to(stderr, "calibrate: measuring the limits of {} ({})\n", fmt::join(used, ", "),
               deck.calibrate);
    limits = calibrate_everywhere(used, deck.calibrate == "quick");
  }
  if (limits) {
    provenance["calibration"] = to_json(*limits);
    if (calibration_path) provenance["calibration"]["file"] = *calibration_path;
    // Each rank measured its own GPU: its limits beside its place, for
    // `portalab db fleet` (the run's calibration is rank 0's).
    if (!calibration_path && all.size() > 1) {
      const auto parts = all.gather(to_json(*limits).dump());
      for (std::size_t k = 0; k < parts.size() && k < provenance["ranks"].size(); ++k)
        provenance["ranks"][k]["calibration"] = nlohmann::json::parse(parts[k]);
    }
    if (root) ConsolePrinter(&std::cerr, &std::cout).limits(*limits);
  }
  // Plain or streaming stores for each host space's loops beyond the cache,
  // as calibrated (here or in the file): the policy every row's kernels get.
  m_options.host_policies = host_policies(limits ? &*limits : nullptr);
  provenance["host_stores"] = m_options.host_policies.described;
  if (root)
    for (const auto& [space, stores] : provenance["host_stores"].items())
      print_to(stderr, "stores: {} {} in loops, {} in copies{}{} ({})\n", space,
               stores["stores"].get<std::string>(),
               stores["copy_stores"] == "streaming" ? "streaming" : "memcpy",
               stores["from_bytes"].is_null()
                   ? std::string()
                   : fmt::format(", streaming beyond {:.0f} MB",
                                 stores["from_bytes"].get<double>() / 1e6),
               stores["dot_reads"] == "chain" ? "; float64 dot in one chain beyond the cache" : "",
               stores["why"].get<std::string>());
}

int Session::end(const RunSummary& summary) {
  return agreed_exit(world().rank() == 0 ? exit_status(summary) : 0);
}

void check_kokkos_arguments(const std::vector<char*>& kokkos_args) {
  const bool root = world().rank() == 0;
  // Kokkos aborts, or crashes, on options it cannot use, and ignores those
  // that cannot apply: checked first.
  std::vector<std::string> kokkos_warnings;
  checked_on_every_rank([&] {
    kokkos_warnings = check_kokkos_options(
        {kokkos_args.begin() + 1, kokkos_args.end() - 1},
        [](const char* name) { return std::getenv(name); }, kokkos_option_limits(kokkos_args));
  });
  for (const auto& warning : kokkos_warnings)
    if (root) print_to(stderr, "warning: {}\n", warning);
  // A tool Kokkos could not load, or that is none, would be run without.
  checked_on_every_rank([&] {
    check_kokkos_tools(kokkos_tools_requested({kokkos_args.begin() + 1, kokkos_args.end() - 1},
                                              [](const char* name) { return std::getenv(name); }));
  });
}

int calibrate_session(const CalibrateRequest& request, int& kokkos_argc, char** kokkos_argv) {
  const auto& out = request.out;
  const auto& given = request.spaces;
  const bool quick = request.quick, energy = request.energy;
  const auto& command = request.command;
  // The rule of `run --spaces` and of a deck's spaces.
  std::vector<std::string> spaces;
  const bool root = world().rank() == 0;
  std::string stores;
  checked_on_every_rank([&] {
    spaces = given.empty() ? given : spaces_option(given, catalog());
    if (out && root) check_output_file(*out);  // before 30 s of measuring
    stores = host_stores_line();
  });
  if (const int code = startup().agree(
          {"command: calibrate", fmt::format("spaces: {}", fmt::join(spaces, ",")),
           fmt::format("quick: {}", quick), fmt::format("energy: {}", energy), stores}))
    return code;
  install_interrupt_handlers();  // a signal stops at the next step, on every rank
  KokkosArgs args(kokkos_argc, kokkos_argv, spaces, root);
  Kokkos::ScopeGuard kokkos(args.argc, args.argv.data());
  guard_kokkos_tool();  // what a loaded tool relies on
  if (const int code = place_threads(root)) return code;
  if (const auto w = threads_affinity_warning(); root && !w.empty())
    print_to(stderr, "warning: {}\n", w);
  if (const auto w = threads_default_warning(spaces, args.given); root && !w.empty())
    print_to(stderr, "warning: {}\n", w);
  if (const auto w = serial_beside_threads_warning(spaces); root && !w.empty())
    print_to(stderr, "warning: {}\n", w);
  if (root)
    print_to(stderr, "calibrate: {} measurement of {}{}\n", quick ? "quick" : "full",
             spaces.empty() ? "every space" : fmt::format("{}", fmt::join(spaces, ", ")),
             world().size() > 1
                 ? fmt::format(" on {} ranks, and the links between them", world().size())
                 : std::string());
  Calibration cal;
  try {
    cal = calibrate_everywhere(spaces, quick);
  } catch (const CalibrationStopped& e) {
    // A calibration file is written whole or not at all.
    if (root)
      print_to(stderr, "{}\n",
               e.said(out ? fmt::format("no limits kept: {} was not written", shown(*out))
                          : "no limits kept"));
    return agreed_exit(e.exit_code());
  }
  // Every rank, before rank 0 goes on alone: where each rank ran and what it
  // measured are gathered (collectives; rank 0 alone in one would wait for
  // the others forever).
  const nlohmann::json places = gather_rank_places();
  const auto parts = world().size() > 1 && out ? world().gather(to_json(cal).dump())
                                               : std::vector<std::string>{};
  if (!root) return agreed_exit(0);
  ConsolePrinter(&std::cerr, &std::cout).limits(cal);
  if (out) {
    nlohmann::json doc{{"schema_version", schema_version},
                       {"provenance", collect_provenance(nullptr, command)},
                       {"calibration", to_json(cal)}};
    doc["provenance"]["ranks"] = places;
    // Each rank measured its own GPU: its limits beside its place, as a
    // run's provenance has them (the file's calibration is rank 0's).
    for (std::size_t k = 0; k < parts.size() && k < places.size(); ++k)
      doc["provenance"]["ranks"][k]["calibration"] = nlohmann::json::parse(parts[k]);
    // What bounds the limits measured: each GPU's power limit, clocks, ECC.
    doc["provenance"]["energy"] =
        energy ? EnergyMeters::open(places[0].value("device", nlohmann::json())).describe()
               : nlohmann::json{{"off", true}};
    try {
      write_file_atomically(
          *out, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } catch (const OutputError& e) {  // measured, shown above, not kept
      print_to(stderr, "error: {}\n", e.what());
      return agreed_exit(exit_check_failed);
    }
    print_to(stdout, "calibration: {}\n", shown(*out));
  }
  return agreed_exit(0);
}

int info_session(int& kokkos_argc, char** kokkos_argv, const std::vector<std::string>& command) {
  if (const int code = startup().agree({"command: info"})) return code;
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  guard_kokkos_tool();  // what a loaded tool relies on
  if (const int code = place_threads(false)) return code;
  auto doc = collect_provenance(nullptr, command);
  doc["ranks"] = gather_rank_places();
  if (world().rank() != 0) return 0;
  std::ostringstream configuration;
  Kokkos::print_configuration(configuration, /*verbose=*/false);
  nlohmann::json lines = nlohmann::json::array();
  std::istringstream text(configuration.str());
  for (std::string line; std::getline(text, line);)
    if (!line.empty()) lines.push_back(line);
  doc["kokkos_configuration"] = lines;
  write_json(doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return 0;
}

}  // namespace portalab
