// The gallery's first passes over bf16 inputs (later passes: gallery_float.cu).
#include "kernels/gallery/gallery_launch.cuh"

namespace ulpscope::gallery {

void launch_pass_bf16(OpKind k, const PassLaunch& L) {
  switch (k) {
    case OpKind::sum_fp32: return launch_pass<SumFp32, Bf16>(L);
    case OpKind::sum_bf16: return launch_pass<SumNative<Bf16Format>, Bf16>(L);
    case OpKind::max: return launch_pass<MaxOp, Bf16>(L);
    default: throw std::invalid_argument("no gallery kernel for this op over bf16");
  }
}

}  // namespace ulpscope::gallery
