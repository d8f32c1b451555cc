# An installed portalab works away from its sources: installs the build
# (MODE=install: cmake --install; MODE=cpack: the TGZ unpacked) into a fresh
# folder, then, from another empty folder, lists the decks, runs a deck by
# name, and asks every installed script for --help.
#   cmake -DMODE=install|cpack -DBUILD=<build dir> -DWORK=<scratch dir>
#         -DPYTHON=<python3> -DSOURCE=<source dir> -P install_check.cmake
cmake_minimum_required(VERSION 3.25)

function(fail)
  string(JOIN "" message ${ARGN})
  message(FATAL_ERROR "${message}")
endfunction()

# Runs a command in ${elsewhere}; fails unless it exits 0. Output in out/err.
function(run_ok)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${elsewhere}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 0)
    fail("`${ARGN}` exited ${rc}\nstdout:\n${o}\nstderr:\n${e}")
  endif()
  set(out "${o}" PARENT_SCOPE)
  set(err "${e}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK})
set(elsewhere ${WORK}/elsewhere)
file(MAKE_DIRECTORY ${elsewhere})

if(MODE STREQUAL "install")
  set(prefix ${WORK}/prefix)
  run_ok(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
elseif(MODE STREQUAL "cpack")
  get_filename_component(cmake_dir ${CMAKE_COMMAND} DIRECTORY)
  find_program(CPACK cpack HINTS ${cmake_dir} REQUIRED)
  run_ok(${CPACK} -G TGZ --config ${BUILD}/CPackConfig.cmake -B ${WORK}/package)
  file(GLOB tarballs ${WORK}/package/portalab-*.tar.gz)
  list(LENGTH tarballs count)
  if(NOT count EQUAL 1)
    fail("cpack made ${count} tarballs in ${WORK}/package: '${tarballs}'")
  endif()
  file(MAKE_DIRECTORY ${WORK}/unpacked)
  file(ARCHIVE_EXTRACT INPUT ${tarballs} DESTINATION ${WORK}/unpacked)
  file(GLOB prefix LIST_DIRECTORIES true ${WORK}/unpacked/portalab-*)
else()
  fail("MODE must be install or cpack, not '${MODE}'")
endif()

foreach(f bin/portalab share/portalab/inputs/lab6-vector.toml share/portalab/inputs/default.toml
          share/portalab/scripts/plot.py share/portalab/scripts/portalab/results.py
          share/portalab/scripts/report.py share/portalab/scripts/portalab/report/report.html.j2
          share/portalab/scripts/dev/profile.sh share/portalab/scripts/dev/nsys_env.sh
          share/portalab/scripts/portalab/nsys_sqlite.py share/portalab/scripts/timeline.py
          share/doc/portalab/performance.md share/doc/portalab/adding-an-experiment.md
          share/portalab/scripts/slurm/submit.sh share/portalab/scripts/slurm/run_deck.sbatch
          share/portalab/scripts/slurm/healthcheck.sh share/portalab/data/reference-figures.csv
          share/portalab/scripts/validate.py share/portalab/schema/results.schema.json
          share/portalab/schema/limits.schema.json share/doc/portalab/README.md
          share/doc/portalab/LICENSE)
  if(NOT EXISTS ${prefix}/${f})
    fail("${MODE}: ${prefix}/${f} is missing")
  endif()
endforeach()
# Every shipped deck is installed.
file(GLOB shipped RELATIVE ${SOURCE}/inputs ${SOURCE}/inputs/*.toml)
foreach(d ${shipped})
  if(NOT EXISTS ${prefix}/share/portalab/inputs/${d})
    fail("${MODE}: deck ${d} is not installed")
  endif()
endforeach()

# The installed binary lists its own decks, not the source tree's.
run_ok(${prefix}/bin/portalab list --decks)
if(NOT out MATCHES "lab6-vector +Lab 6")
  fail("list --decks does not show lab6-vector with its first comment line:\n${out}")
endif()
if(NOT out MATCHES "share/portalab/inputs" OR out MATCHES "${SOURCE}/inputs")
  fail("list --decks should search the installed decks only:\n${out}")
endif()

# A mistyped command is named with the nearest; help describes a command.
execute_process(COMMAND ${prefix}/bin/portalab runn lab6-vector WORKING_DIRECTORY ${elsewhere}
                RESULT_VARIABLE rc ERROR_VARIABLE e OUTPUT_QUIET)
if(NOT rc EQUAL 2 OR NOT e MATCHES "'runn' is not a portalab command.*did you mean 'run'")
  fail("`portalab runn` exited ${rc}, without naming the command and the nearest:\n${e}")
endif()
run_ok(${prefix}/bin/portalab help run)
if(NOT out MATCHES "--dry-run")
  fail("`portalab help run` does not describe run's options:\n${out}")
endif()

# A deck by name, from a folder that has none (a folder of that name is no
# deck, and is passed over), at small sizes.
file(MAKE_DIRECTORY ${elsewhere}/lab6-vector)
run_ok(${CMAKE_COMMAND} -E env OMP_NUM_THREADS=2 OMP_PROC_BIND=false
       ${prefix}/bin/portalab run lab6-vector --set calibrate=none --set reps=2
       --set warmups=0 --set vector_poly.sizes=[1000] --set stream_copy.sizes=[1000]
       --spaces Serial --out results)
if(NOT err MATCHES "deck [^ ]*share/portalab/inputs/lab6-vector.toml")
  fail("the run did not take the installed lab6-vector.toml:\n${err}")
endif()
if(NOT EXISTS ${elsewhere}/results/results.json)
  fail("no results/results.json in ${elsewhere}")
endif()

# The installed schemas hold the run's files (77: this python3 has no jsonschema).
execute_process(COMMAND ${PYTHON} ${prefix}/share/portalab/scripts/validate.py results
                WORKING_DIRECTORY ${elsewhere} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 0 AND NOT rc EQUAL 77)
  fail("the installed validate.py exited ${rc} on the run's files:\n${o}${e}")
endif()

# The dry run of a deck by name, with the quick calibration it makes itself.
run_ok(${CMAKE_COMMAND} -E env OMP_NUM_THREADS=2 OMP_PROC_BIND=false
       ${prefix}/bin/portalab run lab6-vector --dry-run --spaces Serial --out dry)
if(NOT out MATCHES "dry run of [^ ]*share/portalab/inputs/lab6-vector.toml: ([0-9]+) entries")
  fail("the dry run did not plan the installed lab6-vector.toml:\n${out}")
endif()
if(NOT out MATCHES "estimated total: [^\n]* for ${CMAKE_MATCH_1} entries")
  fail("the dry run gave no estimated total for its ${CMAKE_MATCH_1} entries:\n${out}")
endif()
if(EXISTS ${elsewhere}/dry)
  fail("the dry run wrote ${elsewhere}/dry")
endif()
if(NOT err MATCHES "warning: --out dry: a dry run writes nothing")
  fail("the dry run did not say that --out is not used:\n${err}")
endif()

# The installed report of that run, where this python3 can draw it.
execute_process(COMMAND ${PYTHON} -c "import matplotlib, jinja2" RESULT_VARIABLE no_report
                OUTPUT_QUIET ERROR_QUIET)
if(no_report EQUAL 0)
  run_ok(${PYTHON} ${prefix}/share/portalab/scripts/report.py results --out report.html)
  if(NOT EXISTS ${elsewhere}/report.html)
    fail("the installed report.py wrote no ${elsewhere}/report.html")
  endif()
else()
  message(STATUS "${PYTHON} lacks matplotlib or jinja2: the installed report.py is not run")
endif()

# Every installed script answers --help, the user tools' (scripts/) and the
# development checks' (scripts/dev/); nsys_env.sh and bench_runs.sh are
# sourced, not scripts.
file(GLOB scripts ${prefix}/share/portalab/scripts/*.py ${prefix}/share/portalab/scripts/dev/*.py
     ${prefix}/share/portalab/scripts/dev/*.sh ${prefix}/share/portalab/scripts/slurm/submit.sh)
list(REMOVE_ITEM scripts ${prefix}/share/portalab/scripts/dev/nsys_env.sh
     ${prefix}/share/portalab/scripts/dev/bench_runs.sh)
foreach(sourced nsys_env.sh bench_runs.sh verdict_hog.toml verdict_compute.toml)
  if(NOT EXISTS ${prefix}/share/portalab/scripts/dev/${sourced})
    fail("scripts/dev/${sourced}, which the installed checks read, is not installed")
  endif()
endforeach()
foreach(s ${scripts})
  if(s MATCHES "\\.py$")
    run_ok(${PYTHON} ${s} --help)
  else()
    run_ok(bash ${s} --help)
  endif()
  if(out STREQUAL "")
    fail("${s} --help printed nothing")
  endif()
endforeach()

# The user tools as modules of the installed package, as docs/report.md runs them.
run_ok(${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/share/portalab/scripts
       ${PYTHON} -m portalab.compare --help)

# The installed Slurm settings run the installed binary.
run_ok(bash -c "source '${prefix}/share/portalab/scripts/slurm/site.sh' && echo \"$PORTALAB_BUILD\"")
string(STRIP "${out}" build)
if(NOT build STREQUAL "${prefix}/bin")
  fail("installed site.sh: PORTALAB_BUILD is '${build}', expected ${prefix}/bin")
endif()
message(STATUS "${MODE}: ${prefix} works from ${elsewhere}")
