#pragma once
// The order of the scan shapes (docs/spec.md, "Scan shapes"), written once
// for the CUDA kernels (scan_agent.cuh) and their CPU models
// (scan_model.cpp): which elements a thread and a tile own, and in which
// grouping the block scans, the tile carries and the look-back window merge
// partials. Each level is written over an array of partials indexed by lane,
// thread or tile; the device runs the same loops on values staged in shared
// memory or exchanged by warp shuffles, so the two cannot drift apart (../shared/docs/STYLE.md, lesson 2).
//
// merge(a, b) is the accumulator's merge with a the earlier part
// (kernels/accumulators/: FloatSum, Fp64Sum, KahanSum); every level merges
// whole partials, so the same loops serve every accumulator.
#include <cstdint>

#include "formats/host_device.hpp"

namespace ulpscope::scan {

// The tile and look-back geometry, in one place for the kernels and the
// models. A thread owns K consecutive elements of its tile (thread t the
// elements t*K .. t*K + K - 1): 16 of fp32 and fp8 inputs (four and one
// 16-byte loads), 32 of fp16 and bf16 (four), so that a tile's fixed costs
// (the block scan, the look-back) are spread over as many bytes of input
// and output, the exact scan's wide partials most of all; fp8 stays at 16
// since its fp32 outputs would need twice the staging (scan_agent.cuh,
// TileStaging). The look-back window of a tile
// holds kLookbackWindow slots, slot 0 the inclusive prefix of the tile
// kLookbackWindow back and slots 1 .. W - 1 the aggregates of the tiles
// between; lane j of one warp folds slots j, j + 32, j + 64, ... in that
// order, then the warp's shuffle tree joins the lanes. A wide window keeps
// the chain of inclusive prefixes short (tiles / W links of one
// global-memory round trip each). The kernel loads the whole window at once
// (thread t the slots t, t + T, ...) into shared memory and warp 0 folds it
// there.
//
// The look-back publishes a partial of up to 16 bytes (every accumulator's
// but the exact scan's of bf16 and fp32) word by word beside a status, one
// round trip a slot (scan_launch.cuh, TileStatus), else beside a flag read
// before it. The default lookback launch takes 256 threads where the
// partials are packed so (four blocks an SM, whose waits on their windows
// overlap), 512 for the wide exact partial, whose window
// loads and folds cost more a tile (docs/perf-h100.md, "Scans: packed
// look-back slots").
struct ScanPolicy {
  ULPSCOPE_HD static constexpr int items_per_thread(int element_bytes) { return element_bytes == 2 ? 32 : 16; }
  ULPSCOPE_HD static constexpr bool packs_status(int partial_bytes) { return partial_bytes <= kMaxPackedBytes; }
  static constexpr int lookback_threads(int partial_bytes) { return packs_status(partial_bytes) ? 256 : 512; }
  static constexpr int kMaxPackedBytes = 16;
  static constexpr int kMaxItemsPerThread = 32;
  static constexpr int kWindowSlotsPerLane = 16;
  static constexpr int kWarpSize = 32;
  static constexpr int kLookbackWindow = kWarpSize * kWindowSlotsPerLane;
};
inline constexpr int kMaxItemsPerThread = ScanPolicy::kMaxItemsPerThread;
inline constexpr int kLookbackWindow = ScanPolicy::kLookbackWindow;
inline constexpr int kWindowSlotsPerLane = ScanPolicy::kWindowSlotsPerLane;
inline constexpr int kWarpSize = ScanPolicy::kWarpSize;

// How one line (the array, or a row) of `length` elements is cut into tiles
// of threads * per_thread elements (per_thread: ScanPolicy::items_per_thread
// of the input format).
struct TileOrder {
  std::int64_t length;
  int threads;
  int per_thread;
  ULPSCOPE_HD std::int64_t tile_elements() const { return std::int64_t(threads) * per_thread; }
  ULPSCOPE_HD std::int64_t tiles() const { return (length + tile_elements() - 1) / tile_elements(); }
  // The first element of thread t of tile k, and how many of its K exist.
  ULPSCOPE_HD std::int64_t first(std::int64_t tile, int t) const {
    return tile * tile_elements() + std::int64_t(t) * per_thread;
  }
  ULPSCOPE_HD int items(std::int64_t tile, int t) const {
    const std::int64_t left = length - first(tile, t);
    return left <= 0 ? 0 : (left < per_thread ? int(left) : per_thread);
  }
};

// reduce_then_scan: block b owns tiles [b * per_block, (b + 1) * per_block)
// of the line, per_block = ceil(tiles / blocks).
ULPSCOPE_HD inline std::int64_t tiles_per_block(std::int64_t tiles, int blocks) {
  return (tiles + blocks - 1) / blocks;
}

// Kogge-Stone inclusive scan of one warp's lanes (Kogge and Stone 1973; the
// shuffle form of the CUDA seeds): at offsets d = 1, 2, 4, 8, 16, lane l >= d
// takes merge(v[l - d], v[l]) of the values before this step. The device
// runs it with __shfl_up_sync; here lanes are updated from the top down so
// that v[l - d] is still the earlier step's value.
template <class P, class Merge>
ULPSCOPE_HD void kogge_stone_inclusive(P* v, int lanes, Merge merge) {
  for (int d = 1; d < kWarpSize; d *= 2)
    for (int l = lanes - 1; l >= d; --l) v[l] = merge(v[l - d], v[l]);
}

// The warp shape's block scan of T thread aggregates (T a multiple of 32):
// each warp's Kogge-Stone, then warp 0's Kogge-Stone of the warps' totals
// (their lane-31 values), then warp w > 0 prefixes its lanes with total
// w - 1's scan. On return v holds each thread's inclusive value and
// exclusive[t] (has_exclusive[t]) the exclusive one: lane l > 0 merges the
// warp prefix (w > 0) with lane l - 1's warp-inclusive value; lane 0 takes
// the warp prefix alone.
template <class P, class Merge>
ULPSCOPE_HD void warp_block_scan(P* v, P* warp_totals, P* exclusive, bool* has_exclusive, int threads, Merge merge) {
  const int warps = threads / kWarpSize;
  for (int w = 0; w < warps; ++w) kogge_stone_inclusive(v + w * kWarpSize, kWarpSize, merge);
  for (int w = 0; w < warps; ++w) warp_totals[w] = v[w * kWarpSize + kWarpSize - 1];
  kogge_stone_inclusive(warp_totals, warps, merge);
  for (int t = threads - 1; t >= 0; --t) {
    const int w = t / kWarpSize, l = t % kWarpSize;
    has_exclusive[t] = t > 0;
    if (l > 0) exclusive[t] = w > 0 ? merge(warp_totals[w - 1], v[t - 1]) : v[t - 1];
    else if (w > 0) exclusive[t] = warp_totals[w - 1];
  }
  for (int t = kWarpSize; t < threads; ++t) v[t] = merge(warp_totals[t / kWarpSize - 1], v[t]);
}

// The block shape's block scan: Brent-Kung in shared memory (Brent and Kung
// 1982; Harris, Sengupta, Owens, GPU Gems 3 ch. 39, inclusive form).
// Up-sweep: d = 1, 2, ..., T/2, s[i] = merge(s[i - d], s[i]) for every i
// with (i + 1) % 2d == 0. Down-sweep: d = T/4, ..., 1, s[i + d] =
// merge(s[i], s[i + d]) for every such i with i + d < T. T a power of two.
// exclusive[t] is s[t - 1] after the sweeps.
template <class P, class Merge>
ULPSCOPE_HD void brent_kung_block_scan(P* s, P* exclusive, bool* has_exclusive, int threads, Merge merge) {
  for (int d = 1; d < threads; d *= 2)
    for (int i = 2 * d - 1; i < threads; i += 2 * d) s[i] = merge(s[i - d], s[i]);
  for (int d = threads / 4; d >= 1; d /= 2)
    for (int i = 2 * d - 1; i + d < threads; i += 2 * d) s[i + d] = merge(s[i], s[i + d]);
  for (int t = 0; t < threads; ++t) {
    has_exclusive[t] = t > 0;
    if (t > 0) exclusive[t] = s[t - 1];
  }
}

// The look-back window's last step: one warp's shuffle tree
// (__shfl_down_sync at offsets 16, 8, 4, 2, 1; lane j merges lane j + off
// into itself, its own value first): lane 0 ends with one fixed, strided
// tree over the 32 lanes, (0 16) its first merge. v holds 32 lanes, the
// empty ones the accumulator's identity.
template <class P, class Merge>
ULPSCOPE_HD P window_reduce(P* v, Merge merge) {
  for (int off = kWarpSize / 2; off >= 1; off /= 2)
    for (int j = 0; j < off; ++j) v[j] = merge(v[j], v[j + off]);
  return v[0];
}

// The whole look-back window of kLookbackWindow slots (slot i at lane
// i % 32, the empty ones the accumulator's identity): lane j folds its slots
// j, j + 32, ... from the first, then window_reduce joins the lanes. The
// slots are overwritten.
template <class P, class Merge>
ULPSCOPE_HD P lookback_window_reduce(P* slots, Merge merge) {
  for (int j = 0; j < kWarpSize; ++j)
    for (int m = 1; m < kWindowSlotsPerLane; ++m) slots[j] = merge(slots[j], slots[j + m * kWarpSize]);
  return window_reduce(slots, merge);
}

}  // namespace ulpscope::scan
