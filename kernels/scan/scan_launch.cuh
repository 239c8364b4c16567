#pragma once
// The scan shapes' kernels and their launch (CUDA), over scan_agent.cuh's
// tiles: one instantiation per (input format, accumulator), made in
// scan_<format>.cu.
//   warp, block        one block per line walks its tiles, carrying c
//   reduce_then_scan   block sums; one thread per line scans them; rescan
//   lookback           one block per tile (tile ids drawn in order from a
//                      counter), the fixed window of scan_order.hpp
// Workspace: reduce_then_scan keeps B block sums and B exclusive sums per
// line; lookback a counter per line and, per tile, its aggregate and
// inclusive prefix with their status (TileStatus).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "kernels/cuda/device_problem.hpp"
#include "kernels/scan/scan_agent.cuh"

namespace ulpscope::scan {

// A partial through L2 (ld.global.cg / st.global.cg), in 16-byte vectors
// where its size allows (the slots of a partial array then sit on 16-byte
// boundaries: the workspace is 256-byte aligned), else word by word.
template <class P>
using CoherentChunk = std::conditional_t<sizeof(P) % 16 == 0, uint4, unsigned>;

template <class P>
__device__ __forceinline__ P load_coherent(const P* p) {
  static_assert(sizeof(P) % 4 == 0, "partials are whole 32-bit words");
  using C = CoherentChunk<P>;
  C w[sizeof(P) / sizeof(C)];
  const auto* s = reinterpret_cast<const C*>(p);
#pragma unroll
  for (int i = 0; i < int(sizeof(P) / sizeof(C)); ++i) w[i] = __ldcg(s + i);
  P r;
  std::memcpy(&r, w, sizeof(P));
  return r;
}

template <class P>
__device__ __forceinline__ void store_coherent(P* p, const P& v) {
  using C = CoherentChunk<P>;
  C w[sizeof(P) / sizeof(C)];
  std::memcpy(w, &v, sizeof(P));
  auto* d = reinterpret_cast<C*>(p);
#pragma unroll
  for (int i = 0; i < int(sizeof(P) / sizeof(C)); ++i) __stcg(d + i, w[i]);
}

// A tile's flag, a relaxed load at GPU scope. fence.acq_rel is lighter than
// __threadfence()'s fence.sc, which every thread of a tile would otherwise
// wait on after its polls (TileStatus<P, false> says why a fence).
__device__ __forceinline__ int load_flag(const int* flag) {
  int v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

__device__ __forceinline__ void acq_rel_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// The grid shapes' occupancy floor: at least two blocks of kMaxThreads on
// an SM (at most 64 registers a thread), so that one block's loads overlap
// another's look-back or block scan.
inline constexpr int kGridMinBlocksPerSm = 2;

// The look-back's wait between polls of a slot not yet published: from
// kFirstPollDelayNs, doubling, at most kMaxPollDelayNs, well under the time
// a tile of 8192 elements takes to load, so that a wait delays no tile by
// much.
inline constexpr unsigned kFirstPollDelayNs = 32;
inline constexpr unsigned kMaxPollDelayNs = 512;

struct LineGeometry {
  std::int64_t lines, length;
  int threads;
  OutRounding sat;
};

// warp and block: blockIdx.x is the line.
template <class R, class Elem, class Out>
__global__ void __launch_bounds__(kMaxThreads) chained_scan_kernel(const Elem* x, Out* out, LineGeometry g,
                                                                   Shape block_scan) {
  using P = typename R::Partial;
  __shared__ WarpScanShared<R> wsh;
  __shared__ BrentKungShared<R> bsh;
  const std::int64_t line = blockIdx.x;
  const TileOrder o{g.length, g.threads, kItems<Elem>};
  P carry = R::identity();
  bool has_carry = false;
  BrentKungShared<R>* b = block_scan == Shape::block ? &bsh : nullptr;
  for (std::int64_t k = 0; k < o.tiles(); ++k)
    scan_tile_chained<R>(wsh, b, o, k, x + line * g.length, out + line * g.length, g.sat, carry, has_carry);
}

// reduce_then_scan, phase 1: block b of line blockIdx.y folds its tiles'
// aggregates into sums[line * B + b].
template <class R, class Elem>
__global__ void __launch_bounds__(kMaxThreads, kGridMinBlocksPerSm)
    block_sums_kernel(const Elem* x, typename R::Partial* sums, LineGeometry g) {
  using P = typename R::Partial;
  __shared__ WarpScanShared<R> sh;
  __shared__ TileStaging stage;
  const std::int64_t line = blockIdx.y;
  const TileOrder o{g.length, g.threads, kItems<Elem>};
  const std::int64_t per = tiles_per_block(o.tiles(), gridDim.x), begin = blockIdx.x * per;
  const std::int64_t end = o.tiles() < begin + per ? o.tiles() : begin + per;
  P sum = R::identity();
  for (std::int64_t k = begin; k < end; ++k) {
    const auto it = load_items<kItems<Elem>>(x + line * g.length, o, k, &stage);
    const P a = warp_block_scan_device<R>(sh, fold_items<R>(it), o.threads).aggregate;
    sum = k == begin ? a : merged<R>(sum, a);
  }
  if (threadIdx.x == 0 && begin < end) sums[line * gridDim.x + blockIdx.x] = sum;
}

// Phase 2: one thread per line, the block sums' exclusive scan, serially.
template <class R>
__global__ void block_carries_kernel(const typename R::Partial* sums, typename R::Partial* carries,
                                     std::int64_t lines, int blocks, std::int64_t used) {
  const std::int64_t line = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= lines) return;
  typename R::Partial c{};
  for (std::int64_t b = 1; b < used; ++b) {
    c = b == 1 ? sums[line * blocks] : merged<R>(c, sums[line * blocks + b - 1]);
    carries[line * blocks + b] = c;
  }
}

// Phase 3: block b rescans its tiles with carries[b] (none for block 0).
template <class R, class Elem, class Out>
__global__ void __launch_bounds__(kMaxThreads, kGridMinBlocksPerSm)
    rescan_kernel(const Elem* x, Out* out, const typename R::Partial* carries, LineGeometry g) {
  using P = typename R::Partial;
  __shared__ WarpScanShared<R> sh;
  __shared__ TileStaging stage;
  const std::int64_t line = blockIdx.y;
  const TileOrder o{g.length, g.threads, kItems<Elem>};
  const std::int64_t per = tiles_per_block(o.tiles(), gridDim.x), begin = blockIdx.x * per;
  const std::int64_t end = o.tiles() < begin + per ? o.tiles() : begin + per;
  bool has_carry = blockIdx.x > 0 && begin < end;
  P carry = has_carry ? carries[line * gridDim.x + blockIdx.x] : R::identity();
  for (std::int64_t k = begin; k < end; ++k)
    scan_tile_chained<R>(sh, static_cast<BrentKungShared<R>*>(nullptr), o, k, x + line * g.length,
                         out + line * g.length, g.sat, carry, has_carry, &stage);
}

// Workspace arrays start on 256-byte boundaries.
inline std::size_t aligned(std::size_t b) { return (b + 255) / 256 * 256; }

// Tile k's look-back window (scan_order.hpp): slot i of the W is the
// inclusive prefix W back (i = 0) or the aggregate of tile k - W + i; below
// W, the aggregates of tiles 0 .. k - 1. bit(i) says which slot i holds (2:
// an inclusive prefix, 1: an aggregate), or 0 for a slot that holds nothing
// (the identity).
struct Window {
  std::int64_t k;
  __device__ std::int64_t first(std::int64_t base) const {
    return base + (k < kLookbackWindow ? 0 : k - kLookbackWindow);
  }
  __device__ int bit(int i) const { return k < kLookbackWindow ? (i < k ? 1 : 0) : (i == 0 ? 2 : 1); }
};

// The wait before asking again for a slot not yet published: doubling from
// kFirstPollDelayNs up to kMaxPollDelayNs, so that the polls of the resident
// blocks do not take the L2 bandwidth the tiles' loads and stores need
// (CUB's look-back backs off with __nanosleep likewise:
// cub/agent/single_pass_scan_operators.cuh).
__device__ __forceinline__ void back_off(unsigned& delay) {
  __nanosleep(delay);
  delay = delay < kMaxPollDelayNs ? 2 * delay : kMaxPollDelayNs;
}

// Where the tiles publish their aggregates and inclusive prefixes (a counter
// per line draws the tile ids), in one of two layouts by the partial's size.
// Both give the window the same values, so the same bits.
template <class P, bool Packed = ScanPolicy::packs_status(int(sizeof(P)))>
struct TileStatus;

// A partial of up to four 32-bit words (the float, fp64 and kahan
// accumulators', and the exact scan's of fp16 and fp8) is published word by
// word, each in the low half of a 64-bit word whose high half, its status,
// is nonzero once written. An aligned 64-bit access is single-copy atomic, and
// a vector access is one such access per element (PTX ISA, "Memory
// Consistency Model"); a slot is written once, from zero. So a reader that
// finds every status set holds the whole value, from one round trip and
// with no fence, where a flag, a fence and then the partial take two. (CUB
// packs values of up to 4 bytes with their status in one word likewise,
// ScanTileState in cub/agent/single_pass_scan_operators.cuh.)
template <class P>
struct TileStatus<P, true> {
  using Word = unsigned long long;
  static constexpr int kWords = int(sizeof(P) / 4);
  static_assert(sizeof(P) == 4 * kWords, "partials are whole 32-bit words");
  Word* aggregate;
  Word* inclusive;
  unsigned long long* counter;  // one per line

