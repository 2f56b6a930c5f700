# The interpreters lrkit's configure step may ask about torch, numpy and the
# like, in the order scripts/find_python.sh tries them: each python3 on the
# PATH, then $PYTHON, then the system's: python3 in the bin/ of each of CMake's
# system prefixes (on Debian the python3 first on the PATH may lack Debian's
# packages, which the system's has; on GPU machines it is often the one with torch).
set(lrkit_python_candidates "")
string(REPLACE ":" ";" lrkit_path_dirs "$ENV{PATH}")
foreach(dir IN LISTS lrkit_path_dirs)
  list(APPEND lrkit_python_candidates "${dir}/python3")
endforeach()
list(APPEND lrkit_python_candidates "$ENV{PYTHON}")
foreach(prefix IN LISTS CMAKE_SYSTEM_PREFIX_PATH)
  list(APPEND lrkit_python_candidates "${prefix}/bin/python3")
endforeach()
list(FILTER lrkit_python_candidates EXCLUDE REGEX "^$")
set(lrkit_existing "")
foreach(candidate IN LISTS lrkit_python_candidates)
  if(EXISTS "${candidate}" AND NOT IS_DIRECTORY "${candidate}")
    list(APPEND lrkit_existing "${candidate}")
  endif()
endforeach()
set(lrkit_python_candidates ${lrkit_existing})
list(REMOVE_DUPLICATES lrkit_python_candidates)
