#include "output/files.hpp"

namespace portalab {

void FilesPrinter::row(const Result& r, const RunSummary& so_far, const RowProgress&) {
  m_files.append(std::span<const Result>(&r, 1), so_far.to_json(false));
}

void FilesPrinter::run_done(const RunSummary& summary) { m_files.finish(summary.to_json(true)); }

}  // namespace portalab
