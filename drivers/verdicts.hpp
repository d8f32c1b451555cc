// `portalab verdicts`: the verdicts of pairs of rows given as JSON, by the
// store's rules (miniapp/store/verdict.hpp), so that scripts/compare.py and
// `portalab db history` judge alike: the Mann-Whitney U test where both
// sides kept their repetitions (results schema 5), the older rule on the
// repetitions' ranges and the run-to-run noise otherwise.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>

namespace portalab {

struct VerdictsCommand;

std::shared_ptr<VerdictsCommand> add_verdicts_command(CLI::App& app);

bool verdicts_command_given(const VerdictsCommand& command);

// Reads the request on stdin, writes the verdicts on stdout: 0; 2 bad input
// (said in one line on stderr).
int run_verdicts_command(const VerdictsCommand& command);

}  // namespace portalab
