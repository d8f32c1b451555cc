cmake_minimum_required(VERSION 3.25)  # policies as the project's: the same on a newer CMake
# Runs `PORTALAB ARGS` with KOKKOS_TOOLS_LIBS=LIBS where LIBS is given (its
# '|' read as ';', the separator of Kokkos' list: a ';' does not survive
# add_test's arguments); checks exit code 2, EXPECT in stderr, and that OUT,
# where given, was not made: the tool is refused before anything runs.
if(DEFINED LIBS)
  string(REPLACE "|" ";" libs "${LIBS}")
  set(ENV{KOKKOS_TOOLS_LIBS} "${libs}")
endif()
if(DEFINED OUT)
  file(REMOVE_RECURSE "${OUT}")
endif()
execute_process(COMMAND "${PORTALAB}" ${ARGS}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL 2)
  message(FATAL_ERROR "exit code ${code}, expected 2")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not say '${EXPECT}'")
endif()
if(DEFINED OUT AND EXISTS "${OUT}")
  message(FATAL_ERROR "${OUT} was made: the run began before the tool was refused")
endif()
