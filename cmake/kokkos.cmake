# Kokkos and Kokkos Kernels: an installed pair first (a site's module, Spack,
# Kokkos_ROOT), otherwise the pinned release sources, built and installed once
# into a prefix that every build tree of the same configuration shares.
#
# Sets Kokkos_DIR/KokkosKernels_DIR (through find_package) and
# PORTALAB_KOKKOS_ORIGIN ("installed" or "fetched"), PORTALAB_KOKKOS_LOCATION
# and PORTALAB_KOKKOS_CONFIGURATION for the provenance of every result.
#
# Why not FetchContent's add_subdirectory: the asan preset would rebuild Kokkos
# with the sanitizers' flags, every build tree would rebuild it, and an
# installed Kokkos' config (its nvcc_wrapper launcher, its compile flags) is the
# one path portalab's CMake then has to support.

set(PORTALAB_KOKKOS_VERSION 4.6.01)
set(PORTALAB_KOKKOS_KERNELS_VERSION 4.6.02)
# Accepted archives: the release assets (as Spack checks them) and `git archive`
# of the same tag (the form an offline mirror such as ../shared/vendor holds).
set(portalab_kokkos_url
    "https://github.com/kokkos/kokkos/releases/download/4.6.01/kokkos-4.6.01.tar.gz")
set(portalab_kokkos_sha256
    b9d70e4653b87a06dbb48d63291bf248058c7c7db4bd91979676ad5609bb1a3a
    d8a8a5e15331c46b900d3f75d2b62b0b32f067b126a4a75d465224c899765084)
set(portalab_kokkos_kernels_url
    "https://github.com/kokkos/kokkos-kernels/releases/download/4.6.02/kokkos-kernels-4.6.02.tar.gz")
set(portalab_kokkos_kernels_sha256
    a953f445660ed5aaab10e18fc4a90c4c178291e9d9d97d20abd4e6027f1193ec
    581ec04666a9bf922db6f471c468a65ad03a0d0d0c23db64cc7717c93d5ca17b)

option(PORTALAB_FETCH_KOKKOS
  "Build the pinned Kokkos ${PORTALAB_KOKKOS_VERSION} and Kokkos Kernels ${PORTALAB_KOKKOS_KERNELS_VERSION} when none is found" ON)
set(PORTALAB_KOKKOS_BACKENDS "SERIAL;OPENMP" CACHE STRING
  "Execution spaces of a fetched Kokkos (SERIAL, OPENMP, THREADS, CUDA, HIP); an installed Kokkos has its own")
set(PORTALAB_DEPS_DIR "$ENV{PORTALAB_DEPS_DIR}" CACHE PATH
  "Folder holding kokkos-${PORTALAB_KOKKOS_VERSION}.tar.gz and kokkos-kernels-${PORTALAB_KOKKOS_KERNELS_VERSION}.tar.gz; set, nothing is downloaded")
set(PORTALAB_KOKKOS_CACHE "${CMAKE_BINARY_DIR}/_deps" CACHE PATH
  "Where a fetched Kokkos is built and installed, one prefix per configuration (the presets share build/_deps)")

# --- An installed Kokkos ----------------------------------------------------
# A Kokkos_DIR left in the cache by an earlier configure that built the pinned
# pair is not an installed one: look again, and reuse the prefix below.
foreach(package Kokkos KokkosKernels)
  string(FIND "${${package}_DIR}" "${PORTALAB_KOKKOS_CACHE}/" at)
  if(at EQUAL 0)
    unset(${package}_DIR CACHE)
  endif()
endforeach()
find_package(Kokkos 4.6 CONFIG QUIET)
if(Kokkos_FOUND)
  cmake_path(GET Kokkos_DIR PARENT_PATH kokkos_prefix)  # <prefix>/lib/cmake
  cmake_path(GET kokkos_prefix PARENT_PATH kokkos_prefix)
  cmake_path(GET kokkos_prefix PARENT_PATH kokkos_prefix)
  find_package(KokkosKernels CONFIG QUIET HINTS ${kokkos_prefix})
  if(NOT KokkosKernels_FOUND)
    message(FATAL_ERROR
      "portalab needs Kokkos Kernels built against the Kokkos at ${Kokkos_DIR}. Point "
      "KokkosKernels_ROOT (or Kokkos_ROOT, if installed in the same prefix) at it; "
      "`module load kokkos-kernels` or `spack install kokkos-kernels` provide one. Or "
      "configure with -DCMAKE_DISABLE_FIND_PACKAGE_Kokkos=ON to build the pinned pair.")
  endif()
  set(PORTALAB_KOKKOS_ORIGIN installed)
  set(PORTALAB_KOKKOS_LOCATION "${kokkos_prefix}")
  set(PORTALAB_KOKKOS_CONFIGURATION "devices ${Kokkos_DEVICES}; arch ${Kokkos_ARCH}")
  string(REPLACE ";" "," PORTALAB_KOKKOS_CONFIGURATION "${PORTALAB_KOKKOS_CONFIGURATION}")
  message(STATUS "Kokkos ${Kokkos_VERSION}: installed at ${kokkos_prefix} (${Kokkos_DEVICES}; "
                 "arch ${Kokkos_ARCH}); Kokkos Kernels ${KokkosKernels_VERSION} at ${KokkosKernels_DIR}")
  return()
