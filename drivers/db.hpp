// `portalab db import|history|fleet`: the results store (miniapp/store/),
// from the command line, in tables and --json.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace portalab {

struct DbCommand;

// Registers `db` and its subcommands on app; the options land in the
// returned object, which run_db_command reads.
std::shared_ptr<DbCommand> add_db_command(CLI::App& app);

// true where `db` was the command given.
bool db_command_given(const DbCommand& command);

// The exit status: 0; 1 a regression or an outlier found, or the store
// could not be written (locked, disk full); 2 bad input; 128 + N stopped
// by signal N.
int run_db_command(const DbCommand& command);

}  // namespace portalab
