# lrkit's own CUDA kernels (train/src/cuda/: the fused residual add + LayerNorm):
# compiled where the CUDA code paths are on and a CUDA compiler is found
# (CUDACXX, CMAKE_CUDA_COMPILER, nvcc on the PATH or under CUDAToolkit_ROOT or
# /usr/local/cuda). The language is enabled here, at the top level, because
# every target that links lrkit_train must see it. LRKIT_CUDA_KERNELS=OFF
# builds without them (model.fused_norm=on is then refused). Architectures:
# CMAKE_CUDA_ARCHITECTURES (or CUDAARCHS), else PyTorch's TORCH_CUDA_ARCH_LIST
# ("8.0;9.0" -> 80;90), else those of this machine's GPUs (native, which needs
# a GPU at configure time). LibTorch 2.x's own find_package(Torch) enables CUDA
# first, sets CMAKE_CUDA_ARCHITECTURES to OFF and puts its -gencode flags (from
# TORCH_CUDA_ARCH_LIST, else the GPUs it sees) into CMAKE_CUDA_FLAGS: then the
# kernels are built for exactly PyTorch's architectures, which the line below names.
set(LRKIT_CUDA_KERNELS "AUTO" CACHE STRING "Compile lrkit's CUDA kernels: AUTO (with the CUDA code paths and a CUDA compiler) or OFF")
set_property(CACHE LRKIT_CUDA_KERNELS PROPERTY STRINGS AUTO OFF)
set(LRKIT_CUDA_KERNELS_ENABLED OFF)
if(LRKIT_HAVE_TORCH AND LRKIT_CUDA_ENABLED AND LRKIT_CUDA_KERNELS STREQUAL "AUTO")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(LRKIT_NVCC nvcc HINTS ${CUDAToolkit_ROOT}/bin $ENV{CUDA_HOME}/bin /usr/local/cuda/bin)
    if(LRKIT_NVCC)
      set(CMAKE_CUDA_COMPILER ${LRKIT_NVCC})
    endif()
  endif()
  if(CMAKE_CUDA_COMPILER OR DEFINED ENV{CUDACXX})
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
      if(DEFINED ENV{TORCH_CUDA_ARCH_LIST})
        string(REGEX REPLACE "[ ;]+" ";" lrkit_archs "$ENV{TORCH_CUDA_ARCH_LIST}")
        string(REPLACE "+PTX" "" lrkit_archs "${lrkit_archs}")
        string(REPLACE "." "" lrkit_archs "${lrkit_archs}")
        set(CMAKE_CUDA_ARCHITECTURES "${lrkit_archs}")
      else()
        set(CMAKE_CUDA_ARCHITECTURES native)
      endif()
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(LRKIT_CUDA_KERNELS_ENABLED ON)
    if(CMAKE_CUDA_ARCHITECTURES STREQUAL "OFF")
      string(REGEX MATCHALL "arch=compute_[0-9a-z]+,code=[a-z_0-9]+" lrkit_gencode "${CMAKE_CUDA_FLAGS}")
      if(lrkit_gencode)
        string(REPLACE ";" " " lrkit_gencode "${lrkit_gencode}")
        set(lrkit_archs "PyTorch's -gencode ${lrkit_gencode}")
      else()
        set(lrkit_archs "nvcc's default: no -gencode in CMAKE_CUDA_FLAGS")
      endif()
    else()
      set(lrkit_archs "architectures ${CMAKE_CUDA_ARCHITECTURES}")
    endif()
    message(STATUS "lrkit: CUDA kernels: ON (${CMAKE_CUDA_COMPILER}, ${lrkit_archs})")
  else()
    message(WARNING "lrkit: CUDA kernels: OFF: no CUDA compiler found (set CUDACXX or CMAKE_CUDA_COMPILER); "
                    "the trainer runs the composite ops where model.fused_norm would fuse them")
  endif()
elseif(LRKIT_HAVE_TORCH AND LRKIT_CUDA_ENABLED)
  message(STATUS "lrkit: CUDA kernels: OFF (LRKIT_CUDA_KERNELS=${LRKIT_CUDA_KERNELS})")
endif()
