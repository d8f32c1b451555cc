// A shared library that is no Kokkos Tools library (no kokkosp_* function):
// portalab must refuse it as one (tests/CMakeLists.txt, tools.refused_not_a_tool).
extern "C" int portalab_not_a_tool() { return 42; }