  // Layout: the aggregates' words (kWords a tile), the inclusive prefixes'
  // words, the counters, all zeroed before the launch.
  static std::size_t bytes(std::size_t tiles, std::size_t lines) {
    return 2 * aligned(tiles * kWords * sizeof(Word)) + aligned(lines * 8);
  }
  static TileStatus carve(unsigned char* base, std::size_t tiles) {
    const std::size_t half = aligned(tiles * kWords * sizeof(Word));
    return {reinterpret_cast<Word*>(base), reinterpret_cast<Word*>(base + half),
            reinterpret_cast<unsigned long long*>(base + 2 * half)};
  }
  static void* zeroed(unsigned char* base, std::size_t) { return base; }
  static std::size_t zeroed_bytes(std::size_t tiles, std::size_t lines) { return bytes(tiles, lines); }

  // Word pairs move as one 16-byte vector (each slot of 2 or 4 words starts
  // on a 16-byte boundary), a single word alone.
  static __device__ void store(Word* slot, const P& v) {
    unsigned w[kWords];
    std::memcpy(w, &v, sizeof(P));
    constexpr Word kSet = Word(1) << 32;
    if constexpr (kWords == 1) {
      asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(kSet | w[0]) : "memory");
    } else {
#pragma unroll
      for (int i = 0; i < kWords; i += 2)
        asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};" ::"l"(slot + i), "l"(kSet | w[i]),
                     "l"(kSet | w[i + 1])
                     : "memory");
    }
  }
  // Whether the slot is published; then v is its value.
  static __device__ bool load(const Word* slot, P& v) {
    Word x[kWords];
    if constexpr (kWords == 1) {
      asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(x[0]) : "l"(slot) : "memory");
    } else {
#pragma unroll
      for (int i = 0; i < kWords; i += 2)
        asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];" : "=l"(x[i]), "=l"(x[i + 1]) : "l"(slot + i)
                     : "memory");
    }
    bool set = true;
    unsigned w[kWords];
