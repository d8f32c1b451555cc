// What portalab prints, through one interface (output/printer.hpp): every
// printer told each thing in order, one that fails dropped and said once,
// and the console's lines of a run as it said them before the interface.
#include "output/console.hpp"
#include "output/printer.hpp"

#include "results/result.hpp"
#include "results/run_summary.hpp"
#include "support/files.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using portalab::ConsolePrinter;
using portalab::OutputError;
using portalab::Printer;
using portalab::Printers;
using portalab::Result;
using portalab::RowProgress;
using portalab::RunSummary;
using portalab::Status;

// Writes what it is told into `said`; with `fail_at`, throws OutputError at
// that row instead.
struct Recorder final : Printer {
  Recorder(std::string name, std::vector<std::string>& said, std::size_t fail_at = 0)
      : name(std::move(name)), said(said), fail_at(fail_at) {}
  void progress(std::string_view line) override { said.push_back(name + " " + std::string(line)); }
  void row(const Result& r, const RunSummary&, const RowProgress& at) override {
    if (at.done == fail_at) throw OutputError("disk full");
    said.push_back(name + " row " + r.variant);
  }
  void run_done(const RunSummary& s) override {
    said.push_back(name + " done " + std::to_string(s.results.size()));
  }
  std::string name;
  std::vector<std::string>& said;
  std::size_t fail_at;
};

Result row(const std::string& variant) {
  Result r;
  r.experiment = "stream_copy";
  r.variant = variant;
  r.space = "Serial";
  r.dtype = "float64";
  r.n = 1000;
  r.copies = portalab::CopyMode::none;
  r.status = Status::pass;
  r.total.median = 2.0;
  r.kernel.median = 1.5;
  return r;
}

TEST(Printers, EveryPrinterIsToldEachThingInTheOrderAdded) {
  std::vector<std::string> said;
  Printers all;
  all.add(std::make_unique<Recorder>("a", said));
  all.add(std::make_unique<Recorder>("b", said));
  RunSummary s;
  s.results = {row("kernel")};
  all.row(s.results[0], s, {1, 1, ""});
  all.run_done(s);
  EXPECT_EQ(said,
            (std::vector<std::string>{"a row kernel", "b row kernel", "a done 1", "b done 1"}));
}

TEST(Printers, APrinterThatFailsIsDroppedSaidOnceAndTheOthersGoOn) {
  std::vector<std::string> said, failures;
  Printers all([&](const OutputError& e) { failures.push_back(e.what()); });
  all.add(std::make_unique<Recorder>("files", said, /*fail_at=*/2));
  all.add(std::make_unique<Recorder>("console", said));
  RunSummary s;
  s.results = {row("first"), row("second"), row("third")};
  for (std::size_t i = 0; i < 3; ++i) all.row(s.results[i], s, {i + 1, 3, ""});
  all.run_done(s);
  EXPECT_EQ(failures, (std::vector<std::string>{"disk full"}));
  // The failing printer said nothing more after its failure; the console
  // was told the row that failed the files, and every one after.
  EXPECT_EQ(said,
            (std::vector<std::string>{"files row first", "console row first", "console row second",
                                      "console row third", "console done 3"}));
}

TEST(ConsolePrinter, ARowIsAProgressLineAndTheEndSaysTheCountsAndTheFiles) {
  std::ostringstream progress, out;
  ConsolePrinter console(&progress, &out, std::string("results/run1"));
  RunSummary s;
  s.results = {row("kernel"), row("deep_copy")};
  s.results[1].status = Status::fail;
  s.results[1].check.detail = "max error 1";
  s.failed = 1;
  console.row(s.results[0], s, {1, 2, " [1 s elapsed, ~1 s left]"});
  EXPECT_EQ(progress.str(),
            "[1/2] stream_copy kernel Serial float64 n=1000 copies=none: total 2 ms, kernel "
            "1.5 ms, PASS [1 s elapsed, ~1 s left]\n");
  console.run_done(s);
  const std::string end = out.str();
  EXPECT_NE(end.find("2 entries: 1 passed, 1 failed, 0 errors, 0 skipped, 0 not applicable"),
            std::string::npos)
      << end;
  EXPECT_NE(end.find(
                "  FAIL: stream_copy deep_copy Serial float64 n=1000 copies=none: max error 1"),
            std::string::npos)
      << end;
  EXPECT_NE(end.find("results: results/run1/results.csv, results/run1/results.json"),
            std::string::npos)
      << end;
}

TEST(ConsolePrinter, ARunThatWroteNoFilesSaysSo) {
  std::ostringstream out;
  ConsolePrinter console(nullptr, &out, std::string("results/run1"));
  RunSummary s;
  s.results = {row("kernel")};
  s.incomplete = "results/run1/results.csv: No space left on device";
  console.run_done(s);
  EXPECT_NE(out.str().find("results INCOMPLETE: results/run1/results.csv: No space left on "
                           "device; the files in results/run1 hold the entries written before"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("results: results/run1/results.csv,"), std::string::npos);
}

TEST(ConsolePrinter, NothingMeasuredSaysItsExitStatus) {
  std::ostringstream out;
  ConsolePrinter console(nullptr, &out);
  RunSummary s;
  s.results = {row("kernel")};
  s.results[0].status = Status::skipped;
  s.skipped = 1;
  console.run_done(s);
  EXPECT_NE(out.str().find("nothing was measured: every entry was skipped for memory (exit "
                           "status 4)"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(portalab::exit_status(s), 4);
}

}  // namespace
