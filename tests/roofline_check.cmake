cmake_minimum_required(VERSION 3.25)  # policies as the project's: the same on a newer CMake
# A calibrated run of a tiny deck, then scripts/roofline.py on its results:
# one PNG per space, each a real PNG.
file(REMOVE_RECURSE "${OUT}")
execute_process(
  COMMAND "${PORTALAB}" run "${DECK}" --out "${OUT}" --set vector_poly.sizes=[10000]
          --set reps=2 --set copies=none
  RESULT_VARIABLE code ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "portalab run failed (${code}): ${err}")
endif()
execute_process(
  COMMAND "${PYTHON}" "${SCRIPT}" "${OUT}/results.json" --out "${OUT}/plots"
  RESULT_VARIABLE code OUTPUT_VARIABLE pngs ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "roofline.py failed (${code}): ${err}")
endif()
string(STRIP "${pngs}" pngs)
string(REPLACE "\n" ";" pngs "${pngs}")
list(LENGTH pngs count)
if(count LESS 1)
  message(FATAL_ERROR "roofline.py wrote no plot")
endif()
foreach(png IN LISTS pngs)
  file(READ "${png}" magic LIMIT 8 HEX)
  if(NOT magic STREQUAL "89504e470d0a1a0a")
    message(FATAL_ERROR "${png} is not a PNG (starts with ${magic})")
  endif()
endforeach()
