# The Python package `lrkit` (python/): pybind11 bindings of the schedule
# library and the HDET controller, plus pure-Python torch integrations. Built
# when pybind11 and a Python with development headers are found
# (LRKIT_PYTHON=AUTO), required with ON. The interpreter: Python3_EXECUTABLE
# when given, else the first candidate (LrkitPythonCandidates.cmake) that imports
# torch and numpy, else the first that imports numpy: on Debian the python3
# first on the PATH may be another interpreter without Debian's packages.
set(LRKIT_PYTHON "AUTO" CACHE STRING "Build the lrkit Python package (pybind11): AUTO (when found), ON or OFF")
set_property(CACHE LRKIT_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(LRKIT_HAVE_PYTHON OFF)

function(lrkit_python_imports python modules result)
  execute_process(COMMAND ${python} -c "import ${modules}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(${result} TRUE PARENT_SCOPE)
  else()
    set(${result} FALSE PARENT_SCOPE)
  endif()
endfunction()

# The first candidate (LrkitPythonCandidates.cmake) that imports every one of `modules` ("torch, numpy"), or "".
function(lrkit_first_python_importing modules result)
  foreach(candidate IN LISTS lrkit_python_candidates)
    lrkit_python_imports(${candidate} "${modules}" ok)
    if(ok)
      set(${result} ${candidate} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${result} "" PARENT_SCOPE)
endfunction()

# The Python the tests use for PyTorch references and torchrun: the first
# candidate that imports torch (empty when none does; those tests then skip).
if(NOT DEFINED CACHE{LRKIT_TORCH_PYTHON})
  lrkit_first_python_importing("torch" found)
  set(LRKIT_TORCH_PYTHON "${found}" CACHE FILEPATH "A Python that imports torch, for the tests (empty: none)")
endif()

if(NOT LRKIT_PYTHON STREQUAL "OFF")
  if(NOT Python3_EXECUTABLE)
    foreach(wanted "torch, numpy" "numpy")
      lrkit_first_python_importing("${wanted}" found)
      if(found)
        set(Python3_EXECUTABLE ${found} CACHE FILEPATH "The Python the lrkit package is built for")
        break()
      endif()
    endforeach()
  endif()
  # A pybind11 installed by pip keeps its CMake files inside the package, off CMake's search path:
  # the interpreter says where they are. -I (isolated mode) because under `pip install .` pip's
  # build isolation would hide the interpreter's own site-packages from it.
  set(lrkit_pybind11_hint "")
  if(Python3_EXECUTABLE)
    execute_process(COMMAND ${Python3_EXECUTABLE} -I -c "import pybind11; print(pybind11.get_cmake_dir())"
                    OUTPUT_VARIABLE lrkit_pybind11_hint OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(LRKIT_PYTHON STREQUAL "ON")
    set(lrkit_python_need REQUIRED)
  else()
    set(lrkit_python_need QUIET)
  endif()
  find_package(Python3 ${lrkit_python_need} COMPONENTS Interpreter Development.Module)
  # LibTorch 2.x's CMake config finds FindPython's `Python`, the interpreter alone. pybind11 3 then builds the
  # module with that one (python_add_library), which exists only once its module component is found too.
  if(Python_FOUND AND Python3_FOUND)
    set(Python_EXECUTABLE ${Python3_EXECUTABLE})
    find_package(Python ${lrkit_python_need} COMPONENTS Interpreter Development.Module)
  endif()
  find_package(pybind11 CONFIG ${lrkit_python_need} HINTS ${lrkit_pybind11_hint})
  if(Python3_FOUND AND pybind11_FOUND)
    set(LRKIT_HAVE_PYTHON ON)
    message(STATUS "lrkit: Python package for ${Python3_EXECUTABLE} (${Python3_VERSION}), pybind11 ${pybind11_VERSION} (${pybind11_DIR})")
  else()
    message(STATUS "lrkit: no Python package (needs pybind11, e.g. Debian pybind11-dev, and a Python with headers, python3-dev)")
  endif()
endif()
