// A run's result files (results/result_files.hpp: results.csv,
// results.json and the journal) as a Printer: each row appended when it
// comes, the summary beside it; both files whole at the end.
#pragma once

#include "output/printer.hpp"
#include "results/result_files.hpp"

#include <string>

namespace portalab {

class FilesPrinter final : public Printer {
 public:
  // Made before anything is measured: a folder that cannot be written (or
  // that another run writes into) throws OutputError here.
  FilesPrinter(const std::string& dir, const nlohmann::json& provenance)
      : m_files(dir, provenance) {}
  // What became of an earlier run's files there, a sentence; "" when none.
  const std::string& moved_aside() const { return m_files.moved_aside(); }

  // Throw OutputError; the files then hold every row before the failing one.
  void row(const Result& r, const RunSummary& so_far, const RowProgress& at) override;
  void run_done(const RunSummary& summary) override;

 private:
  ResultFiles m_files;
};

}  // namespace portalab