endif()
if(NOT PORTALAB_FETCH_KOKKOS)
  message(FATAL_ERROR
    "portalab needs Kokkos >= 4.6 (and Kokkos Kernels), found through CMake's config files, "
    "and PORTALAB_FETCH_KOKKOS is OFF.\n"
    "Point Kokkos_ROOT at an installation, e.g.\n"
    "  cmake --preset host -DKokkos_ROOT=/opt/kokkos/host\n"
    "Ways to get one: `module load kokkos kokkos-kernels` on an HPC system; "
    "`spack install kokkos-kernels +blas +lapack ^kokkos +openmp` (add +cuda cuda_arch=90 for "
    "GPUs); or -DPORTALAB_FETCH_KOKKOS=ON to build the pinned ${PORTALAB_KOKKOS_VERSION}.")
endif()

# --- The pinned sources -----------------------------------------------------
# An archive from PORTALAB_DEPS_DIR (never a download there) or from the
# network, checked against the known hashes either way.
function(portalab_kokkos_archive name url hashes out)
  if(PORTALAB_DEPS_DIR)
    set(archive "${PORTALAB_DEPS_DIR}/${name}")
    if(NOT EXISTS "${archive}" OR IS_DIRECTORY "${archive}")
      message(FATAL_ERROR
        "PORTALAB_DEPS_DIR is ${PORTALAB_DEPS_DIR}, which has no ${name}: expected the "
        "release archive there (nothing is downloaded while PORTALAB_DEPS_DIR is set).")
    endif()
  else()
    set(archive "${PORTALAB_KOKKOS_CACHE}/downloads/${name}")
    if(NOT EXISTS "${archive}")
      message(STATUS "Downloading ${url}")
      list(GET hashes 0 release_hash)
      file(DOWNLOAD "${url}" "${archive}.part" STATUS status TLS_VERIFY ON
           EXPECTED_HASH SHA256=${release_hash})
      list(GET status 0 code)
      if(NOT code EQUAL 0)
        file(REMOVE "${archive}.part")
        list(GET status 1 why)
        message(FATAL_ERROR
          "Could not download ${url} (${why}). Without network, put ${name} in a folder and "
          "set PORTALAB_DEPS_DIR to it (environment or -D), or point Kokkos_ROOT at an "
          "installed Kokkos.")
      endif()
      file(RENAME "${archive}.part" "${archive}")
    endif()
  endif()
  file(SHA256 "${archive}" hash)
  if(NOT hash IN_LIST hashes)
    string(REPLACE ";" " or " expected "${hashes}")
    message(FATAL_ERROR
      "${archive} is not the pinned ${name}: its SHA-256 is ${hash}, expected ${expected} "
      "(the release asset, or `git archive` of the tag).")
  endif()
  set(${out} "${archive}" PARENT_SCOPE)
  set(${out}_SHA256 "${hash}" PARENT_SCOPE)
endfunction()

# Runs one step of the dependency build, its output in a log; on failure the
# log's end and its path.
function(portalab_kokkos_step what log)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_FILE "${log}" ERROR_FILE "${log}")
  if(NOT code EQUAL 0)
    file(STRINGS "${log}" lines)
    list(LENGTH lines count)
    math(EXPR first "${count} - 25")
    if(first LESS 0)
      set(first 0)
    endif()
    list(SUBLIST lines ${first} -1 tail)
    list(JOIN tail "\n" tail)
    message(FATAL_ERROR "${what} failed (exit ${code}); the whole log: ${log}\n${tail}")
  endif()
endfunction()