#pragma unroll
    for (int i = 0; i < kWords; ++i) {
      set = set && (x[i] >> 32) != 0;
      w[i] = unsigned(x[i]);
    }
    if (set) std::memcpy(&v, w, sizeof(P));
    return set;
  }

  __device__ void publish_aggregate(std::int64_t at, const P& v, bool also_inclusive) const {
    if (also_inclusive) store(inclusive + at * kWords, v);
    store(aggregate + at * kWords, v);
  }
  __device__ void publish_inclusive(std::int64_t at, const P& v) const { store(inclusive + at * kWords, v); }

  // Every thread polls its slots (i = t, t + T, ...) until each is
  // published and stores its value in window[i].
  template <class R>
  __device__ void load_window(const Window& w, std::int64_t base, int threads, P* window) const {
    for (int i = threadIdx.x; i < kLookbackWindow; i += threads) {
      P v = R::identity();
      if (w.bit(i) != 0) {
        const Word* slot = (w.bit(i) == 2 ? inclusive : aggregate) + (w.first(base) + i) * kWords;
        unsigned delay = kFirstPollDelayNs;
        while (!load(slot, v)) back_off(delay);
      }
      window[i] = v;
    }
  }
};

// A wider partial has its own arrays, and a flag word per tile announces it
// (1: aggregate published, 2: inclusive published). The publisher's
// acq_rel_fence() and then its atomicOr form a release pattern, the polls'
// relaxed loads and then acq_rel_fence() an acquire pattern (PTX ISA,
// "Memory Consistency Model"), which order the partials' loads after the
// flags that announced them.
template <class P>
struct TileStatus<P, false> {
  P* aggregate;
  P* inclusive;
  int* flag;
  unsigned long long* counter;  // one per line

