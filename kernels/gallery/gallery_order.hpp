#pragma once
// The order of the seed gallery's kernels (shared/seeds 000-004: NVIDIA's
// "Optimizing Parallel Reduction" v1-v6 as the tutorials retell it, the
// atomics, cooperative_groups, the thread-block cluster, and the Triton-style
// two-stage reduction of seed 001), described once for the CUDA kernels
// (gallery_kernels.cuh) and their CPU models (gallery_model.cpp); STYLE.md,
// section 2. Whole arrays of n values, blocks of T threads (a power of two,
// 32..512), values combined by one operation `op` (gallery_ops.hpp).
//
// One block per chunk (v1-v5, cg_reduce): block b reduces chunk b of the input
// to one partial; the partials are reduced again by the same kernel, pass
// after pass, until one value is left (the seeds' "launch again over the
// partials"). A chunk is T values (v1, v2, cg_reduce) or 2T (v3-v5: thread t
// first combines elements t and t+T of its chunk, the second only if it
// exists). Inside a block:
//   v1        slot t combines slot t+s for s = 1, 2, 4, .. < T when t % 2s == 0
//   v2, v3    slot t combines slot t+s for s = T/2, .., 1 when t < s
//   v4, v5    as v3 while s > 32; then the 32 lanes of warp 0 all run
//             s = 32 (only when T >= 64), 16, 8, 4, 2, 1, each lane l reading
//             slots l and l+s before any lane writes slot l (lanes >= s write
//             values nobody reads; shared memory holds max(T, 64) slots, the
//             ones past T holding the identity, so a 32-thread block reads no
//             slot out of bounds: seed 000, 7.9, "v4 assumes BLOCK >= 64")
//   v5_shuffle, cg_reduce
//             the tree shape's block step (tree_order.hpp, steps 2-3): lane l
//             combines lane l+o for o = 16..1, warp results into 32 slots,
//             warp 0 again (cg::reduce's xor butterfly gives lane 0 the same
//             operations: op is commutative)
// Grid-stride (v6, cluster, atomic_shared): a grid of B blocks.
//   v6        thread t of block b combines, from the identity, elements
//             i and i+T (if < n) for i = 2Tb + t, then i += 2TB (NVIDIA's
//             reduce6), then the v4 block steps; a second launch of one block
//             reduces the B partials.
//   cluster   B a multiple of C = 4; thread g = bT + t combines elements
//             g, g + BT, ...; the tree block step; block rank 0 of each
//             cluster combines, from the identity, the C block totals in rank
//             order (distributed shared memory); a second launch of one
//             cluster reduces the B/C cluster totals the same way.
//   atomic_shared
//             as cluster's per-thread loop, but every element goes straight
//             into one shared slot per block by an atomic, and each block's
//             slot into the output by an atomic: no fixed order.
// atomic_element: one thread per element, each an atomic into the output.
// two_stage: chunks of BLOCK_SIZE elements (a power of two from n and the
//   program cap, seed 001's adaptive_block_size), one block of T threads per
//   chunk; element e of a chunk belongs to thread (e / 4) % T (a blocked layout
//   of 4 contiguous elements per thread), each thread combining its elements
//   in increasing e from the identity; then the tree block step. Stage 2: one
//   block over the partials, BLOCK_MID = next power of two >= their count.
// The identity is op's neutral element (-0 for sums, -inf for max), so
// combining it rounds nothing and padding changes no bit.
#include <cstdint>

#include "formats/host_device.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/shape.hpp"

