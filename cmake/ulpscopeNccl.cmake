# NCCL, for the all-reduce runner across the GPUs of one machine
# (kernels/allreduce/nccl_runner.hpp). NCCL is not a Debian 12 package: it is
# looked for beside the CUDA toolkit and in the system folders (where the GPU
# machines' package puts it). On where found and CUDA is on.
option(ULPSCOPE_ENABLE_NCCL "Build the NCCL all-reduce runner when NCCL is found" ON)
set(ULPSCOPE_HAVE_NCCL OFF)
set(ULPSCOPE_NCCL_WHY_NOT "")
if(NOT ULPSCOPE_ENABLE_NCCL)
  set(ULPSCOPE_NCCL_WHY_NOT "ULPSCOPE_ENABLE_NCCL is OFF")
elseif(NOT ULPSCOPE_HAVE_CUDA)
  set(ULPSCOPE_NCCL_WHY_NOT "no CUDA")
else()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(ULPSCOPE_HAVE_NCCL ON)
    add_library(ulpscope::nccl UNKNOWN IMPORTED)
    set_target_properties(ulpscope::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                                                    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  else()
    set(ULPSCOPE_NCCL_WHY_NOT "nccl.h or libnccl not found (set NCCL_INCLUDE_DIR and NCCL_LIBRARY)")
  endif()
endif()
if(ULPSCOPE_HAVE_NCCL)
  message(STATUS "ulpscope: NCCL ON (${NCCL_LIBRARY})")
else()
  message(STATUS "ulpscope: NCCL OFF: ${ULPSCOPE_NCCL_WHY_NOT}")
endif()