  // Layout: the aggregates, the inclusive prefixes, the flags and the
  // counters; the flags and the counters zeroed before the launch.
  static std::size_t bytes(std::size_t tiles, std::size_t lines) {
    return 2 * aligned(tiles * sizeof(P)) + aligned(tiles * sizeof(int)) + aligned(lines * 8);
  }
  static TileStatus carve(unsigned char* base, std::size_t tiles) {
    TileStatus s;
    s.aggregate = reinterpret_cast<P*>(base);
    s.inclusive = reinterpret_cast<P*>(base + aligned(tiles * sizeof(P)));
    s.flag = reinterpret_cast<int*>(base + 2 * aligned(tiles * sizeof(P)));
    s.counter = reinterpret_cast<unsigned long long*>(base + 2 * aligned(tiles * sizeof(P)) +
                                                      aligned(tiles * sizeof(int)));
    return s;
  }
  static void* zeroed(unsigned char* base, std::size_t tiles) { return base + 2 * aligned(tiles * sizeof(P)); }
  static std::size_t zeroed_bytes(std::size_t tiles, std::size_t lines) {
    return aligned(tiles * sizeof(int)) + aligned(lines * 8);
  }

  __device__ void publish(P* slot, std::int64_t at, const P& v, int bit) const {
    store_coherent(slot, v);
    acq_rel_fence();
    atomicOr(flag + at, bit);
  }
  __device__ void publish_aggregate(std::int64_t at, const P& v, bool also_inclusive) const {
    if (also_inclusive) store_coherent(inclusive + at, v);
    publish(aggregate + at, at, v, also_inclusive ? 3 : 1);
  }
  __device__ void publish_inclusive(std::int64_t at, const P& v) const { publish(inclusive + at, at, v, 2); }

