cmake_minimum_required(VERSION 3.25)  # policies as the project's: the same on a newer CMake
# Configures the project afresh in WORK with ARGS (and the Kokkos this build
# uses, installed or fetched: its cache of built prefixes, its archives) and
# checks the outcome: EXPECT_FAIL set, that configuring fails; and that its
# output matches EXPECT (the message a user would act on).
file(REMOVE_RECURSE "${WORK}")
string(REPLACE "|" ";" backends "${KOKKOS_BACKENDS}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G "${GENERATOR}"
          "-DCMAKE_CXX_COMPILER=${CXX}" "-DKokkos_DIR=${KOKKOS_DIR}"
          "-DKokkosKernels_DIR=${KOKKOSKERNELS_DIR}" "-DPORTALAB_KOKKOS_CACHE=${KOKKOS_CACHE}"
          "-DPORTALAB_KOKKOS_BACKENDS=${backends}" "-DPORTALAB_DEPS_DIR=${DEPS_DIR}"
          "-DPORTALAB_CUDA_ARCH=${CUDA_ARCH}" -DPORTALAB_ENABLE_TESTS=OFF
          -DPORTALAB_ENABLE_BENCHMARKS=OFF ${ARGS}
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
message("${err}")
if(EXPECT_FAIL AND code EQUAL 0)
  message(FATAL_ERROR "configuring with ${ARGS} succeeded; it should fail")
elseif(NOT EXPECT_FAIL AND NOT code EQUAL 0)
  message(FATAL_ERROR "configuring with ${ARGS} failed (exit ${code})")
endif()
# CMake wraps messages at 80 columns: match across the wraps.
string(REGEX REPLACE "[ \n]+" " " said "${out}${err}")
if(NOT said MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not say '${EXPECT}'")
endif()
file(REMOVE_RECURSE "${WORK}")
