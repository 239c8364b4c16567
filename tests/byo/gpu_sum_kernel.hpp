#pragma once
// A user's CUDA kernel for the GPU tests: recursive summation of fp32 in index
// order, one thread per reduction (the order of test::serial_fp32_sum, so
// that the host function is its bit-exact model).
#include <cstdint>

namespace ulpscope::test {

// Enqueues the sums of the [rows, cols] fp32 array x along axis (0 all,
// 1 inner, 2 outer) into out on stream (a cudaStream_t), `threads` per block.
// Launch errors are left for the caller to find (cudaGetLastError).
void launch_serial_sum_fp32(const void* x, void* out, std::int64_t rows, std::int64_t cols, int axis, int threads,
                            void* stream);

}  // namespace ulpscope::test
