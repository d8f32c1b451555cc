cmake_minimum_required(VERSION 3.25)  # policies as the project's: the same on a newer CMake
# Runs `CASES CASE` (tests/tools/checker_cases.cpp) with the event checker TOOL
# loaded through KOKKOS_TOOLS_LIBS; checks its exit code and EXPECT in stderr.
execute_process(COMMAND ${CMAKE_COMMAND} -E env KOKKOS_TOOLS_LIBS=${TOOL} ${CASES} ${CASE}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT code EQUAL EXPECT_EXIT)
  message(FATAL_ERROR "exit code ${code}, expected ${EXPECT_EXIT}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not say '${EXPECT}'")
endif()
