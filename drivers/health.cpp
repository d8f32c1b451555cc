#include "health.hpp"

#include "db.hpp"
#include "output/console.hpp"
#include "deck/deck.hpp"
#include "engine/agreement.hpp"
#include "engine/session.hpp"
#include "experiment/registry.hpp"
#include "platform/space_names.hpp"
#include "ranks/comm.hpp"
#include "results/result_files.hpp"
#include "store/health.hpp"
#include "store/prometheus.hpp"
#include "store/store.hpp"
#include "support/console.hpp"
#include "support/files.hpp"
#include "support/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace portalab {

struct HealthCommand {
  CLI::App* cmd = nullptr;
  std::string deck = "health";
  std::optional<std::string> out;
  std::string from;  // judge this earlier check's results folder; measure nothing
  std::vector<std::string> spaces;
  std::vector<std::string> set;
  std::string reference, db, prometheus;
  bool json = false;
  store::HealthOptions options;
};

namespace {

// results/health/<host>-<UTC time>: each check its own folder, as a run's.
std::string default_out() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return fmt::format("results/health/{}-{}", *host ? host : "node", stamp);
}

// The compiled spaces, less Serial where a parallel host space is there
// (the node's CPU is the parallel space's; Serial would add seconds).
std::vector<std::string> default_spaces() {
  auto spaces = catalog().spaces;
  const bool parallel_host = std::any_of(spaces.begin(), spaces.end(), [](const std::string& s) {
    return s == "OpenMP" || s == "Threads";
  });
  if (parallel_host) std::erase(spaces, std::string("Serial"));
  return spaces;
}

// Rank 0, after the run: the verdict, the store, the Prometheus file. The
// exit status.
int judge_run(const HealthCommand& c, const std::string& out, const std::string& references,
              int run_code) {
  const std::string file = (std::filesystem::path(out) / "results.json").string();
  // A folder given (--from) that holds no check is bad input; one this
  // check failed to write is an unhealthy node.
  const bool given = !c.from.empty();
  std::ifstream in(file);
  if (!in) {
    if (given) {
      print_to(stderr, "error: --from {}: no results.json there: not the folder of a check\n",
               shown(out));
      return exit_bad_input;
    }
    print_to(stderr, "degraded: the health check wrote no {} (exit {} above): unhealthy\n",
             shown(file), run_code);
    return exit_check_failed;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    print_to(stderr, "{}: {}: not JSON: {}\n", given ? "error" : "degraded", shown(file), e.what());
    return given ? exit_bad_input : exit_check_failed;
  }
  const std::string db_path = c.db.empty() && !std::getenv("PORTALAB_DB") ? std::string()
                                                                          : store::store_path(c.db);
  std::unique_ptr<store::Connection> db;
  store::Health h;
  try {
    if (!db_path.empty()) db = store::open_store(db_path, /*write=*/true, 60, &std::cerr);
    h = store::judge_health(doc, store::read_references(references), db.get(), c.options);
  } catch (const store::StoreError& e) {
    print_to(stderr, "error: {}\n", e.what());
    return e.code;
  }
  h.references = references;
  if (run_code != 0 && run_code != exit_nothing_measured)
    h.problems.push_back(fmt::format("the health deck's run exited {} (see above)", run_code));
  ConsolePrinter(&std::cerr, &std::cout).health(h);
  try {
    write_file_atomically((std::filesystem::path(out) / "health.json").string(),
                          to_json(h).dump(2) + "\n");
  } catch (const OutputError& e) {
    print_to(stderr, "error: {}\n", e.what());
  }
  if (db) {
    // Imported like any run; a store that cannot take it does not change
    // the verdict: the results folder holds the run.
    try {
      const auto sum = store::import_runs(*db, {out}, nullptr, std::cerr);
      print_to(stdout, "{}: imported {} run ({} rows)\n", shown(db_path), sum.imported, sum.rows);
    } catch (const store::StoreError& e) {
      print_to(stderr, "error: {} (import it later: portalab db import --db {} {})\n", e.what(),
               db_path, out);
    }
  }
  if (!c.prometheus.empty()) {
    try {
      store::write_prometheus(c.prometheus,
                              store::health_gauges(h, static_cast<double>(std::time(nullptr))));
      print_to(stdout, "prometheus: {}\n", shown(c.prometheus));
    } catch (const OutputError& e) {
      print_to(stderr, "error: {}\n", e.what());
      return exit_check_failed;
    }
  }
  return h.degraded() ? exit_check_failed : 0;
}

}  // namespace

