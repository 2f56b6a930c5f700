# Shared compile settings for every lrkit target: warnings and sanitizers.
function(lrkit_configure_target target)
  # C++ only: nvcc takes other flags for a target's CUDA sources.
  target_compile_options(${target} PRIVATE
                         "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra;-Wpedantic;-Wshadow;-Wconversion;-Wno-sign-conversion>")
  if(LRKIT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${LRKIT_SANITIZE} -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${LRKIT_SANITIZE})
  endif()
endfunction()
