# Which CCCL (CUB, Thrust, libcu++) the CUDA sources are built with, and
# whether its cub::DeviceReduce has gpu_to_gpu determinism (CCCL >= 3.1; CUDA
# 13.0 ships CCCL 3.0.1 without it). A newer CCCL is header-only: point
# ULPSCOPE_CCCL_INCLUDE_DIRS at its cub, thrust and libcudacxx/include folders
# and they are searched before the toolkit's.
# Sets ULPSCOPE_CCCL_VERSION_STRING, ULPSCOPE_HAVE_CUB_DETERMINISTIC (0/1),
# ULPSCOPE_CUB_DETERMINISTIC_MISSING (the reason, when 0).
set(ULPSCOPE_CCCL_INCLUDE_DIRS "" CACHE STRING
    "A newer CCCL's include folders (cub, thrust, libcudacxx/include; ;-separated), searched before the CUDA toolkit's")

find_file(_ulpscope_cccl_version_h cuda/std/__cccl/version.h
  PATHS ${ULPSCOPE_CCCL_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_INCLUDE_DIRS}/cccl
  NO_DEFAULT_PATH NO_CACHE)
set(ULPSCOPE_CCCL_VERSION_STRING "unknown")
if(_ulpscope_cccl_version_h)
  file(STRINGS "${_ulpscope_cccl_version_h}" _v REGEX "^#define CCCL_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CCCL_VERSION ([0-9]+).*" "\\1" _v "${_v}")
  if(_v MATCHES "^[0-9]+$")
    math(EXPR _major "${_v} / 1000000")
    math(EXPR _minor "(${_v} / 1000) % 1000")
    math(EXPR _patch "${_v} % 1000")
    set(ULPSCOPE_CCCL_VERSION_STRING "${_major}.${_minor}.${_patch}")
  endif()
endif()

# Compile the very call the shape makes. The result is cached per include
# folders, so changing ULPSCOPE_CCCL_INCLUDE_DIRS checks again.
include(CheckSourceCompiles)
string(MD5 _dirs_hash "${ULPSCOPE_CCCL_INCLUDE_DIRS}")
string(SUBSTRING "${_dirs_hash}" 0 12 _dirs_hash)
set(CMAKE_REQUIRED_INCLUDES ${ULPSCOPE_CCCL_INCLUDE_DIRS})
set(CMAKE_REQUIRED_FLAGS "-std=c++20")
set(CMAKE_REQUIRED_QUIET ON)
check_source_compiles(CUDA [=[
#include <cub/device/device_reduce.cuh>
#include <cuda/execution>
#include <cuda/stream_ref>
cudaError_t deterministic_sum(const float* x, float* out, long long n, cudaStream_t s) {
  const auto env = cuda::std::execution::env{
      cuda::execution::require(cuda::execution::determinism::gpu_to_gpu), cuda::stream_ref{s}};
  return cub::DeviceReduce::Reduce(x, out, n, cuda::std::plus<float>{}, 0.0f, env);
}
int main() { return 0; }
]=] ULPSCOPE_CUB_GPU_TO_GPU_${_dirs_hash})
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_QUIET)

if(ULPSCOPE_CUB_GPU_TO_GPU_${_dirs_hash})
  set(ULPSCOPE_HAVE_CUB_DETERMINISTIC 1)
  set(ULPSCOPE_CUB_DETERMINISTIC_MISSING "")
else()
  set(ULPSCOPE_HAVE_CUB_DETERMINISTIC 0)
  set(ULPSCOPE_CUB_DETERMINISTIC_MISSING
      "cub_deterministic needs cub::DeviceReduce with cuda::execution::determinism::gpu_to_gpu (CCCL >= 3.1); these CCCL headers (${ULPSCOPE_CCCL_VERSION_STRING}) lack it: set ULPSCOPE_CCCL_INCLUDE_DIRS to a newer CCCL's cub, thrust and libcudacxx/include")
endif()
message(STATUS "ulpscope: CCCL ${ULPSCOPE_CCCL_VERSION_STRING}, cub_deterministic ${ULPSCOPE_HAVE_CUB_DETERMINISTIC}")
