// The terminal: a run's progress lines on one stream (stderr), its tables
// and its end on another (stdout); `list`, `db` and `health` as text.
#pragma once

#include "output/printer.hpp"

#include <iosfwd>
#include <optional>
#include <string>

namespace portalab {

class ConsolePrinter final : public Printer {
 public:
  // Either stream may be nullptr: that part unsaid. `out_dir`: where the
  // run's result files are, for its last lines.
  ConsolePrinter(std::ostream* progress, std::ostream* out,
                 std::optional<std::string> out_dir = std::nullopt)
      : m_progress(progress), m_out(out), m_out_dir(std::move(out_dir)) {}

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
  std::ostream* m_progress;
  std::ostream* m_out;
  std::optional<std::string> m_out_dir;
};

// `portalab list --names`: an experiment's name a line, for scripts.
class NamesPrinter final : public Printer {
 public:
  void experiments(std::span<const ExperimentInfo> all) override;
};

}  // namespace portalab
