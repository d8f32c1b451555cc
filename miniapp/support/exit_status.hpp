// The exit status every command shares (drivers/portalab.cpp's header lists
// them): the run's, the start-up agreement's and the store's.
#pragma once

namespace portalab {

constexpr int exit_check_failed = 1;
constexpr int exit_bad_input = 2;
constexpr int exit_unexpected = 3;
constexpr int exit_nothing_measured = 4;

}  // namespace portalab
