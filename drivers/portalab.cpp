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
#include "command_line.hpp"
#include "db.hpp"
#include "health.hpp"
#include "verdicts.hpp"
#include "list.hpp"
#include "deck/deck.hpp"
#include "engine/agreement.hpp"
#include "engine/session.hpp"
#include "platform/spaces.hpp"
#include "support/console.hpp"
#include "support/environment.hpp"
#include "support/files.hpp"
#include "support/interrupt.hpp"
#include "support/text.hpp"
#include "ranks/comm.hpp"
#include "ranks/placement.hpp"
#include "results/provenance.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace {

// Runs before every library's constructor, GCC's OpenMP runtime's among them
// (which binds the first thread as it loads, OMP_PROC_BIND set): the CPUs
// the launcher gave this process, and the user's placement variables
// (ranks/placement.hpp). The program's own, not a library's: only an
// executable may have a .preinit_array.
void placement_before_openmp(int, char** argv, char** envp) { portalab::before_openmp(argv, envp); }
__attribute__((section(".preinit_array"),
               used)) void (*placement_hook)(int, char**, char**) = placement_before_openmp;

using portalab::command_word;
using portalab::exit_bad_input;
using portalab::exit_check_failed;
using portalab::exit_nothing_measured;
using portalab::exit_unexpected;
using portalab::not_expected;
using portalab::startup;
using portalab::unknown_command;
using portalab::unshared_error;

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
  // (A failed reopen leaves it as it was: nothing better to do.)
  if (portalab::world().rank() != 0 && !std::freopen("/dev/null", "w", stdout)) {
  }
  // --kokkos-* options go to Kokkos::initialize, the rest to portalab.
  std::vector<std::string> command(argv, argv + argc);
  std::vector<char*> ours{argv[0]}, kokkos_args{argv[0]};
  for (int i = 1; i < argc; ++i)
    (std::string_view(argv[i]).rfind("--kokkos-", 0) == 0 ? kokkos_args : ours).push_back(argv[i]);
  int kokkos_argc = static_cast<int>(kokkos_args.size());
  kokkos_args.push_back(nullptr);

  CLI::App app{
      "portalab: when does a GPU pay off? GPU-versus-CPU experiments in every Kokkos "
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
  run_cmd
      ->add_option("deck", deck_path,
                   "input deck: a path, or a name (`portalab list --decks`) looked for as "
                   "NAME, NAME.toml, then in the installed decks")
      ->required();
  run_cmd->add_option("--out", out, "directory for results.csv and results.json");
  run_cmd->add_option("--spaces", spaces, "execution spaces to run, e.g. Serial,Cuda (each once)")
      ->delimiter(',');
  run_cmd->add_option("--set", overrides.set,
                      "override a deck value: experiment.key=value or key=value (repeatable; "
                      "the last for a key wins)");
  run_cmd->add_option("--noise", overrides.noise,
                      "repeat each row until the 95% interval of its kernel median is within "
                      "this fraction of it (0.005: 0.5%), a deck's fixed reps included; within "
                      "the deck's max_reps and max_time_s");
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
  portalab::RepetitionOrder order;
  std::optional<std::string> seed_text;  // read below: CLI11 wraps a number past 2^64 - 1
  auto* seed_option = run_cmd->add_option(
      "--seed", seed_text,
      "the seed of the shuffled order in which a case's variants take turns at repetitions, "
      "0 to 18446744073709551615 (default: a new one each run, recorded in the provenance)");
  run_cmd
      ->add_flag("--in-order", order.in_order,
                 "each variant's repetitions in one block, the variants as the deck lists "
                 "them, as a profiler's timeline reads best (default: interleaved)")
      ->excludes(seed_option);
  bool dry = false;
  run_cmd->add_flag("--dry-run", dry,
                    "list the entries with their bytes and estimated times; run nothing");
  auto* cal_cmd = app.add_subcommand(
      "calibrate", "measure each space's limits: bandwidths, vendor gemm rate, launch latency");
  std::optional<std::string> cal_out;
  std::vector<std::string> cal_spaces;
  bool cal_quick = false;
  cal_cmd->add_option("--out", cal_out, "write the limits to this JSON file");
  cal_cmd
      ->add_option("--spaces", cal_spaces, "spaces to measure, each once (default: all compiled)")
      ->delimiter(',');
  cal_cmd->add_flag("--quick", cal_quick, "smaller sizes, a few seconds per space");
  std::string cal_energy = "on";
  cal_cmd
      ->add_option("--energy", cal_energy,
                   "record each GPU's power limit, application clocks, persistence mode and ECC "
                   "(NVML) with the limits: on (default) or off (NVML never loaded)")
      ->check(CLI::IsMember({"on", "off"}));
  auto* list_cmd = app.add_subcommand("list",
                                      "experiments, variants, types and spaces compiled in");
  bool names_only = false;
  auto* names_flag = list_cmd->add_flag("--names", names_only,
                                        "experiment names only, one per line");
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
  auto* help_cmd = app.add_subcommand("help",
                                      "describe portalab, or one command: portalab help run");
  std::string help_topic;
  help_cmd->add_option("command", help_topic, "the command to describe");
  const auto db_cmd = portalab::add_db_command(app);
  const auto health_cmd = portalab::add_health_command(app);
  const auto verdicts_cmd = portalab::add_verdicts_command(app);

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
  if (seed_text) {
    std::uint64_t seed = 0;
    const char* end = seed_text->data() + seed_text->size();
    const auto [at, error] = std::from_chars(seed_text->data(), end, seed);
    if (seed_text->empty() || error != std::errc() || at != end)
      return bad_input(fmt::format("--seed: expected a whole number from 0 to {}; got '{}'",
                                   std::numeric_limits<std::uint64_t>::max(),
                                   portalab::shown(*seed_text, 100)));
    order.seed = seed;
  }
  // Its stdout one JSON document, whatever a loaded library prints.
  if (*info_cmd || (*list_cmd && list_format == "json")) portalab::keep_stdout_for_json();
  // The store is written by one process, never by the ranks of a job.
  if (portalab::db_command_given(*db_cmd)) {
    if (kokkos_argc > 1)
      return bad_input(fmt::format("'{}': cannot apply: `portalab db` does not start Kokkos",
                                   portalab::shown(kokkos_args[1])));
    if (portalab::world().size() > 1)
      return bad_input(
          "`portalab db` runs as one process, not under mpirun or srun: import "
          "once, from one task, after the ranks have written their results");
    if (const int code = startup().agree({"command: db"})) return code;
    return portalab::run_db_command(*db_cmd);
  }
  // The verdicts read stdin once: one process, no Kokkos.
  if (portalab::verdicts_command_given(*verdicts_cmd)) {
    if (kokkos_argc > 1 || portalab::world().size() > 1)
      return bad_input("`portalab verdicts` runs as one process without --kokkos-* options");
    if (const int code = startup().agree({"command: verdicts"})) return code;
    return portalab::run_verdicts_command(*verdicts_cmd);
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
      if (const int code = startup().agree(
              {fmt::format("command: list {} {} {}", names_only, decks_only, list_format)}))
        return code;
      portalab::list(list_format, names_only, decks_only);
      return 0;
    }
    // PORTALAB_* variables read only deep in a run: a mistake said now.
    if (const std::string problem = portalab::environment_problem(); !problem.empty())
      return bad_input(problem);
    portalab::check_kokkos_arguments(kokkos_args);
    // health --from starts no Kokkos: health asks device_problem itself.
    if (portalab::health_command_given(*health_cmd))
      return portalab::run_health_command(*health_cmd, kokkos_argc, kokkos_args.data(), command);
    if (const std::string problem = portalab::device_problem(); !problem.empty())
      return bad_input(problem);
    if (*info_cmd) return portalab::info_session(kokkos_argc, kokkos_args.data(), command);
    if (*cal_cmd)
      return portalab::calibrate_session({cal_out, cal_spaces, cal_quick, cal_energy == "on",
                                          command},
                                         kokkos_argc, kokkos_args.data());
    return portalab::Session({deck_path, out, overrides, calibration_path, dry, energy, order,
                              command},
                             kokkos_argc, kokkos_args.data())
        .run();
  } catch (const portalab::InputError& e) {
    return unshared_error(exit_bad_input, e.what());
  } catch (const portalab::OutputError& e) {
    return unshared_error(exit_bad_input, e.what());
  } catch (const portalab::EnvironmentError& e) {
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
