// The gallery's passes over float values (fp32 inputs, and the partials of
// every format), and the small kernels around them.
#include "kernels/gallery/gallery_launch.cuh"

namespace ulpscope::gallery {
namespace {

template <class F>
void with_kind(OpKind k, F&& f) {
  switch (k) {
    case OpKind::sum_fp32: return f(std::type_identity<SumFp32>{});
    case OpKind::sum_fp16: return f(std::type_identity<SumNative<Fp16Format>>{});
    case OpKind::sum_bf16: return f(std::type_identity<SumNative<Bf16Format>>{});
    case OpKind::max: return f(std::type_identity<MaxOp>{});
  }
  throw std::invalid_argument("unknown gallery op");
}

}  // namespace

void launch_pass_float(OpKind k, const PassLaunch& L) {
  with_kind(k, [&](auto tag) { launch_pass<typename decltype(tag)::type, float>(L); });
}

void launch_reset_slot(OpKind k, void* slot, cudaStream_t stream) {
  with_kind(k, [&](auto tag) { reset_slot<typename decltype(tag)::type><<<1, 1, 0, stream>>>(slot); });
}

void launch_finish(OpKind k, const float* value, std::int64_t n, Dtype out, Saturation sat, double* values,
                   double* unrounded, cudaStream_t stream) {
  with_kind(k, [&](auto tag) {
    finish_value<typename decltype(tag)::type><<<1, 1, 0, stream>>>(value, n, out, sat, values, unrounded);
  });
}

void launch_finish_slot(OpKind k, const void* slot, std::int64_t n, Dtype out, Saturation sat, double* values,
                        double* unrounded, cudaStream_t stream) {
  with_kind(k, [&](auto tag) {
    finish_slot<typename decltype(tag)::type><<<1, 1, 0, stream>>>(slot, n, out, sat, values, unrounded);
  });
}

}  // namespace ulpscope::gallery
