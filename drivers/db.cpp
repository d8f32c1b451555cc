#include "db.hpp"

#include "output/console.hpp"
#include "output/json.hpp"
#include "support/console.hpp"
#include "support/environment.hpp"
#include "support/interrupt.hpp"
#include "support/text.hpp"
#include "results/result_files.hpp"
#include "store/prometheus.hpp"
#include "store/references.hpp"
#include "store/store.hpp"
#include "support/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <filesystem>
#include <sstream>

namespace portalab {

struct DbCommand {
  CLI::App* db = nullptr;
  CLI::App *import = nullptr, *history = nullptr, *fleet = nullptr;
  std::string path;
  bool json = false;
  bool quiet = false;
  double wait_s = 60;
  std::vector<std::string> import_paths;
  store::HistoryOptions history_options;
  store::FleetOptions fleet_options;
  std::string prometheus;  // fleet --prometheus FILE
};

namespace {

// A number an option takes: finite, and within [low, high].
CLI::Validator finite_in(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v) || v < low || v > high)
          return fmt::format("{}: expected a number from {:g} to {:g}", shown(text), low, high);
        return {};
      },
      fmt::format("NUMBER in [{:g}, {:g}]", low, high));
}

CLI::Validator not_empty(const char* what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        return text.empty() ? fmt::format("'': expected {}", what) : std::string();
      },
      "");
}

// --json: one JSON document on stdout; else text (output/printer.hpp).
std::unique_ptr<Printer> printer_of(const DbCommand& c) {
  if (c.json) return std::make_unique<JsonPrinter>();
  return std::make_unique<ConsolePrinter>(&std::cerr, &std::cout);
}

void add_store_option(CLI::App* sub, DbCommand& c) {
  sub->add_option("--db", c.path,
                  "the store (one SQLite file); default $PORTALAB_DB, else results/portalab.sqlite")
      ->check(not_empty("the path of the store, an SQLite file"));
}

}  // namespace

std::shared_ptr<DbCommand> add_db_command(CLI::App& app) {
  auto c = std::make_shared<DbCommand>();
  c->db = app.add_subcommand(
      "db", "the results store: import runs, their history, the fleet of nodes and GPUs (SQLite)");
  c->db->require_subcommand(1);
  c->import = c->db->add_subcommand(
      "import", "import runs (results.json files, or folders searched for them) into the store");
  c->import
      ->add_option("paths", c->import_paths,
                   "results folders, trees of them, or results.json files")
      ->required();
  add_store_option(c->import, *c);
  c->import
      ->add_option("--wait", c->wait_s, "seconds to wait for another import to finish (default 60)")
      ->check(CLI::Range(0.0, 86400.0));
  c->import->add_flag("--quiet", c->quiet, "no line per run");

  c->history = c->db->add_subcommand(
      "history", "each row's runs over time, the latest against the earlier ones, the regressions");
  add_store_option(c->history, *c);
  auto& h = c->history_options;
  c->history->add_option("--machine", h.machine, "only rows of this host name");
  c->history->add_option("--experiment", h.experiment, "only rows of this experiment");
  c->history->add_option("--variant", h.variant, "only rows of this variant");
  c->history->add_option("--dtype", h.dtype, "only rows of this type");
  c->history->add_option("--space", h.space, "only rows of this execution space");
  c->history->add_option("--gpu", h.gpu,
                         "only rows of this GPU (its UUID, as nvidia-smi -L says it)");
  c->history->add_option("--last", h.last,
                         "runs of each row looked at, the latest included (default 20)");
  c->history->add_option("--phase", h.phase, "h2d, kernel, d2h or total (default)")
      ->check(CLI::IsMember({"h2d", "kernel", "d2h", "total"}));
  c->history
      ->add_option("--threshold", h.threshold_pct,
                   "percent slower that is a regression (default 10)")
      ->check(finite_in(0, 1e6));
  c->history
      ->add_option("--sigmas", h.sigmas,
                   "run-to-run noise deviations a change must exceed (default 4)")
      ->check(finite_in(1e-9, 1e6));
  c->history
      ->add_option("--min-noise", h.min_noise,
                   "floor of the run-to-run noise, a fraction (default 0.01)")
      ->check(finite_in(0, 1e6));
  c->history
      ->add_option("--alpha", h.alpha,
                   "the U test's significance after Holm's correction, for rows whose runs kept "
                   "their repetitions (default 0.01)")
      ->check(finite_in(1e-12, 0.5));
  c->history
      ->add_option("--tolerance", h.tolerance,
                   "a change of the median no larger than this fraction is SAME, however "
                   "significant (default 0.03)")
      ->check(finite_in(0, 1e6));
  c->history->add_flag("--json", c->json, "one JSON document instead of tables");

  c->fleet = c->db->add_subcommand(
      "fleet",
      "the nodes and GPUs of one job or date range against each other and reference figures");
  add_store_option(c->fleet, *c);
  auto& f = c->fleet_options;
  c->fleet->add_option("--job", f.job, "runs of this Slurm job id (default: the latest job's)");
  c->fleet->add_option("--since", f.since,
                       "runs started from this date (YYYY-MM-DD[THH:MM:SS], UTC)");
  c->fleet->add_option("--until", f.until, "runs started up to this date, inclusive");
  c->fleet->add_option(
      "--row", f.rows,
      "rows to set side by side: EXPERIMENT[/VARIANT[/DTYPE[/N]]] (repeatable; default: "
      "the largest n of each experiment and variant)");
  c->fleet
      ->add_option("--tolerance", f.tolerance_pct,
                   "percent below the group's median that makes an outlier (default 10)")
      ->check(finite_in(1e-9, 99.999999));
  c->fleet->add_option("--references", f.references,
                       "reference figures, CSV: model,quantity,value,unit,source,date[,basis] "
                       "(default $PORTALAB_REFERENCE, else data/reference-figures.csv shipped "
                       "with portalab)");
  c->fleet->add_flag("--json", c->json, "one JSON document instead of tables");
  c->fleet->add_option("--prometheus", c->prometheus,
                       "also write the figures for node_exporter's textfile collector here (a "
                       ".prom file, written atomically)");
  return c;
}

