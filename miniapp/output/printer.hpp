// What portalab prints, behind one interface, as nvbench's printer_base:
// each thing to say is said once, to a Printer, and each format is a
// Printer of its own. A run's rows, progress, tables and summary; the
// limits, calibrated or read; the experiments and decks `portalab list`
// shows; the history and fleet of `portalab db`; a node's health. The
// formats:
//
//   ConsolePrinter   the terminal: progress on stderr, tables and the end
//                    of a run on stdout, the other commands as text
//                    (console.hpp)
//   MarkdownPrinter  `list --format markdown`: the guide's reference pages
//                    (markdown.hpp)
//   JsonPrinter      one JSON document on stdout: `list --format json`,
//                    `db history --json`, `db fleet --json` (json.hpp)
//   FilesPrinter     a run's result files: results.csv, results.json and
//                    the journal (files.hpp)
//
// A printer says what its format can say and ignores the rest. Printers
// says each thing to several, in order; a printer whose output fails
// (OutputError) is dropped there, and the run goes on.
#pragma once

#include "results/result.hpp"
#include "results/run_summary.hpp"
#include "support/files.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace portalab {

struct ExperimentInfo;
struct Calibration;
struct DeckListing;
struct Deck;
struct Catalog;
namespace store {
struct History;
struct Health;
}  // namespace store

// Where a row comes in a run: the `done`th of `of` entries, and the time
// so far and left (" [1.2 s elapsed, ~3 s left]", or empty).
struct RowProgress {
  std::size_t done = 0, of = 0;
  std::string timing;
};

// A deck `portalab list --decks` shows: where it was found, and the deck
// itself as the catalog reads it.
struct ListedDeck {
  const DeckListing* listing;
  const Deck* deck;
};
struct DeckIndex {
  std::vector<std::string> folders;  // searched for decks by name, in order
  std::vector<ListedDeck> decks;
  const Catalog* catalog = nullptr;  // every space's, for the decks' spaces
};

class Printer {
 public:
  virtual ~Printer() = default;

  // A run, in this order: lines of progress at any time; each row once,
  // final, with the run's counts so far; each experiment's end; the end of
  // the run (or of what a signal left of it).
  virtual void progress(std::string_view /*line*/) {}
  virtual void row(const Result& /*r*/, const RunSummary& /*so_far*/, const RowProgress&) {}
  virtual void experiment_done(std::span<const Result> /*rows*/,
                               const std::string& /*experiment*/) {}
  virtual void run_done(const RunSummary& /*summary*/) {}

  // The machine's limits, calibrated or read (before a run, and
  // `portalab calibrate`).
  virtual void limits(const Calibration& /*c*/) {}

  // The other commands: one document each.
  virtual void experiments(std::span<const ExperimentInfo> /*all*/) {}
  virtual void decks(const DeckIndex& /*index*/) {}
  virtual void history(const store::History& /*h*/) {}
  virtual void fleet(const nlohmann::json& /*f*/) {}
  virtual void health(const store::Health& /*h*/) {}
};

// Says each thing to every printer added, in the order added. A printer
// that throws OutputError is dropped at once, `failed` told of it (before
// the printers after it are told the thing that failed), and the others go on.
class Printers final : public Printer {
 public:
  explicit Printers(std::function<void(const OutputError&)> failed = {})
      : m_failed(std::move(failed)) {}
  void add(std::unique_ptr<Printer> p) { m_printers.push_back(std::move(p)); }
  bool empty() const { return m_printers.empty(); }

  void progress(std::string_view line) override;
  void row(const Result& r, const RunSummary& so_far, const RowProgress& at) override;
  void experiment_done(std::span<const Result> rows, const std::string& experiment) override;
  void run_done(const RunSummary& summary) override;
  void limits(const Calibration& c) override;
  void experiments(std::span<const ExperimentInfo> all) override;
  void decks(const DeckIndex& index) override;
  void history(const store::History& h) override;
  void fleet(const nlohmann::json& f) override;
  void health(const store::Health& h) override;

 private:
  void each(const std::function<void(Printer&)>& say);
  std::vector<std::unique_ptr<Printer>> m_printers;
  std::function<void(const OutputError&)> m_failed;
};

}  // namespace portalab