  // Every thread polls the flags of its slots until each has its bit, then
  // fences (all flags at once, one round trip for the window) and loads its
  // slots into window[i].
  template <class R>
  __device__ void load_window(const Window& w, std::int64_t base, int threads, P* window) const {
    const int* flags = flag + w.first(base);
    unsigned delay = kFirstPollDelayNs;
    for (bool ready = false; !ready;) {
      ready = true;
      for (int i = threadIdx.x; i < kLookbackWindow; i += threads)
        if (w.bit(i) != 0 && (load_flag(flags + i) & w.bit(i)) == 0) ready = false;
      if (!ready) back_off(delay);
    }
    acq_rel_fence();
    for (int i = threadIdx.x; i < kLookbackWindow; i += threads)
      window[i] = w.bit(i) == 0 ? R::identity()
                                : load_coherent((w.bit(i) == 2 ? inclusive : aggregate) + w.first(base) + i);
  }
};

// The window's fold in scan_order.hpp's order: every thread loads its slots
// into `window` (shared memory), then warp 0 folds it there (lane j: slots
// j, j + 32, ...; then the shuffle tree). Lane 0 of warp 0 returns the fold.
// Every thread calls it; the block's barrier inside separates the loads from
// the fold.
template <class R>
__device__ __forceinline__ typename R::Partial fold_window_in_order(const TileStatus<typename R::Partial>& s,
                                                                    const Window& w, std::int64_t base,
                                                                    int threads, typename R::Partial* window) {
  using P = typename R::Partial;
  if (w.k > 0) s.template load_window<R>(w, base, threads, window);
  __syncthreads();
  P v = R::identity();
  if (w.k > 0 && threadIdx.x < kWarpSize) {
    const int lane = threadIdx.x;
    v = window[lane];
#pragma unroll
    for (int m = 1; m < kWindowSlotsPerLane; ++m) v = merged<R>(v, window[lane + m * kWarpSize]);
#pragma unroll
    for (int off = kWarpSize / 2; off >= 1; off /= 2) {
      const P right = shfl_down_partial(v, off);
      if (lane < off) v = merged<R>(v, right);
    }
  }
  return v;
}

// lookback: each block draws the next tile k of line blockIdx.y, loads it
// once, publishes its aggregate, folds its window (scan_order.hpp's
// lookback_window_reduce, by warp 0), publishes its inclusive prefix and
// writes its outputs from the registers.
template <class R, class Elem, class Out>
__global__ void __launch_bounds__(kMaxThreads, kGridMinBlocksPerSm)
    lookback_kernel(const Elem* x, Out* out, TileStatus<typename R::Partial> s, LineGeometry g) {
  using P = typename R::Partial;
  __shared__ WarpScanShared<R> sh;
  __shared__ std::int64_t tile_shared;
  __shared__ P carry_shared;
  // The staging of the loads and stores and the window share one buffer: the
  // block scan's __syncthreads separate the loads from the window, and the
  // __syncthreads after the window's fold separate it from the stores.
  constexpr std::size_t kScratch = sizeof(TileStaging) > sizeof(P) * kLookbackWindow ? sizeof(TileStaging)
                                                                                       : sizeof(P) * kLookbackWindow;
  __shared__ alignas(16) unsigned char scratch[kScratch];
  auto* stage = reinterpret_cast<TileStaging*>(scratch);
  P* window = reinterpret_cast<P*>(scratch);
  const std::int64_t line = blockIdx.y;
  const TileOrder o{g.length, g.threads, kItems<Elem>};
  const std::int64_t tiles = o.tiles();
  if (threadIdx.x == 0) tile_shared = std::int64_t(atomicAdd(s.counter + line, 1ull));
  __syncthreads();
  const std::int64_t k = tile_shared;
  const std::int64_t base = line * tiles, at = base + k;
  const auto it = load_items<kItems<Elem>>(x + line * g.length, o, k, stage);
  const ThreadScan<P> scan = warp_block_scan_device<R, false>(sh, fold_items<R>(it), o.threads);
  // The aggregate at once (no carry needed); tile 0's is its inclusive prefix too.
  if (threadIdx.x == o.threads - 1) s.publish_aggregate(at, scan.aggregate, k == 0);
  const P v = fold_window_in_order<R>(s, Window{k}, base, o.threads, window);
  if (k > 0 && threadIdx.x == 0) {
    carry_shared = v;
    // The aggregate from the last thread (warp_block_scan_device without
    // AggregateEverywhere: the barrier inside the fold publishes it).
    s.publish_inclusive(at, merged<R>(v, sh.aggregate));
  }
  __syncthreads();
  P seed = R::identity();
  const bool has_seed = seed_of<R>(scan, carry_shared, k > 0, seed);
  write_items<R>(out + line * g.length, it, seed, has_seed, g.sat, stage);
}

