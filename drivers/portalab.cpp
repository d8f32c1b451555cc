// portalab: run input decks of GPU-versus-CPU experiments in every Kokkos
// execution space, list what is compiled in, describe the machine.
//
// Exit codes: 0 every check passed; 1 a check failed, an entry raised an
// error, or the result files or stdout could not be written to the end; 2
// bad input (command line, --kokkos-* options, deck, an --out that cannot be
// written, a link or a pipe where a result file goes);
// 3 an unexpected error; 4 nothing was measured (every entry not applicable
// or skipped for memory); 128 + the signal (143 SIGTERM, 130 SIGINT, 129
// SIGHUP, ...) when a signal stopped a run, as a shell reports a process the
// signal killed, after the results so far were written.
#include "results/analysis.hpp"
#include "limits/calibrate.hpp"
#include "ranks/comm.hpp"
#include "deck/deck.hpp"
#include "deck/deck_search.hpp"
#include "engine/dry_run.hpp"
#include "engine/expand.hpp"
#include "platform/energy.hpp"
#include "experiment/experiment.hpp"
#include "platform/console.hpp"
#include "platform/interrupt.hpp"
#include "deck/kokkos_options.hpp"
#include "db.hpp"
#include "list.hpp"
#include "platform/spaces.hpp"
#include "platform/tool_guard.hpp"
#include "platform/suggest.hpp"
#include "platform/text.hpp"
#include "ranks/startup.hpp"
#include "ranks/watchdog.hpp"
#include "results/provenance.hpp"
#include "results/result_files.hpp"
#include "results/schema_version.hpp"
#include "engine/runner.hpp"

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace {

constexpr int exit_check_failed = 1;
constexpr int exit_bad_input = 2;
constexpr int exit_unexpected = 3;
constexpr int exit_nothing_measured = 4;

// The spaces a deck's plans name, in the order compiled (the order they run).
std::vector<std::string> spaces_used(const portalab::Deck& deck) {
  std::vector<std::string> used;
  for (const auto& space : portalab::enabled_space_names())
    if (std::any_of(deck.plans.begin(), deck.plans.end(), [&](const portalab::ExperimentPlan& p) {
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
    added = portalab::serial_alone_threads_option(spaces, {given_argv + 1, given_argv + given_argc});
    if (!added.empty()) {
      argv.push_back(added.data());
      // Said where it overrides a count (Kokkos' default is one thread).
      if (const char* env = std::getenv("KOKKOS_NUM_THREADS"); root && env)
        portalab::print_to(stderr,
                           "Threads: one thread, not KOKKOS_NUM_THREADS={}: Serial is measured "
                           "without Threads, whose idle workers would spin beside it "
                           "(--kokkos-num-threads sets it)\n",
                           env);
    } else if (portalab::world().size() > 1) {
      // Every rank asks its node's rank count (a collective: all ranks come here).
      const int local_ranks = portalab::rank_place().local_size;
      added = portalab::threads_per_rank_option(local_ranks, {given_argv + 1, given_argv + given_argc});
      if (!added.empty()) {
        argv.push_back(added.data());
        if (root)
          portalab::print_to(stderr,
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

portalab::Calibration read_calibration(const std::string& path) {
  // Bounded before parsing, as a deck is: a calibration file is a few kB.
  constexpr std::size_t max_bytes = 16 << 20;
  const std::string text = portalab::read_bounded(path, max_bytes, "a calibration file");
  if (text.size() > max_bytes)
    throw portalab::InputError(fmt::format("{}: more than {} bytes; not a calibration file",
                                           portalab::shown(path), max_bytes));
  portalab::check_json_nesting(text, path, 64);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw portalab::InputError(
        fmt::format("{}: not JSON: {}", portalab::shown(path), portalab::shown(e.what(), 1000)));
  }
  // Files before schema_version (1) read as they always did; a newer one
  // may hold what this portalab would misread.
  if (j.is_object() && j.contains("schema_version") &&
      !(j["schema_version"].is_number_integer() &&
        j["schema_version"].get<int>() <= portalab::schema_version))
    throw portalab::InputError(fmt::format(
        "{}: a calibration file of schema_version {}; this portalab reads versions up to {}: "
        "read it with the portalab that wrote it, or calibrate again",
        portalab::shown(path),
        portalab::shown(
            j["schema_version"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)),
        portalab::schema_version));
  // A file written by `portalab calibrate` holds it under "calibration".
  return portalab::calibration_from_json(j.contains("calibration") ? j["calibration"] : j, path);
}

// `portalab run --dry-run`: the entries, their bytes and estimated times,
// from the limits given or from a quick calibration; nothing runs.
int dry_run(const portalab::Deck& deck, std::optional<portalab::Calibration> limits,
            int& kokkos_argc, char** kokkos_argv) {
  KokkosArgs args(kokkos_argc, kokkos_argv, spaces_used(deck), portalab::world().rank() == 0);
  Kokkos::ScopeGuard kokkos(args.argc, args.argv.data());
  portalab::guard_kokkos_tool();  // what a loaded tool relies on
  const bool given = limits.has_value();
  if (!limits) {
    if (portalab::world().rank() == 0)
      portalab::print_to(stderr,
                         "dry run: a quick calibration of {} for the estimates (--limits FILE "
                         "takes them from `portalab calibrate --out FILE`)\n",
                         fmt::join(spaces_used(deck), ", "));
    portalab::CalibrationOptions copt;
    copt.quick = true;
    copt.progress = portalab::world().rank() == 0 ? &std::cerr : nullptr;
    limits = portalab::calibrate(spaces_used(deck), copt);
  }
  const int ranks = portalab::world().size();
  const auto entries = portalab::expand(deck, portalab::global_registry(), ranks);
  std::cout << portalab::format_plan(
      deck.path, portalab::plan_entries(entries, {&*limits, /*ask_spaces=*/true, ranks}));
  if (deck.calibrate != "none")
    portalab::print_to(stdout, "before them, without --calibration, the run calibrates ({}){}\n",
                       deck.calibrate,
                       given ? ""
                             : fmt::format(": the quick calibration here took {}",
                                           portalab::format_duration(limits->seconds * 1e3)));
  return 0;
}

// The start-up agreement of a run on several ranks (ranks/startup.hpp):
// every path through main meets it once, before Kokkos starts, with what
// this rank will run or why it cannot. A verdict not to go is said on every
// rank (once, by rank 0, where every rank failed alike) and ends them all
// with one exit status; alone, it only says this rank's error.
class Startup {
 public:
  // Keeps this rank's first failure, for the agreement to say.
  void fail(int code, const std::string& why) {
    if (m_state.code == 0) {
      m_state.code = code;
      m_state.error = why;
    }
  }
  // Runs checks unless this rank failed already; an InputError or an
  // OutputError is its failure (exit 2).
  void check(const std::function<void()>& checks) {
    if (m_state.code != 0) return;
    try {
      checks();
    } catch (const portalab::InputError& e) {
      fail(exit_bad_input, e.what());
    } catch (const portalab::OutputError& e) {
      fail(exit_bad_input, e.what());
    }
  }
  // What this rank was given, for the messages: its command line, its deck.
  void given(const std::string& what) {
    m_state.given += (m_state.given.empty() ? "" : ", ") + what;
  }
  // 0: every rank goes on to run `plan` ("key: value" lines); else the exit
  // status, the reason said.
  int agree(const std::vector<std::string>& plan) {
    if (m_agreed) throw std::logic_error("the start-up agreement met twice");
    check([] { portalab::startup_timeout_seconds(); });
    if (m_state.code == 0) {
      m_state.plan = {
          "portalab: " + portalab::build_commit(),
          fmt::format("spaces compiled: {}", fmt::join(portalab::enabled_space_names(), ","))};
      m_state.plan.insert(m_state.plan.end(), plan.begin(), plan.end());
    }
    m_agreed = true;  // an error from here on is no longer this rank's alone to say
    const portalab::StartupVerdict v = portalab::agree_at_startup(portalab::world(), m_state);
    const portalab::Comm& all = portalab::world();
    if (v.code == 0) return 0;
    if (!v.alike)
      portalab::print_to(stderr, "error: [rank {} of {}] {}\n", all.rank(), all.size(),
                         v.message);
    else if (all.rank() == 0)
      portalab::print_to(stderr, "error: {}\n", v.message);
    // Every rank has said it before any exits: a launcher ends the others
    // at the first exit that is not 0.
    all.barrier();
    return v.code;
  }
  bool agreed() const { return m_agreed; }

 private:
  portalab::StartupState m_state;
  bool m_agreed = false;
};

Startup& startup() {
  static Startup s;
  return s;
}

// Runs the checks each rank makes before Kokkos starts: a failure is this
// rank's, said at the start-up agreement, where every rank learns of it.
void checked_on_every_rank(const std::function<void()>& checks) { startup().check(checks); }

// The host stores a run will use, for the start-up agreement: forced by
// PORTALAB_STREAMING_STORES (a variable one node may set and another not), or
// as calibrated. InputError for a bad value.
std::string host_stores_line() {
  const auto forced = portalab::host_stores_forced();
  return fmt::format("host stores: {}", !forced ? "as calibrated"
                                        : *forced ? "streaming (PORTALAB_STREAMING_STORES=1)"
                                                  : "plain (PORTALAB_STREAMING_STORES=0)");
}

// An error no check kept: before the start-up agreement, this rank's
// failure, said there. After it, on several ranks, nothing shares it (the
// others would wait for this rank in their next collective): MPI ends them
// all.
int unshared_error(int code, const std::string& what) {
  if (!startup().agreed()) {
    startup().fail(code, what);
    return startup().agree({});
  }
  if (portalab::world().size() > 1) {
    portalab::print_to(stderr, "error on rank {}: {}; ending every rank\n",
                       portalab::world().rank(), what);
    portalab::abort_world(code);
  }
  portalab::print_to(stderr, "error: {}\n", what);
  return code;
}

// Rank 0's exit status, on every rank: mpirun and srun report the worst.
int agreed_exit(int code) {
  const portalab::Comm& all = portalab::world();
  if (all.size() == 1) return code;
  return std::stoi(all.broadcast(std::to_string(code)));
}

// Every rank's place and device, for rank 0's provenance and rows; with
// `energy`, what its meters are (each GPU's power limit, clocks, ...).
nlohmann::json gather_rank_places(const portalab::EnergyMeters* energy = nullptr) {
  nlohmann::json mine = portalab::rank_provenance();
  if (energy) mine["energy"] = energy->describe();
  const auto parts = portalab::world().gather(mine.dump());
  nlohmann::json all = nlohmann::json::array();
  for (const auto& p : parts) all.push_back(nlohmann::json::parse(p));
  return all;
}

// Each rank measures the limits of its own spaces (its own GPU; host cores
// shared as the run shares them), then all of them the links between them.
portalab::Calibration calibrate_everywhere(const std::vector<std::string>& spaces, bool quick) {
  const bool root = portalab::world().rank() == 0;
  portalab::CalibrationOptions copt;
  copt.quick = quick;
  copt.progress = root ? &std::cerr : nullptr;
  auto cal = portalab::calibrate(spaces, copt);
  cal.links = portalab::calibrate_links(portalab::world(), spaces, copt);
  return cal;
}

int report(const portalab::RunSummary& summary, const std::optional<std::string>& out);


int run(const std::string& deck_arg, const std::optional<std::string>& out,
        const portalab::DeckOverrides& overrides,
        const std::optional<std::string>& calibration_path, bool dry,
        const std::optional<std::string>& energy_option,
        const std::vector<std::string>& command, int& kokkos_argc, char** kokkos_argv) {
  // Everything about the input is checked before Kokkos starts or allocates.
  const portalab::Comm& all = portalab::world();
  const bool root = all.rank() == 0;
  portalab::Deck deck;
  std::optional<portalab::Calibration> limits;
  double watchdog_s = 0;
  std::vector<std::string> plan;  // what the ranks agree on before any of them starts
  checked_on_every_rank([&] {
    const std::string stores = host_stores_line();  // a bad PORTALAB_STREAMING_STORES, now
    const std::string deck_path =
        portalab::find_deck(deck_arg, portalab::deck_folders(portalab::executable_path()));
    startup().given("deck " + std::filesystem::absolute(deck_path).lexically_normal().string());
    deck = portalab::load_deck(deck_path, portalab::catalog(), overrides);
    watchdog_s = portalab::watchdog_seconds(deck.watchdog_s);
    if (calibration_path) limits = read_calibration(*calibration_path);
    // A dry run measures and writes nothing: --out is left alone.
    if (out && root && !dry) portalab::check_output_dir(*out);  // before anything is measured
    plan = {dry ? "command: run --dry-run" : "command: run",
            fmt::format("spaces: {}", fmt::join(spaces_used(deck), ",")),
            limits ? "limits: " + portalab::content_hash(portalab::to_json(*limits).dump())
                   : "calibrate: " + deck.calibrate,
            fmt::format("energy: {}",
                        (energy_option ? *energy_option == "on" : deck.energy) ? "on" : "off"),
            stores};
    const auto entries = portalab::expand(deck, portalab::global_registry(), all.size());
    for (auto& line : portalab::entry_lines(entries)) plan.push_back(std::move(line));
  });
  if (const int code = startup().agree(plan)) return code;
  if (dry) {
    if (out && root)
      portalab::print_to(stderr, "warning: --out {}: a dry run writes nothing; ignored\n",
                         portalab::shown(*out));
    return dry_run(deck, std::move(limits), kokkos_argc, kokkos_argv);
  }
  portalab::install_interrupt_handlers();
  KokkosArgs args(kokkos_argc, kokkos_argv, spaces_used(deck), root);
  const auto start = std::chrono::steady_clock::now();
  Kokkos::ScopeGuard kokkos(args.argc, args.argv.data());
  portalab::guard_kokkos_tool();  // what a loaded tool relies on
  const double init_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  auto provenance = portalab::collect_provenance(&deck, command);
  provenance["kokkos_initialize_ms"] = init_ms;
  // --energy over the deck's key; off: NVML is never loaded.
  std::optional<portalab::EnergyMeters> meters;
  if (energy_option ? *energy_option == "on" : deck.energy)
    meters = portalab::EnergyMeters::open(portalab::rank_provenance().value("device", nlohmann::json()));
  const nlohmann::json places = gather_rank_places(meters ? &*meters : nullptr);
  provenance["ranks"] = places;
  provenance["energy"] = meters ? meters->describe() : nlohmann::json{{"off", true}};
  const std::size_t entries = portalab::expand(deck, portalab::global_registry(), all.size()).size();
  if (root)
    portalab::print_to(
        stderr,
        "portalab {} | deck {} | {} entries | spaces {} | {} | Kokkos initialised "
        "in {:.1f} ms\n",
        portalab::build_commit(), portalab::shown(deck.path), entries,
        fmt::join(spaces_used(deck), ","),
        all.size() > 1 ? fmt::format("{} ranks (MPI)", all.size()) : std::string("1 rank"),
        init_ms);

  if (const auto w = portalab::threads_affinity_warning(); root && !w.empty())
    portalab::print_to(stderr, "warning: {}\n", w);
  if (const auto w = portalab::threads_default_warning(spaces_used(deck), args.given);
      root && !w.empty())
    portalab::print_to(stderr, "warning: {}\n", w);
  if (const auto w = portalab::serial_beside_threads_warning(spaces_used(deck)); root && !w.empty())
    portalab::print_to(stderr, "warning: {}\n", w);
  if (root)
    portalab::print_to(
        stderr, "energy: {}\n",
        meters ? meters->summary() : std::string("off (--energy off, or the deck's energy key)"));
  if (!limits && deck.calibrate != "none") {
    const auto used = spaces_used(deck);
    if (root)
      portalab::print_to(stderr, "calibrate: measuring the limits of {} ({}; under 30 s)\n",
                         fmt::join(used, ", "), deck.calibrate);
    limits = calibrate_everywhere(used, deck.calibrate == "quick");
  }
  if (limits) {
    provenance["calibration"] = portalab::to_json(*limits);
    if (calibration_path) provenance["calibration"]["file"] = *calibration_path;
    // Each rank measured its own GPU: its limits beside its place, for
    // `portalab db fleet` (the run's calibration is rank 0's).
    if (!calibration_path && all.size() > 1) {
      const auto parts = all.gather(portalab::to_json(*limits).dump());
      for (std::size_t k = 0; k < parts.size() && k < provenance["ranks"].size(); ++k)
        provenance["ranks"][k]["calibration"] = nlohmann::json::parse(parts[k]);
    }
    if (root) std::cout << portalab::format_calibration(*limits) << std::flush;
  }
  // Plain or streaming stores for each host space's loops beyond the cache,
  // as calibrated (here or in the file): the policy every row's kernels get.
  auto host_policies = portalab::host_policies(limits ? &*limits : nullptr);
  provenance["host_stores"] = host_policies.described;
  if (root)
    for (const auto& [space, stores] : provenance["host_stores"].items())
      portalab::print_to(
          stderr, "stores: {} {} in loops, {} in copies{}{} ({})\n", space,
          stores["stores"].get<std::string>(),
          stores["copy_stores"] == "streaming" ? "streaming" : "memcpy",
          stores["from_bytes"].is_null() ? std::string()
                                         : fmt::format(", streaming beyond {:.0f} MB",
                                                       stores["from_bytes"].get<double>() / 1e6),
          stores["dot_reads"] == "chain" ? "; float64 dot in one chain beyond the cache" : "",
          stores["why"].get<std::string>());

  // Rank 0 alone prints and writes; the others measure.
  portalab::RunOptions options;
  options.out_dir = root ? out : std::nullopt;
  options.limits = limits ? &*limits : nullptr;
  options.host_policies = std::move(host_policies);
  options.tables = root ? &std::cout : nullptr;
  options.progress = root ? &std::cerr : nullptr;
  options.rank_places = places;
  options.watchdog_s = watchdog_s;
  options.energy = meters ? &*meters : nullptr;
  const auto summary = portalab::run_deck(deck, options, provenance);
  return agreed_exit(root ? report(summary, out) : 0);
}

int report(const portalab::RunSummary& summary, const std::optional<std::string>& out) {
  std::cout << portalab::format_analysis(summary.results);

  portalab::print_to(
      stdout, "\n{} entries: {} passed, {} failed, {} errors, {} skipped, {} not applicable\n",
      summary.results.size(),
      summary.results.size() - summary.failed - summary.errors - summary.skipped -
          summary.not_applicable,
      summary.failed, summary.errors, summary.skipped, summary.not_applicable);
  // A copy: a range-for over a member of a temporary reads freed memory (ASan).
  const nlohmann::json failures = summary.to_json()["failures"];
  for (const auto& f : failures)
    portalab::print_to(stdout, "  {}: {} {} {} {} n={} copies={}: {}\n",
                       f["check"].get<std::string>(), f["experiment"].get<std::string>(),
                       f["variant"].get<std::string>(), f["space"].get<std::string>(),
                       f["dtype"].get<std::string>(), f["n"].get<std::size_t>(),
                       f["copies"].get<std::string>(), f["detail"].get<std::string>());
  // Said again at the end: tables printed before a re-measurement show the
  // lower limit, the files every row against the higher.
  for (const auto& r : summary.limits_rechecked)
    portalab::print_to(
        stdout, "limits of {} re-measured after {} ran at {:.0f}% of them: {}\n",
        r["space"].get<std::string>(), r["after"].get<std::string>(),
        100 * r["row_pct_of_limit"].get<double>(),
        r.contains("error")
            ? "failed: " + r["error"].get<std::string>()
            : fmt::format("{} limit {:.1f} GB/s before; the result files hold every row of "
                          "{} against the limits as re-measured",
                          r["limit"].get<std::string>(), r["limit_before_gbps"].get<double>(),
                          r["space"].get<std::string>()));
  if (!summary.incomplete.empty())
    portalab::print_to(stdout,
                       "results INCOMPLETE: {}; the files in {} hold the entries written before "
                       "(results.jsonl the most)\n",
                       summary.incomplete, portalab::shown(*out));
  else if (out)
    portalab::print_to(stdout, "results: {0}/results.csv, {0}/results.json\n",
                       portalab::shown(*out));
  if (summary.interrupted_by != 0) {
    portalab::print_to(
        stdout, "interrupted by {}: {}; {} entries not run\n",
        portalab::signal_name(summary.interrupted_by),
        summary.abandoned.empty() ? "no entry in progress" : "abandoned " + summary.abandoned,
        summary.not_run);
    return 128 + summary.interrupted_by;
  }
  if (summary.failed + summary.errors > 0 || !summary.incomplete.empty()) return exit_check_failed;
  // A run that measured nothing has nothing to report, whatever its cause.
  if (static_cast<int>(summary.results.size()) == summary.skipped + summary.not_applicable) {
    portalab::print_to(stdout, "nothing was measured: every entry was {} (exit status {})\n",
                       summary.not_applicable > 0 && summary.skipped > 0
                           ? "not applicable or skipped"
                       : summary.skipped > 0 ? "skipped for memory"
                                             : "not applicable here",
                       exit_nothing_measured);
    return exit_nothing_measured;
  }
  return 0;
}

int calibrate(const std::optional<std::string>& out, const std::vector<std::string>& given,
              bool quick, bool energy, const std::vector<std::string>& command, int& kokkos_argc,
              char** kokkos_argv) {
  // The rule of `run --spaces` and of a deck's spaces.
  std::vector<std::string> spaces;
  const bool root = portalab::world().rank() == 0;
  std::string stores;
  checked_on_every_rank([&] {
    spaces = given.empty() ? given : portalab::spaces_option(given, portalab::catalog());
    if (out && root) portalab::check_output_file(*out);  // before 30 s of measuring
    stores = host_stores_line();
  });
  if (const int code = startup().agree({"command: calibrate",
                                        fmt::format("spaces: {}", fmt::join(spaces, ",")),
                                        fmt::format("quick: {}", quick),
                                        fmt::format("energy: {}", energy), stores}))
    return code;
  KokkosArgs args(kokkos_argc, kokkos_argv, spaces, root);
  Kokkos::ScopeGuard kokkos(args.argc, args.argv.data());
  portalab::guard_kokkos_tool();  // what a loaded tool relies on
  if (const auto w = portalab::threads_affinity_warning(); root && !w.empty())
    portalab::print_to(stderr, "warning: {}\n", w);
  if (const auto w = portalab::threads_default_warning(spaces, args.given); root && !w.empty())
    portalab::print_to(stderr, "warning: {}\n", w);
  if (const auto w = portalab::serial_beside_threads_warning(spaces); root && !w.empty())
    portalab::print_to(stderr, "warning: {}\n", w);
  if (root)
    portalab::print_to(
        stderr, "calibrate: {} measurement of {}{}; takes under 30 s\n", quick ? "quick" : "full",
        spaces.empty() ? "every space" : fmt::format("{}", fmt::join(spaces, ", ")),
        portalab::world().size() > 1
            ? fmt::format(" on {} ranks, and the links between them", portalab::world().size())
            : std::string());
  const auto cal = calibrate_everywhere(spaces, quick);
  if (!root) return agreed_exit(0);
  std::cout << portalab::format_calibration(cal);
  if (out) {
    nlohmann::json doc{{"schema_version", portalab::schema_version},
                       {"provenance", portalab::collect_provenance(nullptr, command)},
                       {"calibration", portalab::to_json(cal)}};
    // What bounds the limits measured: each GPU's power limit, clocks, ECC.
    doc["provenance"]["energy"] =
        energy ? portalab::EnergyMeters::open(
                     portalab::rank_provenance().value("device", nlohmann::json()))
                     .describe()
               : nlohmann::json{{"off", true}};
    try {
      portalab::write_file_atomically(
          *out, doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    } catch (const portalab::OutputError& e) {  // measured, shown above, not kept
      portalab::print_to(stderr, "error: {}\n", e.what());
      return agreed_exit(exit_check_failed);
    }
    portalab::print_to(stdout, "calibration: {}\n", portalab::shown(*out));
  }
  return agreed_exit(0);
}

// One JSON document on stdout, Kokkos' own description of itself in it, so
// that a job can parse what it saved.
int info(int& kokkos_argc, char** kokkos_argv, const std::vector<std::string>& command) {
  if (const int code = startup().agree({"command: info"})) return code;
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  portalab::guard_kokkos_tool();  // what a loaded tool relies on
  auto doc = portalab::collect_provenance(nullptr, command);
  doc["ranks"] = gather_rank_places();
  if (portalab::world().rank() != 0) return 0;
  std::ostringstream configuration;
  Kokkos::print_configuration(configuration, /*verbose=*/false);
  nlohmann::json lines = nlohmann::json::array();
  std::istringstream text(configuration.str());
  for (std::string line; std::getline(text, line);)
    if (!line.empty()) lines.push_back(line);
  doc["kokkos_configuration"] = lines;
  std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}

// The first word that is no option: the command (portalab's own options
// take no value); "" when there is none.
std::string command_word(const std::vector<char*>& args) {
  for (std::size_t i = 1; i < args.size(); ++i)
    if (args[i][0] != '-') return args[i];
  return {};
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// Why `word` names no command ("" when it names one): CLI11 would say "A
// subcommand is required" of a mistyped one.
std::string unknown_command(const CLI::App& app, const std::string& word) {
  const auto names = command_names(app);
  if (word.empty())
    return fmt::format("a command is required: one of {} (`portalab help` describes them)",
                       fmt::join(names, ", "));
  if (std::find(names.begin(), names.end(), word) != names.end()) return {};
  return fmt::format("'{}' is not a portalab command ({}){}", portalab::shown(word),
                     fmt::join(names, ", "), portalab::did_you_mean(word, names));
}

// What a command was given and does not take, said with the nearest option
// (CLI11 says "The following argument was not expected").
std::string not_expected(const CLI::App& app, const std::string& word) {
  const CLI::App* sub = word.empty() ? nullptr : app.get_subcommand(word);
  // A command's own command (`db import`): the innermost one given.
  std::string path = sub ? sub->get_name() : std::string();
  while (sub && !sub->get_subcommands().empty()) {
    sub = sub->get_subcommands().front();
    path += " " + sub->get_name();
  }
  const CLI::App& command = sub && !sub->remaining().empty() ? *sub : app;
  const auto extras = command.remaining();
  const std::string name = &command == &app ? std::string("portalab") : path;
  const std::string help =
      &command == &app ? std::string("`portalab help` lists what it takes")
      : path.find(' ') == std::string::npos
          ? fmt::format("`portalab help {}` lists what it takes", name)
          : fmt::format("`portalab {} --help` lists what it takes", name);
  for (const auto& extra : extras) {
    if (extra.empty() || extra[0] != '-') continue;
    std::vector<std::string> options;
    for (const CLI::Option* o : command.get_options())
      for (const auto& long_name : o->get_lnames()) options.push_back("--" + long_name);
    return fmt::format("{}: unknown option '{}' ({}){}", name, portalab::shown(extra), help,
                       portalab::did_you_mean(extra.substr(0, extra.find('=')), options));
  }
  return fmt::format("{}: '{}' was not expected ({})", name,
                     portalab::shown(fmt::format("{}", fmt::join(extras, " "))), help);
}

// What this build and machine allow the --kokkos-* options and variables.
portalab::KokkosOptionLimits kokkos_option_limits(const std::vector<char*>& kokkos_args) {
  portalab::KokkosOptionLimits limits;
  limits.max_threads = portalab::kokkos_thread_limit();
  const auto compiled = portalab::enabled_space_names();
  auto has = [&](const char* space) {
    return std::find(compiled.begin(), compiled.end(), space) != compiled.end();
  };
  limits.openmp = has("OpenMP");
  limits.host_threads = has("OpenMP") || has("Threads") || has("HPX");
  limits.device_space = std::any_of(compiled.begin(), compiled.end(),
                                    [](const std::string& s) { return !portalab::is_host_space(s); });
  // The device runtime is asked only where a device is chosen.
  if (limits.device_space &&
      (std::getenv("KOKKOS_DEVICE_ID") || std::getenv("KOKKOS_VISIBLE_DEVICES") ||
       std::any_of(kokkos_args.begin() + 1, kokkos_args.end() - 1, [](const char* a) {
         return std::string_view(a).rfind("--kokkos-device-id", 0) == 0;
       })))
    limits.device_count = portalab::visible_device_count();
  return limits;
}

int portalab_main(int argc, char** argv) {
  // MPI first (a launcher started this process) and last: Kokkos lives
  // within it. Alone, the world is this one rank and MPI is never touched.
  try {
    portalab::init_world(argc, argv);
  } catch (const std::exception& e) {
    portalab::print_to(stderr, "error: {}\n", e.what());
    return exit_unexpected;
  }
  struct Finalize {
    ~Finalize() { portalab::finalize_world(); }
  } finalize;
  // Only rank 0 prints results; the others' stdout would repeat them.
  if (portalab::world().rank() != 0) std::freopen("/dev/null", "w", stdout);
  // --kokkos-* options go to Kokkos::initialize, the rest to portalab.
  std::vector<std::string> command(argv, argv + argc);
  std::vector<char*> ours{argv[0]}, kokkos_args{argv[0]};
  for (int i = 1; i < argc; ++i)
    (std::string_view(argv[i]).rfind("--kokkos-", 0) == 0 ? kokkos_args : ours).push_back(argv[i]);
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  kokkos_args.push_back(nullptr);

  CLI::App app{"portalab: when does a GPU pay off? GPU-versus-CPU experiments in every Kokkos "
               "execution space. Options --kokkos-* are passed to Kokkos."};
  app.require_subcommand(1);
  app.set_version_flag("--version", portalab::build_commit());
  app.footer(
      "`portalab help COMMAND` (or `portalab COMMAND --help`) describes a command.\n"
      "Exit codes: 0 every check passed; 1 a check failed, an entry raised an error, or "
      "the result files or stdout could not be written to the end; "
      "2 bad input (command line, deck, --kokkos-* options); 3 an unexpected error; 4 "
      "nothing was measured; 128 + N stopped by signal N.");

  auto* run_cmd = app.add_subcommand("run", "run the experiments of an input deck");
  std::string deck_path;
  std::optional<std::string> out;
  std::vector<std::string> spaces;
  portalab::DeckOverrides overrides;
  run_cmd->add_option("deck", deck_path,
                      "input deck: a path, or a name (`portalab list --decks`) looked for as "
                      "NAME, NAME.toml, then in the installed decks")
      ->required();
  run_cmd->add_option("--out", out, "directory for results.csv and results.json");
  run_cmd->add_option("--spaces", spaces, "execution spaces to run, e.g. Serial,Cuda (each once)")
      ->delimiter(',');
  run_cmd->add_option("--set", overrides.set,
                      "override a deck value: experiment.key=value or key=value (repeatable; "
                      "the last for a key wins)");
  std::optional<std::string> calibration_path;
  run_cmd->add_option("--calibration,--limits", calibration_path,
                      "limits from `portalab calibrate --out FILE` instead of measuring them");
  std::optional<std::string> energy;
  run_cmd
      ->add_option("--energy", energy,
                   "read the GPU's energy, clocks and power (NVML) and the CPU's energy (RAPL) "
                   "around each repetition, outside its timing: on (default, or the deck's "
                   "`energy` key) or off (NVML never loaded)")
      ->check(CLI::IsMember({"on", "off"}));
  bool dry = false;
  run_cmd->add_flag("--dry-run", dry,
                    "list the entries with their bytes and estimated times; run nothing");
  auto* cal_cmd = app.add_subcommand(
      "calibrate", "measure each space's limits: bandwidths, vendor gemm rate, launch latency");
  std::optional<std::string> cal_out;
  std::vector<std::string> cal_spaces;
  bool cal_quick = false;
  cal_cmd->add_option("--out", cal_out, "write the limits to this JSON file");
  cal_cmd->add_option("--spaces", cal_spaces, "spaces to measure, each once (default: all compiled)")
      ->delimiter(',');
  cal_cmd->add_flag("--quick", cal_quick, "smaller sizes, a few seconds per space");
  std::string cal_energy = "on";
  cal_cmd
      ->add_option("--energy", cal_energy,
                   "record each GPU's power limit, application clocks, persistence mode and ECC "
                   "(NVML) with the limits: on (default) or off (NVML never loaded)")
      ->check(CLI::IsMember({"on", "off"}));
  auto* list_cmd = app.add_subcommand("list", "experiments, variants, types and spaces compiled in");
  bool names_only = false;
  auto* names_flag = list_cmd->add_flag("--names", names_only, "experiment names only, one per line");
  bool decks_only = false;
  list_cmd
      ->add_flag("--decks", decks_only,
                 "the decks `portalab run NAME` can name, with their first comment line")
      ->excludes(names_flag);
  std::string list_format = "text";
  list_cmd
      ->add_option("--format", list_format,
                   "text (default), markdown (the guide's reference pages) or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  auto* info_cmd = app.add_subcommand("info", "Kokkos configuration and the devices, as JSON");
  auto* help_cmd = app.add_subcommand("help", "describe portalab, or one command: portalab help run");
  std::string help_topic;
  help_cmd->add_option("command", help_topic, "the command to describe");
  const auto db_cmd = portalab::add_db_command(app);

  const bool root = portalab::world().rank() == 0;
  // Every way out before Kokkos starts meets the other ranks first.
  startup().given(fmt::format("`{}`", fmt::join(command.begin() + 1, command.end(), " ")));
  auto bad_input = [&](const std::string& what) {
    startup().fail(exit_bad_input, what);
    return startup().agree({});
  };
  const std::string word = command_word(ours);
  const bool asks_help_or_version = std::any_of(ours.begin() + 1, ours.end(), [](const char* a) {
    return std::string_view(a) == "-h" || std::string_view(a) == "--help" ||
           std::string_view(a) == "--version";
  });
  if (const std::string problem = unknown_command(app, word);
      !problem.empty() && !(word.empty() && asks_help_or_version))
    return bad_input(problem);
  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ExtrasError&) {
    return bad_input(not_expected(app, word));
  } catch (const CLI::ParseError& e) {
    // Every error said alike: "error: ..." and where help is.
    if (e.get_exit_code() != 0)
      return bad_input(fmt::format("{} (`portalab help COMMAND` describes a command)",
                                   portalab::shown(e.what(), 1000)));
    // --help or --version: said once every rank agrees to say it.
    if (const int code = startup().agree({fmt::format("command: {}", e.get_name())})) return code;
    return app.exit(e);
  }
  if (!spaces.empty()) overrides.spaces = spaces;
  // The store is written by one process, never by the ranks of a job.
  if (portalab::db_command_given(*db_cmd)) {
    if (kokkos_argc > 1)
      return bad_input(fmt::format("'{}': cannot apply: `portalab db` does not start Kokkos",
                                   portalab::shown(kokkos_args[1])));
    if (portalab::world().size() > 1)
      return bad_input("`portalab db` runs as one process, not under mpirun or srun: import "
                       "once, from one task, after the ranks have written their results");
    if (const int code = startup().agree({"command: db"})) return code;
    return portalab::run_db_command(*db_cmd);
  }
  // list and help start no Kokkos: an option for it would be ignored.
  if (kokkos_argc > 1 && (*list_cmd || *help_cmd))
    return bad_input(fmt::format(
        "'{}': cannot apply: `portalab {}` does not start Kokkos; --kokkos-* options apply to "
        "run, calibrate and info",
        portalab::shown(kokkos_args[1]), word));

  if (*help_cmd) {  // as git and cmake do: the whole, or one command
    if (const int code = startup().agree({"command: help " + help_topic})) return code;
    if (help_topic.empty()) {
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return 0;
    }
    if (const std::string problem = unknown_command(app, help_topic); !problem.empty()) {
      if (root) portalab::print_to(stderr, "error: help: {}\n", problem);  // alike on every rank
      return exit_bad_input;
    }
    const CLI::App* topic = app.get_subcommand(help_topic);
    std::cout << topic->get_formatter()->make_help(topic, app.get_name() + " " + help_topic,
                                                    CLI::AppFormatMode::Normal);
    return 0;
  }

  try {
    if (*list_cmd) {
      if (const int code = startup().agree({fmt::format("command: list {} {} {}", names_only,
                                                        decks_only, list_format)}))
        return code;
      const auto format = list_format == "json"       ? portalab::ListFormat::json
                          : list_format == "markdown" ? portalab::ListFormat::markdown
                                                      : portalab::ListFormat::text;
      if (decks_only)
        portalab::list_decks(format);
      else
        portalab::list_experiments(format, names_only);
      return 0;
    }
    // Kokkos aborts, or crashes, on options it cannot use, and ignores those
    // that cannot apply: checked first.
    std::vector<std::string> kokkos_warnings;
    checked_on_every_rank([&] {
      kokkos_warnings = portalab::check_kokkos_options(
          {kokkos_args.begin() + 1, kokkos_args.end() - 1},
          [](const char* name) { return std::getenv(name); }, kokkos_option_limits(kokkos_args));
    });
    for (const auto& warning : kokkos_warnings)
      if (root) portalab::print_to(stderr, "warning: {}\n", warning);
    // A tool Kokkos could not load, or that is none, would be run without.
    checked_on_every_rank([&] {
      portalab::check_kokkos_tools(
          portalab::kokkos_tools_requested({kokkos_args.begin() + 1, kokkos_args.end() - 1},
                                           [](const char* name) { return std::getenv(name); }));
    });
    if (*info_cmd) return info(kokkos_argc, kokkos_args.data(), command);
    if (*cal_cmd)
      return calibrate(cal_out, cal_spaces, cal_quick, cal_energy == "on", command, kokkos_argc,
                       kokkos_args.data());
    return run(deck_path, out, overrides, calibration_path, dry, energy, command, kokkos_argc,
               kokkos_args.data());
  } catch (const portalab::InputError& e) {
    return unshared_error(exit_bad_input, e.what());
  } catch (const portalab::OutputError& e) {
    return unshared_error(exit_bad_input, e.what());
  } catch (const std::exception& e) {
    // Printing to a terminal or pipe that a signal said was gone fails too:
    // the signal is the cause, and the files were written before.
    if (const int sig = portalab::interrupt_signal()) return 128 + sig;
    return unshared_error(exit_unexpected, e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything opens a file: a closed stdout or stderr (`2>&-`) would
  // otherwise be the descriptor a result file gets.
  portalab::keep_standard_streams_open();
  const int code = portalab_main(argc, argv);
  // Every command: what it printed on stdout reached it, or the exit says so.
  if (!portalab::standard_output_written() && (code == 0 || code == exit_nothing_measured))
    return exit_check_failed;
  return code;
}
