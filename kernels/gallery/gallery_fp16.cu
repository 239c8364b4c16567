// The gallery's first passes over fp16 inputs (later passes: gallery_float.cu).
#include "kernels/gallery/gallery_launch.cuh"

namespace ulpscope::gallery {

void launch_pass_fp16(OpKind k, const PassLaunch& L) {
  switch (k) {
    case OpKind::sum_fp32: return launch_pass<SumFp32, Fp16>(L);
    case OpKind::sum_fp16: return launch_pass<SumNative<Fp16Format>, Fp16>(L);
    case OpKind::max: return launch_pass<MaxOp, Fp16>(L);
    default: throw std::invalid_argument("no gallery kernel for this op over fp16");
  }
}

}  // namespace ulpscope::gallery