# --- The configuration: one prefix per distinct one -------------------------
set(backends ${PORTALAB_KOKKOS_BACKENDS})
list(TRANSFORM backends TOUPPER)
set(known_backends SERIAL OPENMP THREADS CUDA HIP)
foreach(backend IN LISTS backends)
  if(NOT backend IN_LIST known_backends)
    message(FATAL_ERROR "PORTALAB_KOKKOS_BACKENDS names ${backend}; expected some of "
                        "${known_backends} (e.g. \"SERIAL;OPENMP\").")
  endif()
endforeach()
set(kokkos_options -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20
    -DCMAKE_CXX_EXTENSIONS=OFF -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF)
foreach(backend IN LISTS backends)
  list(APPEND kokkos_options -DKokkos_ENABLE_${backend}=ON)
endforeach()
set(kokkos_compiler "${CMAKE_CXX_COMPILER}")
set(kokkos_env "")
set(patches "")
if("CUDA" IN_LIST backends)
  if(NOT PORTALAB_CUDA_ARCH)
    message(FATAL_ERROR "A fetched Kokkos with CUDA needs its GPU: set PORTALAB_CUDA_ARCH "
                        "(HOPPER90, AMPERE80, ...), as the cuda preset does.")
  endif()
  find_package(CUDAToolkit REQUIRED)
  string(REGEX MATCH "[0-9]+$" sm "${PORTALAB_CUDA_ARCH}")
  # nvcc_wrapper's default sm_70 is refused by nvcc 13 in CMake's compiler check.
  list(APPEND kokkos_options -DKokkos_ARCH_${PORTALAB_CUDA_ARCH}=ON -DCMAKE_CXX_FLAGS=-arch=sm_${sm})
  set(kokkos_env NVCC_WRAPPER_DEFAULT_COMPILER=${CMAKE_CXX_COMPILER}
                 CUDACXX=${CUDAToolkit_NVCC_EXECUTABLE})
  if(CUDAToolkit_VERSION VERSION_GREATER_EQUAL 13)
    # Kokkos 4.6.01 predates CUDA 13: three runtime wrappers changed signature.
    list(APPEND patches ${CMAKE_CURRENT_LIST_DIR}/patches/kokkos-4.6.01-cuda13.patch)
  endif()
endif()
if("HIP" IN_LIST backends)
  if(NOT PORTALAB_HIP_ARCH)
    message(FATAL_ERROR "A fetched Kokkos with HIP needs its GPU: set PORTALAB_HIP_ARCH "
                        "(AMD_GFX90A, ...), as the hip preset does.")
  endif()
  list(APPEND kokkos_options -DKokkos_ARCH_${PORTALAB_HIP_ARCH}=ON)
endif()
set(PORTALAB_KOKKOS_EXTRA_OPTIONS "" CACHE STRING
  "More -D options for a fetched Kokkos (the hip preset's: Debian's ROCm paths)")
# An option whose value is itself a list (the hip preset's AMDGPU flags, its
# `;` written `\;`) cannot pass through execute_process's arguments, which
# split it: it goes to Kokkos' configure in an initial-cache script (-C).
set(kokkos_initial_cache "")
foreach(option IN LISTS PORTALAB_KOKKOS_EXTRA_OPTIONS)
  if(option MATCHES ";" AND option MATCHES "^-D([A-Za-z0-9_]+)(:[A-Z]+)?=(.*)$")
    string(APPEND kokkos_initial_cache
           "set(${CMAKE_MATCH_1} [==[${CMAKE_MATCH_3}]==] CACHE STRING \"\")\n")
  else()
    list(APPEND kokkos_options "${option}")
  endif()
endforeach()

# Kokkos Kernels: the host BLAS and LAPACK (and cuBLAS, cuSOLVER), no
# explicit instantiation (with it the build takes over half an hour on 2 cores).
set(kernels_options -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20
    -DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON
    -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_ENABLE_TESTS=OFF
    -DKokkosKernels_ENABLE_EXAMPLES=OFF -DKokkosKernels_ENABLE_PERFTESTS=OFF)
foreach(inst DOUBLE FLOAT COMPLEX_DOUBLE COMPLEX_FLOAT HALF BHALF LAYOUTLEFT LAYOUTRIGHT
        OFFSET_INT OFFSET_SIZE_T ORDINAL_INT ORDINAL_INT64_T EXECSPACE_SERIAL EXECSPACE_OPENMP
        EXECSPACE_THREADS EXECSPACE_CUDA EXECSPACE_HIP MEMSPACE_HOSTSPACE MEMSPACE_CUDASPACE
        MEMSPACE_CUDAUVMSPACE MEMSPACE_HIPSPACE)
  list(APPEND kernels_options -DKokkosKernels_INST_${inst}=OFF)
