# LibTorch for the folders that need it (distributed, train, cli). Sets
# LRKIT_HAVE_TORCH. torch/torch.h is precompiled once (a LibTorch translation
# unit takes ~16 s on these machines without it) and every LibTorch target
# reuses that PCH through lrkit_use_torch().
set(LRKIT_HAVE_TORCH OFF)
if(LRKIT_WITH_TORCH STREQUAL "OFF")
  message(STATUS "lrkit: LRKIT_WITH_TORCH=OFF: building the torch-free libraries only")
  return()
endif()
if(LRKIT_WITH_TORCH STREQUAL "ON")
  find_package(Torch REQUIRED)
else()
  find_package(Torch QUIET)
  if(NOT Torch_FOUND)
    message(STATUS "lrkit: LibTorch not found (set Torch_DIR or CMAKE_PREFIX_PATH): building the torch-free "
                   "libraries (common, h5, schedules, controllers, reweight, diagnostics) only; no distributed, train or lrkit")
    return()
  endif()
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
