#pragma once
// Bit-exact CPU models of NCCL 2.28's all-reduce arithmetic (docs/spec.md,
// "All-reduce across GPUs"): each element is a fold of its P inputs in the
// order that allreduce_topology.hpp gives, every addition rounded as NCCL's
// reduce_kernel.h rounds it on sm_90:
//   fp32   a + b in fp32;
//   fp16   __hadd: a + b rounded once to fp16;
//   bf16   __hadd (sm_80 and later): a + b rounded once to bf16;
//   fp8    __nv_fp8(__hadd(__half(a), __half(b))): rounded to fp16, then to
//          fp8 saturating (__NV_SATFINITE).
// allreduce_mean is ncclAvg, which NCCL runs for floating types as
// ncclDevPreMulSum (enqueue.cc, hostToDevRedOp): every input is first
// multiplied by s = T(float(1.0 / P)), rounded to T (fp8: the product in fp16,
// then to fp8), then summed; there is no division at the end.
// Method::upcast widens the inputs (fp32 to fp64, the narrower formats to
// fp32), folds them in NCCL's order for the wide type, divides the mean by P
// in double, and rounds once to T. Method::exact has no order:
// its model is the correctly rounded sum (mean), exact_allreduce below.
#include <cstddef>
#include <vector>

#include "formats/dtype.hpp"
#include "kernels/allreduce/nccl_runner.hpp"
#include "reference/exact_accumulator.hpp"

namespace ulpscope::allreduce {

struct FoldArithmetic {
  Dtype dtype = Dtype::fp32;
  bool mean = false;
  Method method = Method::plain;  // plain or upcast
  int ranks = 2;
};

// The type upcast all-reduces an input format in: fp64 for fp32, else fp32.
Dtype upcast_dtype(Dtype input);

// The mean's premultiplier s as NCCL computes it for this format, as a double.
double mean_scale(Dtype dtype, int ranks);

// out[i] = the fold over k of values[order[k] * stride + i], i < count: the
// values are rank-major rows of already-rounded inputs (doubles holding
// values of `dtype`). order has one entry per rank. Throws
// std::invalid_argument for Method::exact.
void fold_block(const FoldArithmetic& a, const std::vector<int>& order, const double* values, std::size_t stride,
                std::size_t count, double* out);

// The correctly rounded result of one element from the exact sum of its P
// inputs: RN_T(sum), or RN_T(sum / P) for the mean (IEEE specials as a sum's).
double exact_allreduce(const ExactAccumulator& sum, Dtype dtype, bool mean, int ranks);

}  // namespace ulpscope::allreduce