endforeach()
if("CUDA" IN_LIST backends)
  list(APPEND kernels_options -DKokkosKernels_ENABLE_TPL_CUBLAS=ON
       -DKokkosKernels_ENABLE_TPL_CUSOLVER=ON -DCMAKE_CXX_FLAGS=-arch=sm_${sm})
endif()
include(CheckLanguage)
check_language(Fortran)
if(NOT CMAKE_Fortran_COMPILER)
  # Without Fortran, Kokkos Kernels cannot ask FortranCInterface how BLAS
  # symbols are named (the GPU nodes have none): lower case, one underscore.
  list(APPEND kernels_options "-DF77_BLAS_MANGLE=(name,NAME) name ## _")
endif()

string(JOIN "\n" key "kokkos ${PORTALAB_KOKKOS_VERSION}" "kernels ${PORTALAB_KOKKOS_KERNELS_VERSION}"
       "compiler ${CMAKE_CXX_COMPILER} ${CMAKE_CXX_COMPILER_VERSION}" "${kokkos_options}"
       "${kernels_options}" "${kokkos_env}")
if(kokkos_initial_cache)
  string(APPEND key "\n${kokkos_initial_cache}")
endif()
foreach(patch IN LISTS patches)
  file(SHA256 "${patch}" patch_hash)
  string(APPEND key "\npatch ${patch_hash}")
endforeach()
string(SHA256 key_hash "${key}")
string(SUBSTRING "${key_hash}" 0 10 key_hash)
string(TOLOWER "${backends}" name)
string(REPLACE ";" "-" name "${name}")
set(prefix "${PORTALAB_KOKKOS_CACHE}/kokkos-${PORTALAB_KOKKOS_VERSION}-${name}-${key_hash}")
set(stamp "${prefix}/portalab-built.txt")

# One configure at a time builds a given prefix; the others wait and reuse it.
file(MAKE_DIRECTORY "${PORTALAB_KOKKOS_CACHE}")
file(LOCK "${prefix}.lock" GUARD FILE TIMEOUT 7200 RESULT_VARIABLE lock_status)
if(NOT lock_status EQUAL 0)
  message(FATAL_ERROR "Could not lock ${prefix}.lock (${lock_status}): another configure "
                      "building the same Kokkos for two hours?")
endif()
if(EXISTS "${stamp}")
  file(READ "${stamp}" built)
