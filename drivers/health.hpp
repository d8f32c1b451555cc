// `portalab health`: a bounded check of one node that a scheduler or a
// monitoring agent runs (docs/health.md): the health deck run, its figures
// judged (miniapp/store/health.hpp), the run imported into a store where
// one is given, the figures written for Prometheus where asked.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace portalab {

struct HealthCommand;

// Registers `health` on app; its options land in the returned object.
std::shared_ptr<HealthCommand> add_health_command(CLI::App& app);

bool health_command_given(const HealthCommand& command);

// The exit status, the same on every rank: 0 healthy; 1 degraded (or the
// check could not run to its end); 2 bad input; 128 + N stopped by signal N.
int run_health_command(const HealthCommand& command, int& kokkos_argc, char** kokkos_argv,
                       const std::vector<std::string>& command_line);

}  // namespace portalab
