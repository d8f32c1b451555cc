// Between Kokkos and a Kokkos Tools library the user loaded
// (KOKKOS_TOOLS_LIBS, --kokkos-tools-libs): the events a tool receives are
// made what tools rely on, whatever Kokkos 4.6 raises (docs/kokkos-tools.md).
#pragma once

namespace portalab {

// Called once Kokkos::initialize has loaded the tool, before anything runs;
// nothing happens without a tool. Every event callback the tool set is
// replaced by one that passes the event on
//   - from one thread at a time (a lock held while the tool runs: the tools
//     of kokkos-tools keep unguarded state, and concurrent instances raise
//     events from several threads);
//   - for allocations, in pairs: a deallocation reaches the tool only for a
//     pointer it saw allocated in that space, and with that allocation's
//     size and label (Kokkos 4.6's OpenMP frees its thread data under another
//     size; memory allocated while Kokkos started, before the tool was
//     loaded, is freed later); null pointers (a Cuda team scratch of 0
//     bytes) are not passed on; an address allocated again while the tool
//     holds it live is first deallocated to the tool.
// Callbacks taken over later (RegionRecorder's push) pass on through these.
// When the tool finalizes, one line on stderr says what was held back or
// corrected, if anything. PORTALAB_TOOLS_RAW=1 leaves the tool Kokkos'
// events as raised.
void guard_kokkos_tool();

}  // namespace portalab
