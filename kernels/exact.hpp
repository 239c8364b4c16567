#pragma once
// Correctly rounded reductions on the caller's device arrays and stream: the
// `exact` accumulator of the tree kernels (docs/spec.md, "What `exact`
// guarantees") as an operation, for code that wants the answer rather than a
// measurement (docs/exact.md). Every output is the exact value rounded once,
// so it has the same bits on any launch, any GPU and any number of SMs.
//
//   ulpscope::exact::reduce({ulpscope::exact::Reduction::sum, x, nullptr, ulpscope::Dtype::fp16,
//                            1, n, out, ulpscope::Dtype::fp16}, stream);
//
// The call enqueues its work on `stream` (one or two kernels) and returns
// without waiting; its scratch memory comes from a stream-ordered pool of its
// own per device (cudaMallocFromPoolAsync), which keeps its memory between
// calls, and goes back on the same stream. Built only with CUDA.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "formats/dtype.hpp"

namespace ulpscope::exact {

enum class Reduction : std::uint8_t { sum, mean, dot, sumsq, norm2, mean_var };

// Values one row gives: mean_var its mean then its variance, the others one.
constexpr int outputs_per_row(Reduction r) { return r == Reduction::mean_var ? 2 : 1; }

struct Arguments {
  Reduction op = Reduction::sum;
  const void* x = nullptr;  // rows * cols elements of `in`, row-major, contiguous, on the device
  const void* y = nullptr;  // dot: the second operand, same shape; else unused
  Dtype in = Dtype::fp32;
  std::int64_t rows = 1;  // each row of cols elements is reduced; rows = 1: the whole array
  std::int64_t cols = 0;
  void* out = nullptr;  // rows * outputs_per_row(op) values of `out_dtype`, on the device
  Dtype out_dtype = Dtype::fp32;
};

// Throws std::invalid_argument for a request the kernels do not take (a
// format, a null pointer, a negative size), naming what is wrong, and
// ulpscope::GpuError (std::runtime_error) when a CUDA call fails.
void reduce(const Arguments& args, cudaStream_t stream);

}  // namespace ulpscope::exact