std::shared_ptr<HealthCommand> add_health_command(CLI::App& app) {
  auto c = std::make_shared<HealthCommand>();
  c->cmd = app.add_subcommand(
      "health",
      "check this node in seconds (the health deck: bandwidths, copies, gemm, launch, links), "
      "each figure against its model's reference and the node's own history; exit 0 healthy, "
      "1 degraded, 2 bad input");
  c->cmd->add_option("--out", c->out,
                     "results folder of the check (default results/health/HOST-TIME)");
  c->cmd->add_option("--deck", c->deck, "the deck run (default: health, inputs/health.toml)");
  c->cmd->add_option("--from", c->from,
                     "judge the results folder of an earlier check (against another reference, "
                     "say) instead of measuring");
  c->cmd
      ->add_option("--spaces", c->spaces,
                   "spaces to check (default: every compiled one, Serial left out beside "
                   "OpenMP or Threads)")
      ->delimiter(',');
  c->cmd->add_option("--set", c->set, "override a deck value, as `portalab run --set`");
  c->cmd->add_option("--reference", c->reference,
                     "reference figures, CSV: model,quantity,value,unit,source,date[,basis] "
                     "(default $PORTALAB_REFERENCE, else data/reference-figures.csv shipped "
                     "with portalab)");
  c->cmd->add_option("--db", c->db,
                     "results store: the node's earlier runs judge it too, and the check is "
                     "imported (default $PORTALAB_DB; none without either)");
  c->cmd->add_option("--prometheus", c->prometheus,
                     "write the figures for node_exporter's textfile collector here (a .prom "
                     "file, written atomically)");
  c->cmd
      ->add_option("--tolerance", c->options.tolerance_pct,
                   "percent below a reference (or the node's own median) that is degraded; "
                   "latencies get 2.5 times it above (default 20)")
      ->check(CLI::Range(0.1, 99.0));
  c->cmd
      ->add_option("--history", c->options.history_runs,
                   "earlier runs of the same GPU or node looked at in the store (default 10)")
      ->check(CLI::Range(1, 1000));
  return c;
}

bool health_command_given(const HealthCommand& command) { return command.cmd->parsed(); }

int run_health_command(const HealthCommand& c, int& kokkos_argc, char** kokkos_argv,
                       const std::vector<std::string>& command_line) {
  const bool root = world().rank() == 0;
  const std::string references = store::reference_file(c.reference);
  // Everything given is checked before anything is measured.
  startup().check([&] {
    try {
      store::read_references(references);
    } catch (const store::StoreError& e) {
      throw InputError(e.what());
    }
    if (root && !c.prometheus.empty()) check_output_file(c.prometheus);
    // A check to run needs the build's GPU (--from judges one run before).
    if (c.from.empty())
      if (const std::string problem = device_problem(); !problem.empty()) throw InputError(problem);
    if (root && (!c.db.empty() || std::getenv("PORTALAB_DB"))) {
      try {
        store::open_store(store::store_path(c.db), /*write=*/true, 60, &std::cerr);
      } catch (const store::StoreError& e) {
        throw InputError(e.what());
      }
    }
  });
  const auto started = std::chrono::steady_clock::now();
  if (!c.from.empty()) {  // nothing measured: no Kokkos, rank 0 judges
    startup().check([&] {
      if (c.out || !c.spaces.empty() || !c.set.empty() || c.deck != "health")
        throw InputError(
            "--from judges a check already run: --out, --deck, --spaces and --set "
            "cannot apply");
    });
    if (const int code = startup().agree({"command: health --from " + c.from})) return code;
    return agreed_exit(root ? judge_run(c, c.from, references, 0) : 0);
  }
  const std::string out = c.out.value_or(default_out());
  DeckOverrides overrides;
  overrides.set = c.set;
  overrides.spaces = c.spaces.empty() ? default_spaces() : c.spaces;
  const int run_code =
      Session({c.deck, out, overrides, std::nullopt, false, std::nullopt, {}, command_line},
              kokkos_argc, kokkos_argv)
          .run();
  // Bad input, or a signal: said by the run, nothing to judge.
  if (run_code == exit_bad_input || run_code > 128) return run_code;
  int code = 0;
  if (root) {
    code = judge_run(c, out, references, run_code);
    print_to(stdout, "health: {} in {:.1f} s; results in {}\n",
             code == 0 ? "exit 0" : fmt::format("exit {}", code),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
             shown(out));
  }
  return agreed_exit(code);
}

}  // namespace portalab
