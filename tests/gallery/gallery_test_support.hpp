#pragma once
// What the gallery's model and GPU tests share: the kernels, formats and
// variants they sweep, inputs whose every order shows in the low bits, and
// bit comparison.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/reduction.hpp"
#include "model_test_support.hpp"

namespace ulpscope::test {

inline constexpr Shape kGallery[] = {Shape::v1_interleaved,      Shape::v2_sequential,      Shape::v3_first_add,
                                     Shape::v4_unroll_last_warp, Shape::v5_complete_unroll, Shape::v5_shuffle,
                                     Shape::v6_multi_add,        Shape::atomic_element,     Shape::atomic_shared,
                                     Shape::cg_reduce,           Shape::cluster,            Shape::two_stage};
inline constexpr Dtype kGalleryFormats[] = {Dtype::fp32, Dtype::fp16, Dtype::bf16};

struct Variant {
  Op op;
  Accumulator acc;
};
inline constexpr Variant kVariants[] = {
    {Op::sum, Accumulator::naive}, {Op::sum, Accumulator::fp32}, {Op::max, Accumulator::fp32}};

// Mixed magnitudes (2^-8 .. 2^5), either sign: sums cancel, so every
// order shows in the low bits.
inline TypedArray mixed(Dtype d, std::int64_t n, std::uint64_t seed) {
  std::uint64_t s = seed;
  return make_array(d, n, [&](auto) {
    const double u = uniform01(s);
    return (0.25 + u) * std::exp2(double(int(mix(s) % 13) - 8)) * ((mix(s) & 1) ? -1 : 1);
  });
}

inline ReductionProblem whole(const TypedArray& x, Op op = Op::sum) {
  ReductionProblem p;
  p.op = op;
  p.rows = 1;
  p.cols = std::int64_t(x.size());
  p.x = &x;
  return p;
}

}  // namespace ulpscope::test
