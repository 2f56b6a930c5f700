# Installs the build into a scratch prefix, builds tests/install/consumer
# against it with find_package(lrkit) (configured with HINTS, the build's own
# dependency locations), runs it and checks its output: the
# schedule library always, the drop-in HDET scheduler of lrkit::distributed
# when EXPECT_DISTRIBUTED (a build with LibTorch). The installed `lrkit` runs a
# schedule, and with LibTorch finds the installed lrkit-torch for train.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${LRKIT_BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND "${WORK_DIR}/prefix/bin/lrkit" schedule "linear(peak=1)" --steps 2 --format tsv
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc OR NOT out STREQUAL "step\tlr\n0\t1\n1\t0.5\n2\t0\n")
  message(FATAL_ERROR "the installed lrkit schedule printed '${out}' (exit ${rc})\n${err}")
endif()
if(EXPECT_DISTRIBUTED)
  execute_process(COMMAND "${WORK_DIR}/prefix/bin/lrkit" train --help RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc OR NOT out MATCHES "--train\\.steps")
    message(FATAL_ERROR "the installed lrkit train --help (lrkit-torch) exited ${rc}: ${err}")
  endif()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -C "${HINTS}" -S "${CONSUMER_SOURCE}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
                        "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "configuring the consumer failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "building the consumer failed:\n${out}\n${err}")
endif()
execute_process(COMMAND "${WORK_DIR}/build/consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(STRIP "${out}" out)
if(rc OR NOT out STREQUAL "0.0005 0.001 0.0005")
  message(FATAL_ERROR "consumer printed '${out}' (exit ${rc}); expected '0.0005 0.001 0.0005'")
endif()
message(STATUS "consumer printed ${out}")
if(EXISTS "${WORK_DIR}/build/distributed_consumer")
  execute_process(COMMAND "${WORK_DIR}/build/distributed_consumer" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(STRIP "${out}" out)
  if(rc OR NOT out STREQUAL "0.2 spread averaged")
    message(FATAL_ERROR "distributed_consumer printed '${out}' (exit ${rc}); expected '0.2 spread averaged'\n${err}")
  endif()
  message(STATUS "distributed_consumer printed ${out}")
elseif(EXPECT_DISTRIBUTED)
  message(FATAL_ERROR "the install has LibTorch targets but the consumer built no distributed_consumer")
endif()
# The Python package from the install prefix (when this build made one).
if(PYTHON AND PYTHON_INSTALL_DIR)
  set(sanitizer_environment "")
  if(SANITIZER_PRELOAD)  # a sanitized build: the interpreter loads the runtimes first, and its own leaks are not lrkit's
    set(sanitizer_environment "LD_PRELOAD=${SANITIZER_PRELOAD}" "ASAN_OPTIONS=$ENV{ASAN_OPTIONS}:detect_leaks=0")
  endif()
  # Debian's torch 1.13 can abort at the interpreter's exit after a Gloo group ("terminate called without an
  # active exception", upstream; seen once in a clean-clone CI run, the line printed whole): such a run is tried
  # once more, as tests/python/conftest.py does, any other failure is not.
  foreach(attempt 1 2)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${WORK_DIR}/prefix/${PYTHON_INSTALL_DIR}" ${sanitizer_environment}
                            ${PYTHON} "${CONSUMER_SOURCE}/use_from_python.py"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc OR NOT err MATCHES "terminate called without an active exception")
      break()
    endif()
  endforeach()
  string(STRIP "${out}" out)
  if(rc OR NOT out MATCHES "^0\\.0005 0\\.001 0\\.0005( 0\\.0005 1\\.0)?$")
    message(FATAL_ERROR "use_from_python.py printed '${out}' (exit ${rc}); expected '0.0005 0.001 0.0005[ 0.0005 1.0]'\n${err}")
  endif()
  message(STATUS "use_from_python.py printed ${out}")
endif()
