#pragma once
// One pass of the gallery's plan for one op O and one input storage In:
// the grid, the shared memory, and v5's switch on the block size (seed 004:
// the block size as a template parameter, dispatched by a switch). Included by
// gallery_float.cu, gallery_fp16.cu and gallery_bf16.cu.
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/gallery/gallery_kernels.cuh"
#include "kernels/gallery/gallery_launch.hpp"

namespace ulpscope::gallery {

template <class O, class In>
void launch_v5(const PassLaunch& L, unsigned grid, const In* in) {
  const auto n = L.pass.count;
  switch (L.threads) {
    case 32: v5_complete_unroll<O, 32, In><<<grid, 32, 0, L.stream>>>(in, n, L.out); return;
    case 64: v5_complete_unroll<O, 64, In><<<grid, 64, 0, L.stream>>>(in, n, L.out); return;
    case 128: v5_complete_unroll<O, 128, In><<<grid, 128, 0, L.stream>>>(in, n, L.out); return;
    case 256: v5_complete_unroll<O, 256, In><<<grid, 256, 0, L.stream>>>(in, n, L.out); return;
    case 512: v5_complete_unroll<O, 512, In><<<grid, 512, 0, L.stream>>>(in, n, L.out); return;
    default: throw std::invalid_argument("v5_complete_unroll is built for 32, 64, 128, 256 and 512 threads");
  }
}

template <class O, class In>
void launch_pass(const PassLaunch& L) {
  if (L.pass.blocks > std::numeric_limits<int>::max())
    throw std::invalid_argument(std::string(to_string(L.shape)) + ": " + std::to_string(L.pass.blocks) +
                                " blocks exceed one launch's grid");
  const auto grid = unsigned(L.pass.blocks);
  const int T = L.threads;
  const auto* in = static_cast<const In*>(L.in);
  const auto n = L.pass.count;
  const std::size_t slots = sizeof(float) * std::size_t(T), unrolled = sizeof(float) * unrolled_slots(T);
  switch (L.shape) {
    case Shape::v1_interleaved: v1_interleaved<O, In><<<grid, T, slots, L.stream>>>(in, n, L.out); return;
    case Shape::v2_sequential: v2_sequential<O, In><<<grid, T, slots, L.stream>>>(in, n, L.out); return;
    case Shape::v3_first_add: v3_first_add<O, In><<<grid, T, slots, L.stream>>>(in, n, L.out); return;
    case Shape::v4_unroll_last_warp:
      v4_unroll_last_warp<O, In><<<grid, T, unrolled, L.stream>>>(in, n, L.out);
      return;
    case Shape::v5_complete_unroll: launch_v5<O, In>(L, grid, in); return;
    case Shape::v5_shuffle: v5_shuffle<O, In><<<grid, T, 0, L.stream>>>(in, n, L.out); return;
    case Shape::v6_multi_add: v6_multi_add<O, In><<<grid, T, unrolled, L.stream>>>(in, n, L.out); return;
    case Shape::cg_reduce: cg_reduce<O, In><<<grid, T, 0, L.stream>>>(in, n, L.out); return;
    case Shape::cluster: cluster_reduce<O, In><<<grid, T, 0, L.stream>>>(in, n, L.out); return;
    case Shape::two_stage: two_stage<O, In><<<grid, T, 0, L.stream>>>(in, n, L.pass.chunk, L.out); return;
    case Shape::atomic_element: atomic_element<O, In><<<grid, T, 0, L.stream>>>(in, n, L.slot); return;
    case Shape::atomic_shared: atomic_shared<O, In><<<grid, T, 0, L.stream>>>(in, n, L.slot); return;
    default: throw std::invalid_argument(std::string(to_string(L.shape)) + " is not a gallery shape");
  }
}

}  // namespace ulpscope::gallery