endif()
if(NOT EXISTS "${stamp}" OR NOT built STREQUAL key)
  portalab_kokkos_archive(kokkos-${PORTALAB_KOKKOS_VERSION}.tar.gz "${portalab_kokkos_url}"
                          "${portalab_kokkos_sha256}" kokkos_archive)
  portalab_kokkos_archive(kokkos-kernels-${PORTALAB_KOKKOS_KERNELS_VERSION}.tar.gz
                          "${portalab_kokkos_kernels_url}" "${portalab_kokkos_kernels_sha256}"
                          kernels_archive)
  set(work "${prefix}-build")
  file(REMOVE_RECURSE "${work}" "${prefix}")
  file(MAKE_DIRECTORY "${work}")
  message(STATUS "Kokkos: none installed; building the pinned ${PORTALAB_KOKKOS_VERSION} and "
                 "Kokkos Kernels ${PORTALAB_KOKKOS_KERNELS_VERSION} into ${prefix} (once; "
                 "minutes; logs in ${work})")
  file(ARCHIVE_EXTRACT INPUT "${kokkos_archive}" DESTINATION "${work}/src")
  file(ARCHIVE_EXTRACT INPUT "${kernels_archive}" DESTINATION "${work}/src")
  set(kokkos_src "${work}/src/kokkos-${PORTALAB_KOKKOS_VERSION}")
  set(kernels_src "${work}/src/kokkos-kernels-${PORTALAB_KOKKOS_KERNELS_VERSION}")
  foreach(patch IN LISTS patches)
    find_program(PORTALAB_PATCH patch)
    if(NOT PORTALAB_PATCH)
      message(FATAL_ERROR "Applying ${patch} to the fetched Kokkos needs `patch` (package patch).")
    endif()
    portalab_kokkos_step("Patching Kokkos with ${patch}" "${work}/patch.log"
      ${PORTALAB_PATCH} -p1 -N -d "${kokkos_src}" -i "${patch}")
    message(STATUS "Kokkos: patched with ${patch}")
  endforeach()
  if("CUDA" IN_LIST backends)
    set(kokkos_compiler "${kokkos_src}/bin/nvcc_wrapper")
  endif()
  cmake_host_system_information(RESULT jobs QUERY NUMBER_OF_LOGICAL_CORES)
  set(run ${CMAKE_COMMAND} -E env ${kokkos_env} ${CMAKE_COMMAND})
  set(initial_cache "")
  if(kokkos_initial_cache)
    file(WRITE "${work}/kokkos-initial-cache.cmake" "${kokkos_initial_cache}")
    set(initial_cache -C "${work}/kokkos-initial-cache.cmake")
  endif()
  portalab_kokkos_step("Configuring Kokkos" "${work}/kokkos-configure.log"
    ${run} ${initial_cache} -S "${kokkos_src}" -B "${work}/kokkos" -G "${CMAKE_GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${kokkos_compiler}" "-DCMAKE_INSTALL_PREFIX=${prefix}" ${kokkos_options})
  portalab_kokkos_step("Building Kokkos" "${work}/kokkos-build.log"
    ${run} --build "${work}/kokkos" --parallel ${jobs})
  portalab_kokkos_step("Installing Kokkos" "${work}/kokkos-install.log"
    ${run} --install "${work}/kokkos")
  if("CUDA" IN_LIST backends)
    set(kokkos_compiler "${prefix}/bin/nvcc_wrapper")
  endif()
  portalab_kokkos_step("Configuring Kokkos Kernels" "${work}/kernels-configure.log"
    ${run} -S "${kernels_src}" -B "${work}/kernels" -G "${CMAKE_GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${kokkos_compiler}" "-DCMAKE_INSTALL_PREFIX=${prefix}"
    "-DKokkos_ROOT=${prefix}" ${kernels_options})
  portalab_kokkos_step("Building Kokkos Kernels" "${work}/kernels-build.log"
    ${run} --build "${work}/kernels" --parallel ${jobs})
  portalab_kokkos_step("Installing Kokkos Kernels" "${work}/kernels-install.log"
    ${run} --install "${work}/kernels")
  file(WRITE "${prefix}/portalab-sources.txt"
       "kokkos-${PORTALAB_KOKKOS_VERSION}.tar.gz sha256 ${kokkos_archive_SHA256} from ${kokkos_archive}\n"
       "kokkos-kernels-${PORTALAB_KOKKOS_KERNELS_VERSION}.tar.gz sha256 ${kernels_archive_SHA256} from ${kernels_archive}\n")
  file(REMOVE_RECURSE "${work}")  # sources and objects: only the install is kept
  file(WRITE "${stamp}" "${key}")
else()
  message(STATUS "Kokkos: reusing the pinned ${PORTALAB_KOKKOS_VERSION} built in ${prefix}")
endif()
file(LOCK "${prefix}.lock" RELEASE)

# CMAKE_DISABLE_FIND_PACKAGE_Kokkos (a way to ask for this path) must not hide
# the prefix just built.
set(CMAKE_DISABLE_FIND_PACKAGE_Kokkos OFF)
set(CMAKE_DISABLE_FIND_PACKAGE_KokkosKernels OFF)
find_package(Kokkos 4.6.1 EXACT CONFIG REQUIRED PATHS "${prefix}"
             NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
find_package(KokkosKernels CONFIG REQUIRED PATHS "${prefix}" NO_DEFAULT_PATH
             NO_CMAKE_FIND_ROOT_PATH)
unset(CMAKE_DISABLE_FIND_PACKAGE_Kokkos)
unset(CMAKE_DISABLE_FIND_PACKAGE_KokkosKernels)
set(PORTALAB_KOKKOS_ORIGIN fetched)
set(PORTALAB_KOKKOS_LOCATION "${prefix}")
list(JOIN kokkos_options " " PORTALAB_KOKKOS_CONFIGURATION)
foreach(option IN LISTS PORTALAB_KOKKOS_EXTRA_OPTIONS)
  if(option MATCHES ";")
    string(REPLACE ";" "," option "${option}")
    string(APPEND PORTALAB_KOKKOS_CONFIGURATION " ${option}")
  endif()
endforeach()
string(REPLACE "\\" "" PORTALAB_KOKKOS_CONFIGURATION "${PORTALAB_KOKKOS_CONFIGURATION}")
if(patches)
  string(APPEND PORTALAB_KOKKOS_CONFIGURATION "; patched for CUDA 13")
endif()
message(STATUS "Kokkos ${Kokkos_VERSION}: fetched and built in ${prefix} "
               "(${PORTALAB_KOKKOS_CONFIGURATION}); Kokkos Kernels ${KokkosKernels_VERSION}")
