#pragma once
// Between the gallery's dispatch (gallery_dispatch.cu) and the kernels of
// each input format (gallery_float.cu, gallery_fp16.cu, gallery_bf16.cu):
// one pass of gallery_order.hpp's plan, enqueued on a stream. Host code.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/gallery/gallery_order.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::gallery {

// The ops of gallery_ops.hpp's with_op table, by name.
enum class OpKind : std::uint8_t { sum_fp32, sum_fp16, sum_bf16, max };

// nullopt-free: the caller has checked unsupported() first.
constexpr OpKind op_kind(const KernelSpec& s) {
  if (s.op == Op::max) return OpKind::max;
  if (s.acc == Accumulator::fp32 || s.in == Dtype::fp32) return OpKind::sum_fp32;
  return s.in == Dtype::fp16 ? OpKind::sum_fp16 : OpKind::sum_bf16;
}

struct PassLaunch {
  Shape shape;
  Pass pass;
  int threads;
  const void* in;  // elements of the input format (first pass) or float partials
  float* out;      // pass.outputs partials (not the atomic kernels)
  void* slot;      // the atomic kernels' output slot
  cudaStream_t stream;
};

// A pass over float values: fp32 inputs, and every later pass.
void launch_pass_float(OpKind, const PassLaunch&);
// The first pass over fp16 / bf16 inputs.
void launch_pass_fp16(OpKind, const PassLaunch&);
void launch_pass_bf16(OpKind, const PassLaunch&);

// The atomics' slot to the identity; the last value (a float partial, or the
// slot) to the outputs.
void launch_reset_slot(OpKind, void* slot, cudaStream_t);
void launch_finish(OpKind, const float* value, std::int64_t n, Dtype out, Saturation sat, double* values,
                   double* unrounded, cudaStream_t);
void launch_finish_slot(OpKind, const void* slot, std::int64_t n, Dtype out, Saturation sat, double* values,
                        double* unrounded, cudaStream_t);

}  // namespace ulpscope::gallery