bool db_command_given(const DbCommand& command) { return command.db->parsed(); }

// What a signal says while an import runs: its transaction is rolled back.
constexpr char import_stopping[] =
    "\nportalab: signal received: stopping the import; nothing of it is kept unless its commit "
    "is under way (send it again to stop at once)\n";

int run_db_command(const DbCommand& c) {
  if (c.json) keep_stdout_for_json();  // its stdout one JSON document
  std::string path;
  bool created = false;
  try {
    path = store::store_path(c.path);
    if (c.import->parsed()) {
      // A signal rolls the import back at the next run or thousand rows.
      install_interrupt_handlers(import_stopping);
      std::error_code ec;
      created = !std::filesystem::exists(path, ec);
      auto db = store::open_store(path, /*write=*/true, c.wait_s, &std::cerr);
      try {
        const auto sum = store::import_runs(*db, c.import_paths, c.quiet ? nullptr : &std::cerr,
                                            std::cerr);
        std::cout << fmt::format(
            "{}: imported {} runs ({} rows{}); {}{} already there; {}{} runs found\n", shown(path),
            sum.imported + sum.replaced, sum.rows,
            sum.incomplete ? fmt::format(", {} of them incomplete", sum.incomplete) : "",
            sum.replaced ? fmt::format("{} replacing incomplete ones; ", sum.replaced) : "",
            sum.already, sum.running ? fmt::format("{} still running, skipped; ", sum.running) : "",
            sum.found);
        if (sum.signal_during_commit) {
          print_to(stderr,
                   "{}: {} came while the import was being committed: the whole import was "
                   "kept (a commit is all or nothing)\n",
                   shown(path), signal_name(sum.signal_during_commit));
          return 128 + sum.signal_during_commit;
        }
        return 0;
      } catch (...) {
        if (created) store::forget_new_store(std::move(db), path);
        throw;
      }
    }
    auto db = store::open_store(path, /*write=*/false, c.wait_s, &std::cerr);
    if (c.history->parsed()) {
      const auto h = store::history(*db, c.history_options);
      printer_of(c)->history(h);
      return h.regressions.empty() ? 0 : 1;
    }
    auto options = c.fleet_options;
    options.references = store::reference_file(options.references);
    try {  // before the fleet is judged
      if (!c.prometheus.empty()) check_output_file(c.prometheus);
    } catch (const OutputError& e) {
      throw store::StoreError(2, e.what());
    }
    const auto f = store::fleet(*db, options);
    try {
      if (!c.prometheus.empty()) store::write_prometheus(c.prometheus, store::fleet_gauges(f));
    } catch (const OutputError& e) {
      print_to(stderr, "error: {}\n", e.what());
      return 1;
    }
    printer_of(c)->fleet(f);
    for (const char* part : {"gpus", "nodes"})
      for (const auto& m : f[part])
        if (m["outlier"].get<bool>()) return 1;
    return 0;
  } catch (const store::StoreError& e) {
    print_to(stderr, "error: {}\n", e.what());
    return e.code;
  } catch (const EnvironmentError& e) {
    print_to(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const Interrupted& e) {
    print_to(stderr,
             "error: {}: import stopped by {}: nothing of this import was kept, the store "
             "holds what it held before{}\n",
             shown(path), signal_name(e.signal), created ? " (none: it was not made)" : "");
    return 128 + e.signal;
  }
}

}  // namespace portalab
