// Device kernels that would take the suite down if run_device ran in its
// process: a crash, exit(3), abort() and a hang on the host side of the call,
// a kernel that never ends, a write past out and one far outside any
// allocation on the device, and one that writes nothing; beside one that
// works ("gpu_fine_sum", gpu_sum_kernel.cu's serial sum), whose cells must
// survive.
#include <cuda_runtime.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gpu_sum_kernel.hpp"
#include "plugin/ulpscope_plugin.h"

namespace {

__global__ void spin_forever(volatile int* never_set) {
  while (*never_set == 0) {
  }
}

// out[0] is the sum; out[1 .. 16] lie past a whole-array sum's one output.
__global__ void write_past(float* out) { out[1 + threadIdx.x] = 1.0f; }

__global__ void write_far(float* out) { out[(std::int64_t(1) << 40) + threadIdx.x] = 1.0f; }

int fine(const ulpscope_call* c, void* stream, char*, std::size_t) {
  ulpscope::test::launch_serial_sum_fp32(c->x, c->out, c->rows, c->cols, c->axis, 64, stream);
  return 0;
}

int segv(const ulpscope_call*, void*, char*, std::size_t) {
  raise(SIGSEGV);
  return 0;
}

int exits(const ulpscope_call*, void*, char*, std::size_t) { std::exit(3); }

int aborts(const ulpscope_call*, void*, char*, std::size_t) { std::abort(); }

// A kernel that waits for a flag nobody sets.
int hangs_on_device(const ulpscope_call*, void* stream, char* error, std::size_t size) {
  auto* s = static_cast<cudaStream_t>(stream);
  int* flag = nullptr;
  if (cudaMalloc(&flag, sizeof(int)) != cudaSuccess || cudaMemsetAsync(flag, 0, sizeof(int), s) != cudaSuccess) {
    std::snprintf(error, size, "cudaMalloc or cudaMemsetAsync failed");
    return 1;
  }
  spin_forever<<<1, 1, 0, s>>>(flag);
  return 0;
}

int overruns(const ulpscope_call* c, void* stream, char* error, std::size_t size) {
  fine(c, stream, error, size);
  write_past<<<1, 16, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<float*>(c->out));
  return 0;
}

int illegal_address(const ulpscope_call* c, void* stream, char*, std::size_t) {
  write_far<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<float*>(c->out));
  return 0;
}

int lazy(const ulpscope_call*, void*, char*, std::size_t) { return 0; }

#define SUM_FP32(name, fn) \
  { name, "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32, 0, 0, nullptr, fn, nullptr, nullptr, 0 }
const ulpscope_kernel_v1 kKernels[] = {
    SUM_FP32("gpu_fine_sum", fine),       SUM_FP32("gpu_segv_sum", segv),
    SUM_FP32("gpu_exit_sum", exits),      SUM_FP32("gpu_abort_sum", aborts),
    SUM_FP32("gpu_hang_sum", hangs_on_device), SUM_FP32("gpu_overrun_sum", overruns),
    SUM_FP32("gpu_illegal_address_sum", illegal_address), SUM_FP32("gpu_lazy_sum", lazy),
};
const ulpscope_plugin_v1 kPlugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "byo GPU crash plug-in", 8, kKernels};

}  // namespace

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &kPlugin; }
