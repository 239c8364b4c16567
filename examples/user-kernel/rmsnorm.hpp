#pragma once
// RMSNorm over bf16 rows: y = x / sqrt(mean(x^2) + eps) * gamma, one row of
// `cols` values at a time, every value a bf16 bit pattern (uint16_t).
//
// How the sum of squares is accumulated is chosen when building:
//   RMSNORM_SUMSQ_IN_BF16 = 0  the good strategy: x^2 added in fp64
//   RMSNORM_SUMSQ_IN_BF16 = 1  the bad one: a running sum of squares kept in
//                              bf16, as a kernel written in the input format
//                              does (8 significant bits: once the sum is 2^8
//                              times a square, adding it changes nothing)
#include <cstdint>

#ifndef RMSNORM_SUMSQ_IN_BF16
#define RMSNORM_SUMSQ_IN_BF16 0
#endif

namespace rmsnorm {

// On the host.
void rmsnorm_bf16_host(const std::uint16_t* x, const std::uint16_t* gamma, std::uint16_t* y, std::int64_t rows,
                       std::int64_t cols, double eps);

// On the GPU (built when CUDA is): enqueues one block per row on `stream`
// (a cudaStream_t); returns the launch's cudaError_t as an int.
int rmsnorm_bf16_cuda(const std::uint16_t* x, const std::uint16_t* gamma, std::uint16_t* y, std::int64_t rows,
                      std::int64_t cols, double eps, int threads, void* stream);

}  // namespace rmsnorm
