# Regenerates the golden values with PyTorch (PYTHON imports torch) and compares
# them to the committed ones: every row, not the generator's "# ..." line
# (which names the torch version).
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${FRESH} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "make_golden.py failed under ${PYTHON}:\n${err}")
endif()
file(STRINGS ${COMMITTED} committed REGEX "^[^#]")
file(STRINGS ${FRESH} fresh REGEX "^[^#]")
if(NOT committed STREQUAL fresh)
  message(FATAL_ERROR "tests/golden/schedules.tsv differs from what PyTorch gives now: run ${PYTHON} ${SCRIPT}")
endif()
