cmake_minimum_required(VERSION 3.25)  # policies as the project's: the same on a newer CMake
# `portalab run --energy on|off` end to end, on a fake powercap tree (RAPL
# readable, as on a bare-metal node): on, every row carries the CPU's energy
# and the run says what it reads; off, nothing is opened (no row has energy,
# the provenance says off) even where the deck's key says on; on over a deck
# whose key says off.
#   cmake -DPORTALAB=... -DOUT=... -P energy_option_check.cmake
file(REMOVE_RECURSE "${OUT}")
set(zone "${OUT}/powercap/intel-rapl:0")
file(MAKE_DIRECTORY "${zone}")
file(WRITE "${zone}/name" "package-0\n")
file(WRITE "${zone}/energy_uj" "1000\n")
file(WRITE "${zone}/max_energy_range_uj" "262143328850\n")
file(WRITE "${OUT}/deck.toml" "reps = 2\nwarmups = 0\ncalibrate = \"none\"\nspaces = [\"Serial\"]\n"
                              "copies = \"none\"\n[vector_poly]\nsizes = [100]\nvariants = [\"fused\"]\n"
                              "dtypes = [\"float64\"]\n")
file(WRITE "${OUT}/deck_off.toml" "energy = \"off\"\n")
file(READ "${OUT}/deck.toml" deck)
file(APPEND "${OUT}/deck_off.toml" "${deck}")

# run(NAME DECK ARGS...): the run's stderr in err_NAME, results.json in json_NAME.
function(run name deck)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env PORTALAB_POWERCAP_ROOT=${OUT}/powercap
            "${PORTALAB}" run "${deck}" --out "${OUT}/${name}" ${ARGN}
    RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
  message("${name}: ${err}")
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${name}: exit code ${code}")
  endif()
  file(READ "${OUT}/${name}/results.json" json)
  set(err_${name} "${err}" PARENT_SCOPE)
  set(json_${name} "${json}" PARENT_SCOPE)
endfunction()

function(expect_read name)
  if(NOT err_${name} MATCHES "energy: [^\n]*CPU through RAPL \\(intel-rapl:0 package-0\\)")
    message(FATAL_ERROR "${name}: the run does not say it reads RAPL")
  endif()
  string(JSON reps ERROR_VARIABLE no GET "${json_${name}}" results 0 energy cpu reps)
  if(NOT reps EQUAL 2)
    message(FATAL_ERROR "${name}: results[0].energy.cpu.reps is '${reps}' (${no}), expected 2")
  endif()
endfunction()

function(expect_off name)
  if(NOT err_${name} MATCHES "energy: off")
    message(FATAL_ERROR "${name}: the run does not say energy is off")
  endif()
  string(JSON type TYPE "${json_${name}}" results 0 energy)
  string(JSON said_off ERROR_VARIABLE no GET "${json_${name}}" provenance energy off)
  if(NOT type STREQUAL "NULL" OR NOT said_off)
    message(FATAL_ERROR "${name}: results[0].energy is ${type}, provenance.energy.off '${said_off}'")
  endif()
endfunction()

run(default "${OUT}/deck.toml")
expect_read(default)
run(off "${OUT}/deck.toml" --energy off)
expect_off(off)
run(deck_off "${OUT}/deck_off.toml")
expect_off(deck_off)
run(deck_off_on "${OUT}/deck_off.toml" --energy on)
expect_read(deck_off_on)
