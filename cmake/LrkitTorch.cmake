# LibTorch for the folders that need it (distributed, train, cli). Sets
# LRKIT_HAVE_TORCH. torch/torch.h is precompiled once (a LibTorch translation
# unit takes ~16 s on these machines without it) and every LibTorch target
# reuses that PCH through lrkit_use_torch().
set(LRKIT_HAVE_TORCH OFF)
if(LRKIT_WITH_TORCH STREQUAL "OFF")
  message(STATUS "lrkit: LRKIT_WITH_TORCH=OFF: building the torch-free libraries only")
  return()
endif()
# Where CMake does not find LibTorch by itself (no Torch_DIR, nothing on
# CMAKE_PREFIX_PATH), ask each candidate python3 (LrkitPythonCandidates.cmake)
# whether its torch ships one (PyTorch wheels do: torch.utils.cmake_prefix_path).
find_package(Torch QUIET)
if(NOT Torch_FOUND)
  foreach(python IN LISTS lrkit_python_candidates)
    execute_process(COMMAND ${python} -c "import torch, torch.utils; print(torch.utils.cmake_prefix_path)"
                    OUTPUT_VARIABLE lrkit_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND EXISTS "${lrkit_torch_prefix}/Torch/TorchConfig.cmake")
      find_package(Torch QUIET PATHS "${lrkit_torch_prefix}" NO_DEFAULT_PATH)
      if(Torch_FOUND)
        message(STATUS "lrkit: LibTorch of ${python}'s torch (${lrkit_torch_prefix})")
        break()
      endif()
    endif()
  endforeach()
endif()
if(NOT Torch_FOUND)
  set(lrkit_no_torch "LibTorch not found (set Torch_DIR or CMAKE_PREFIX_PATH, install Debian's libtorch-dev, or a python3 whose torch ships LibTorch)")
  if(LRKIT_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "lrkit: LRKIT_WITH_TORCH=ON but ${lrkit_no_torch}")
  endif()
  message(STATUS "lrkit: ${lrkit_no_torch}: building the torch-free libraries (common, h5, schedules, controllers, "
                 "reweight, diagnostics) only; no distributed, train or lrkit")
  return()
endif()

# c10d's ProcessGroupGloo.hpp includes Gloo's own headers, which LibTorch wheels do not ship.
find_path(LRKIT_GLOO_INCLUDE_DIR gloo/config.h HINTS ${TORCH_INCLUDE_DIRS}
          DOC "The directory holding gloo/config.h (Debian/Ubuntu: libgloo-dev)")
if(NOT LRKIT_GLOO_INCLUDE_DIR)
  set(lrkit_no_gloo "LibTorch ${Torch_VERSION} at ${Torch_DIR} was found, but not Gloo's headers (gloo/config.h), which "
                    "c10d's ProcessGroupGloo.hpp includes: install libgloo-dev (Debian/Ubuntu) or pass "
                    "-DLRKIT_GLOO_INCLUDE_DIR=<the directory holding gloo/>")
  if(LRKIT_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "lrkit: ${lrkit_no_gloo}")
  endif()
  message(WARNING "lrkit: ${lrkit_no_gloo}; building the torch-free libraries only")
  return()
endif()
set(LRKIT_HAVE_TORCH ON)

if(LRKIT_WITH_CUDA STREQUAL "AUTO")
  if(TORCH_CUDA_LIBRARIES)
    set(LRKIT_CUDA_ENABLED ON)
  else()
    set(LRKIT_CUDA_ENABLED OFF)
  endif()
elseif(LRKIT_WITH_CUDA)
  if(NOT TORCH_CUDA_LIBRARIES)
    message(FATAL_ERROR "LRKIT_WITH_CUDA=ON but the LibTorch found at ${Torch_DIR} has no CUDA")
  endif()
  set(LRKIT_CUDA_ENABLED ON)
else()
  set(LRKIT_CUDA_ENABLED OFF)
endif()
message(STATUS "lrkit: LibTorch ${Torch_VERSION} from ${Torch_DIR}; CUDA code paths: ${LRKIT_CUDA_ENABLED}")

# ccache must be told that PCH use is fine.
if(LRKIT_CCACHE)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime ${LRKIT_CCACHE})
endif()

add_library(lrkit_torch_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/torch_pch.cpp)
target_link_libraries(lrkit_torch_pch PUBLIC ${TORCH_LIBRARIES})
target_precompile_headers(lrkit_torch_pch PUBLIC <torch/torch.h>)
lrkit_configure_target(lrkit_torch_pch)

function(lrkit_use_torch target)
  target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
  target_precompile_headers(${target} REUSE_FROM lrkit_torch_pch)
  if(LRKIT_CUDA_ENABLED)
    target_compile_definitions(${target} PUBLIC LRKIT_WITH_CUDA=1)
  endif()
endfunction()
