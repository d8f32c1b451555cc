// portalab: run input decks of GPU-versus-CPU experiments in every Kokkos
// execution space, list what is compiled in, describe the machine.
//
// Exit codes: 0 every check passed; 1 a check failed or an entry raised an
// error; 2 bad input (command line or deck); 3 an unexpected error.
#include "deck.hpp"
#include "experiment.hpp"
#include "provenance.hpp"
#include "runner.hpp"
#include "spaces.hpp"

#include <CLI/CLI.hpp>
#include <Kokkos_Core.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <filesystem>
#include <iostream>

namespace {

constexpr int exit_check_failed = 1;
constexpr int exit_bad_input = 2;
constexpr int exit_unexpected = 3;

void list_experiments() {
  fmt::print("spaces compiled in: {}\n\n", fmt::join(portalab::enabled_space_names(), ", "));
  for (const auto& e : portalab::experiments()) {
    fmt::print("{}\n  {}\n  variants: {}\n  dtypes:   {} (default {})\n  sizes:    {} by default\n",
               e.name, e.summary, fmt::join(e.variants, ", "), fmt::join(e.dtypes, ", "),
               fmt::join(e.default_dtypes, ", "), fmt::join(e.default_sizes, ", "));
  }
}

int run(const std::string& deck_path, const std::optional<std::string>& out,
        const portalab::DeckOverrides& overrides, const std::vector<std::string>& command,
        int& kokkos_argc, char** kokkos_argv) {
  // Everything about the input is checked before Kokkos starts or allocates.
  const portalab::Deck deck = portalab::load_deck(deck_path, portalab::catalog(), overrides);
  if (out) {
    std::error_code ec;
    std::filesystem::create_directories(*out, ec);
    if (ec || !std::filesystem::is_directory(*out))
      throw portalab::InputError(fmt::format("--out {}: cannot create the directory: {}", *out,
                                             ec.message()));
  }
  const auto start = std::chrono::steady_clock::now();
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  const double init_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  auto provenance = portalab::collect_provenance(&deck, command);
  provenance["kokkos_initialize_ms"] = init_ms;
  fmt::print(stderr, "portalab {} | deck {} | {} entries | spaces {} | Kokkos initialised in "
                     "{:.1f} ms\n",
             portalab::build_commit(), deck.path, portalab::count_entries(deck),
             fmt::join(portalab::enabled_space_names(), ","), init_ms);

  portalab::RunOptions options;
  options.out_dir = out;
  options.tables = &std::cout;
  options.progress = &std::cerr;
  const auto summary = portalab::run_deck(deck, options, provenance);

  fmt::print("\n{} entries: {} passed, {} failed, {} errors, {} skipped\n",
             summary.results.size(),
             summary.results.size() - summary.failed - summary.errors - summary.skipped,
             summary.failed, summary.errors, summary.skipped);
  for (const auto& f : summary.to_json()["failures"])
    fmt::print("  {}: {} {} {} {} n={} copies={}: {}\n", f["check"].get<std::string>(),
               f["experiment"].get<std::string>(), f["variant"].get<std::string>(),
               f["space"].get<std::string>(), f["dtype"].get<std::string>(),
               f["n"].get<std::size_t>(), f["copies"].get<std::string>(),
               f["detail"].get<std::string>());
  if (out) fmt::print("results: {}/results.csv, {}/results.json\n", *out, *out);
  return summary.failed + summary.errors > 0 ? exit_check_failed : 0;
}

int info(int& kokkos_argc, char** kokkos_argv, const std::vector<std::string>& command) {
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv);
  std::cout << portalab::collect_provenance(nullptr, command).dump(2) << "\n";
  Kokkos::print_configuration(std::cout, /*verbose=*/false);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
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

  auto* run_cmd = app.add_subcommand("run", "run the experiments of an input deck");
  std::string deck_path;
  std::optional<std::string> out;
  std::vector<std::string> spaces;
  portalab::DeckOverrides overrides;
  run_cmd->add_option("deck", deck_path, "input deck (TOML)")->required();
  run_cmd->add_option("--out", out, "directory for results.csv and results.json");
  run_cmd->add_option("--spaces", spaces, "execution spaces to run, e.g. Serial,Cuda")
      ->delimiter(',');
  run_cmd->add_option("--set", overrides.set,
                      "override a deck value: experiment.key=value or key=value (repeatable)");
  auto* list_cmd = app.add_subcommand("list", "experiments, variants, types and spaces compiled in");
  auto* info_cmd = app.add_subcommand("info", "Kokkos configuration and the devices, as JSON");

  try {
    app.parse(static_cast<int>(ours.size()), ours.data());
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : exit_bad_input;
  }
  if (!spaces.empty()) overrides.spaces = spaces;

  try {
    if (*list_cmd) {
      list_experiments();
      return 0;
    }
    if (*info_cmd) return info(kokkos_argc, kokkos_args.data(), command);
    return run(deck_path, out, overrides, command, kokkos_argc, kokkos_args.data());
  } catch (const portalab::InputError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_unexpected;
  }
}