template <class R, class Elem>
std::size_t workspace_bytes_for(Shape shape, std::int64_t lines, std::int64_t length, const LaunchConfig& cfg) {
  using P = typename R::Partial;
  const TileOrder o{length, cfg.threads, kItems<Elem>};
  if (shape == Shape::reduce_then_scan) return 2 * aligned(std::size_t(lines) * std::size_t(cfg.blocks) * sizeof(P));
  if (shape == Shape::lookback) {
    const std::size_t tiles = std::size_t(lines) * std::size_t(std::max<std::int64_t>(o.tiles(), 1));
    return TileStatus<P>::bytes(tiles, std::size_t(lines));
  }
  return 0;
}

template <class R, class Elem, class Out>
void launch_scan_with(Shape shape, const Elem* x, Out* out, std::int64_t lines, std::int64_t length,
                      const LaunchConfig& cfg, OutRounding sat, DeviceWorkspace ws, cudaStream_t stream) {
  using P = typename R::Partial;
  if (lines <= 0 || length <= 0) return;
  const LineGeometry g{lines, length, cfg.threads, sat};
  const TileOrder o{length, cfg.threads, kItems<Elem>};
  if (ws.bytes < workspace_bytes_for<R, Elem>(shape, lines, length, cfg))
    throw std::invalid_argument("scan: the workspace is too small for this launch");
  // The grid shapes put the lines on gridDim.y (at most 65535).
  if ((shape == Shape::reduce_then_scan || shape == Shape::lookback) && lines > 65535)
    throw std::invalid_argument("scan: reduce_then_scan and lookback take at most 65535 rows");
  auto* base = static_cast<unsigned char*>(ws.data);
  switch (shape) {
    case Shape::warp:
    case Shape::block:
      chained_scan_kernel<R><<<unsigned(lines), cfg.threads, 0, stream>>>(x, out, g, shape);
      return;
    case Shape::reduce_then_scan: {
      const int blocks = cfg.blocks;
      const std::int64_t used = (o.tiles() + tiles_per_block(o.tiles(), blocks) - 1) / tiles_per_block(o.tiles(), blocks);
      auto* sums = reinterpret_cast<P*>(base);
      auto* carries = reinterpret_cast<P*>(base + aligned(std::size_t(lines) * blocks * sizeof(P)));
      const dim3 grid{unsigned(blocks), unsigned(lines)};
      block_sums_kernel<R, Elem><<<grid, cfg.threads, 0, stream>>>(x, sums, g);
      block_carries_kernel<R><<<unsigned((lines + 127) / 128), 128, 0, stream>>>(sums, carries, lines, blocks, used);
      rescan_kernel<R><<<grid, cfg.threads, 0, stream>>>(x, out, carries, g);
      return;
    }
    case Shape::lookback: {
      const std::size_t tiles = std::size_t(lines) * std::size_t(o.tiles());
      const TileStatus<P> s = TileStatus<P>::carve(base, tiles);
      cudaMemsetAsync(TileStatus<P>::zeroed(base, tiles), 0, TileStatus<P>::zeroed_bytes(tiles, std::size_t(lines)),
                      stream);
      const dim3 grid{unsigned(o.tiles()), unsigned(lines)};
      lookback_kernel<R><<<grid, cfg.threads, 0, stream>>>(x, out, s, g);
      return;
    }
    default: throw std::invalid_argument("scan: not a scan shape with a kernel");
  }
}

}  // namespace ulpscope::scan
