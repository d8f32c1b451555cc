// portalab's standard streams. A closed one (`2>&-`) would be the descriptor
// the next open() returns, a result file then receiving the messages; and
// fmt::print throws when a write fails, so a closed or full stderr, or a
// full disk behind stdout, would stop a run mid-way and lose its files.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string_view>

namespace portalab {

// First thing at start-up: descriptors 0, 1 and 2 found closed are opened
// on /dev/null. stdin reads nothing and stderr's messages go nowhere (there
// is nowhere else to say them); stdout is opened read-only, so that what is
// printed there fails, and is reported at exit as any failed write to stdout.
void keep_standard_streams_open();

// Writes text to a stream and never throws. A failure of stdout stays on
// the stream (ferror) for exit_code_after_output; one of stderr is dropped.
// What goes to stderr is made terminal_safe (support/text.hpp) on the way.
void write_to(std::FILE* stream, std::string_view text);

// fmt::print that never throws: every message of portalab goes through it.
template <class... Args>
void print_to(std::FILE* stream, fmt::format_string<Args...> format, Args&&... args) {
  write_to(stream, fmt::vformat(format, fmt::make_format_args(args...)));
}

// For a command whose stdout is one JSON document (info, list --format
// json, db history/fleet --json): from here on, what anything else prints on
// stdout (a Kokkos tool at its start or end, a library's banner) goes to
// stderr, and write_json() alone reaches the real stdout. Call it before
// anything is loaded.
void keep_stdout_for_json();
// The document on stdout (the real one, after keep_stdout_for_json); a
// failure kept for standard_output_written.
void write_json(std::string_view text);

// At the end of every command: stdout (and std::cout) flushed. False, said
// on stderr, when anything printed there could not be written (a full disk,
// /dev/full, a closed stdout).
bool standard_output_written();

}  // namespace portalab
