# Regenerates the golden values with PyTorch (PYTHON imports torch) and compares
# them to the committed ones as numbers (relative 1e-12), not as text: another
# torch version may print a last digit differently, and the generator's "# ..."
# line names the version.
execute_process(COMMAND ${PYTHON} ${SCRIPT} --check ${COMMITTED} ${FRESH} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "tests/golden/schedules.tsv or schedules_momentum.tsv differs from what PyTorch gives under "
                      "${PYTHON} (regenerate with ${PYTHON} ${SCRIPT} if PyTorch is right):\n${err}")
endif()
