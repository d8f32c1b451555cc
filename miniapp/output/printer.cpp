#include "output/printer.hpp"

namespace portalab {

void Printers::each(const std::function<void(Printer&)>& say) {
  for (std::size_t i = 0; i < m_printers.size();) {
    try {
      say(*m_printers[i]);
      ++i;
    } catch (const OutputError& e) {
      m_printers.erase(m_printers.begin() + static_cast<std::ptrdiff_t>(i));
      if (m_failed) m_failed(e);
    }
  }
}

void Printers::progress(std::string_view line) {
  each([&](Printer& p) { p.progress(line); });
}
void Printers::row(const Result& r, const RunSummary& so_far, const RowProgress& at) {
  each([&](Printer& p) { p.row(r, so_far, at); });
}
void Printers::experiment_done(std::span<const Result> rows, const std::string& experiment) {
  each([&](Printer& p) { p.experiment_done(rows, experiment); });
}
void Printers::run_done(const RunSummary& summary) {
  each([&](Printer& p) { p.run_done(summary); });
}
void Printers::limits(const Calibration& c) {
  each([&](Printer& p) { p.limits(c); });
}
void Printers::experiments(std::span<const ExperimentInfo> all) {
  each([&](Printer& p) { p.experiments(all); });
}
void Printers::decks(const DeckIndex& index) {
  each([&](Printer& p) { p.decks(index); });
}
void Printers::history(const store::History& h) {
  each([&](Printer& p) { p.history(h); });
}
void Printers::fleet(const nlohmann::json& f) {
  each([&](Printer& p) { p.fleet(f); });
}
void Printers::health(const store::Health& h) {
  each([&](Printer& p) { p.health(h); });
}

}  // namespace portalab
