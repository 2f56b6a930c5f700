# Regenerates the golden file with Debian's python3-torch and compares it to the committed one.
execute_process(COMMAND ${PYTHON} ${SCRIPT} ${FRESH} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "make_golden.py failed (is python3-torch installed?):\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${COMMITTED} ${FRESH} RESULT_VARIABLE differ)
if(differ)
  message(FATAL_ERROR "tests/golden/schedules.tsv is stale: run /usr/bin/python3 tests/golden/make_golden.py")
endif()
