# Shared compile settings for every lrkit target: warnings and sanitizers.
function(lrkit_configure_target target)
  # C++ only: nvcc takes other flags for a target's CUDA sources.
  target_compile_options(${target} PRIVATE
                         "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra;-Wpedantic;-Wshadow;-Wconversion;-Wno-sign-conversion>")
  if(LRKIT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${LRKIT_SANITIZE} -fno-omit-frame-pointer)
    # PUBLIC: a sanitized static library needs the sanitizer runtime wherever it is linked, an installed
    # lrkit's consumer included.
    target_link_options(${target} PUBLIC -fsanitize=${LRKIT_SANITIZE})
  endif()
endfunction()

# The sanitizer runtimes of LRKIT_SANITIZE as one LD_PRELOAD value (colon-separated) in `out`: an
# uninstrumented host (the Python interpreter) must load them before a sanitized extension module. Empty
# without sanitizers, or when the compiler does not name them (it is asked with -print-file-name, as GCC answers).
function(lrkit_sanitizer_preload out)
  set(library_address libasan.so)
  set(library_undefined libubsan.so)
  set(library_thread libtsan.so)
  set(library_leak liblsan.so)
  set(runtimes "")
  string(REPLACE "," ";" sanitizers "${LRKIT_SANITIZE}")
  foreach(sanitizer IN LISTS sanitizers)
    if(NOT DEFINED library_${sanitizer})
      continue()
    endif()
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${library_${sanitizer}}
                    OUTPUT_VARIABLE runtime OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(IS_ABSOLUTE "${runtime}" AND EXISTS "${runtime}")
      list(APPEND runtimes "${runtime}")
    else()
      message(WARNING "lrkit: ${CMAKE_CXX_COMPILER} does not name the ${sanitizer} sanitizer's runtime; "
                      "the tests that load lrkit into Python will fail to import it")
    endif()
  endforeach()
  string(REPLACE ";" ":" runtimes "${runtimes}")
  set(${out} "${runtimes}" PARENT_SCOPE)
endfunction()