namespace ulpscope::gallery {

inline constexpr int kMinThreads = 32;
inline constexpr int kMaxThreads = 512;
inline constexpr int kClusterSize = 4;
inline constexpr int kTwoStageVector = 4;  // elements per thread and row of the blocked layout
inline constexpr int kMaxPasses = 16;

ULPSCOPE_HD constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
ULPSCOPE_HD constexpr std::int64_t next_pow2(std::int64_t k) {
  std::int64_t p = 1;
  while (p < k) p *= 2;
  return p;
}
ULPSCOPE_HD constexpr bool is_pow2(std::int64_t k) { return k > 0 && (k & (k - 1)) == 0; }

// The block steps of v1.
ULPSCOPE_HD constexpr bool interleaved_active(int t, int s) { return t % (2 * s) == 0; }
// Shared-memory slots of v4 and v5 (the last warp reads up to slot 63).
ULPSCOPE_HD constexpr int unrolled_slots(int threads) { return threads < 64 ? 64 : threads; }

enum class PassKind : std::uint8_t { chunk, grid_stride, cluster, two_stage, atomic };

constexpr bool one_block_per_chunk(Shape s) {
  return s == Shape::v1_interleaved || s == Shape::v2_sequential || s == Shape::v3_first_add ||
         s == Shape::v4_unroll_last_warp || s == Shape::v5_complete_unroll || s == Shape::v5_shuffle ||
         s == Shape::cg_reduce;
}
// Elements one block of a one-block-per-chunk kernel reduces.
constexpr std::int64_t chunk_elements(Shape s, int threads) {
  return (s == Shape::v1_interleaved || s == Shape::v2_sequential || s == Shape::cg_reduce) ? threads
                                                                                              : 2 * std::int64_t(threads);
}

// seed 001, adaptive_block_size_v3: small inputs in one chunk, else about
// `cap` chunks (the seed's 512) of a power of two, at least 64 elements.
constexpr std::int64_t two_stage_block_size(std::int64_t n, std::int64_t cap) {
  if (n <= 1024) return next_pow2(n < 1 ? 1 : n);
  const std::int64_t programs = ceil_div(n, 256) < cap ? ceil_div(n, 256) : cap;
  const std::int64_t bs = next_pow2(ceil_div(n, programs));
  return bs < 64 ? 64 : bs;
}

// One launch: `count` values in (the input, or the previous pass's
// partials), `blocks` blocks, `chunk` elements per block (two_stage), and
// `outputs` values out.
struct Pass {
  std::int64_t count = 0, blocks = 0, chunk = 0, outputs = 0;
};

struct Plan {
  Shape shape{};
  int threads = 0;
  int passes = 0;
  Pass pass[kMaxPasses];
};

// The launches of a reduction of n values with `threads` threads per block and
// `blocks` for the grid-stride kernels (the program cap for two_stage).
// n == 0 has no launch: the result is the identity.
constexpr Plan make_plan(Shape s, std::int64_t n, int threads, std::int64_t blocks) {
  Plan p{};
  p.shape = s;
  p.threads = threads;
  if (n <= 0) return p;
  const std::int64_t T = threads;
  auto add = [&](std::int64_t count, std::int64_t b, std::int64_t chunk, std::int64_t outputs) {
    p.pass[p.passes++] = Pass{count, b, chunk, outputs};
  };
  if (one_block_per_chunk(s)) {
    const std::int64_t c = chunk_elements(s, threads);
    for (std::int64_t count = n;;) {
      const std::int64_t b = ceil_div(count, c);
      add(count, b, c, b);
      if (b == 1) break;
      count = b;
    }
  } else if (s == Shape::v6_multi_add) {
    const std::int64_t cap = ceil_div(n, 2 * T);
    const std::int64_t b = blocks < 1 ? 1 : (blocks > cap ? cap : blocks);
    add(n, b, 0, b);
    if (b > 1) add(b, 1, 0, 1);
  } else if (s == Shape::cluster) {
    const std::int64_t cap = ceil_div(n, T);
    const std::int64_t want = blocks < 1 ? 1 : (blocks > cap ? cap : blocks);
    const std::int64_t b = ceil_div(want, kClusterSize) * kClusterSize;
    add(n, b, 0, b / kClusterSize);
    if (b > kClusterSize) add(b / kClusterSize, kClusterSize, 0, 1);
  } else if (s == Shape::two_stage) {
    const std::int64_t bs = two_stage_block_size(n, blocks < 1 ? 1 : blocks);
    const std::int64_t programs = ceil_div(n, bs);
    add(n, programs, bs, programs);
    if (programs > 1) add(programs, 1, next_pow2(programs), 1);
  } else if (s == Shape::atomic_element) {
    add(n, ceil_div(n, T), 0, 1);
  } else if (s == Shape::atomic_shared) {
    const std::int64_t cap = ceil_div(n, T);
    add(n, blocks < 1 ? 1 : (blocks > cap ? cap : blocks), 0, 1);
  }
  return p;
}

// two_stage: the chunk element held by thread t at its k-th position, or -1
// past the chunk (blocked layout, kTwoStageVector contiguous per thread).
ULPSCOPE_HD constexpr std::int64_t two_stage_element(std::int64_t k, int t, int threads, std::int64_t chunk) {
  const std::int64_t row = k / kTwoStageVector, j = k % kTwoStageVector;
  const std::int64_t e = row * kTwoStageVector * threads + std::int64_t(t) * kTwoStageVector + j;
  return e < chunk ? e : -1;
}

// The longest chain of roundings one input goes through (error bounds,
// Higham 2002, eq. 4.4); an upper bound where blocks differ.
constexpr std::int64_t addition_depth(const Plan& p) {
  const std::int64_t T = p.threads;
  const int tree = ceil_log2(T);
  std::int64_t d = 0;
  for (int k = 0; k < p.passes; ++k) {
    const Pass& q = p.pass[k];
    switch (p.shape) {
      case Shape::v1_interleaved:
      case Shape::v2_sequential:
      case Shape::cg_reduce: d += tree; break;
      case Shape::v3_first_add:
      case Shape::v4_unroll_last_warp:
      case Shape::v5_complete_unroll:
      case Shape::v5_shuffle: d += 1 + tree; break;
      case Shape::v6_multi_add: d += 2 * ceil_div(q.count, 2 * T * q.blocks) - 1 + tree; break;
      case Shape::cluster: d += ceil_div(q.count, T * q.blocks) - 1 + tree + kClusterSize - 1; break;
      case Shape::two_stage: d += ceil_div(q.chunk, kTwoStageVector * T) * kTwoStageVector - 1 + tree; break;
      case Shape::atomic_element: d += q.count - 1; break;
      case Shape::atomic_shared: d += ceil_div(q.count, T * q.blocks) * T - 1 + q.blocks - 1; break;
      default: break;
    }
  }
  return d < 0 ? 0 : d;
}

}  // namespace ulpscope::gallery
