#pragma once
// The CPU executors of the shapes: they follow kernels/tree/tree_order.hpp
// (and the serial and atomic orders) over any reducer, on inputs already
// widened to float (exact for every input format).
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/reducers.hpp"
#include "kernels/reduction.hpp"
#include "kernels/tree/tree_order.hpp"
#include "kernels/tree/tree_tuning.hpp"

namespace ulpscope::model {

// Lanes 0..31 of a warp: the shuffle tree of tree_order.hpp, step 2.
template <class R>
void warp_reduce(typename R::Partial* lane) {
  for (int off = kWarpSize / 2; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) R::merge(lane[l], lane[l + off]);
}

// Step 3: T lanes (a multiple of 32) to one partial; lanes are clobbered.
template <class R>
typename R::Partial block_reduce(typename R::Partial* lane, int threads) {
  typename R::Partial slot[kWarpSize];
  for (int w = 0; w < kWarpSize; ++w) slot[w] = R::identity();
  for (int w = 0; w < threads / kWarpSize; ++w) {
    warp_reduce<R>(lane + w * kWarpSize);
    slot[w] = lane[w * kWarpSize];
  }
  warp_reduce<R>(slot);
  return slot[0];
}

// R::add_group<K>, called only where reducer_adds_groups<R, K>. A function of
// its own because clang 14 looks the member up in a discarded branch of a
// generic lambda (the fuzz build, tests/fuzz), where GCC does not.
template <class R, int K, class... Args>
void add_group_of(Args&&... args) {
  R::template add_group<K>(std::forward<Args>(args)...);
}

// Step 1 for thread g of an order over x (and y), starting at element 0.
template <class R>
typename R::Partial thread_partial(const TreeOrder& o, std::int64_t g, const float* x, const float* y,
                                   const typename R::Params& pr) {
  auto st = R::start();
  const std::int64_t nv = o.vectors();
  // The kernel's loads (tree_agent.cuh, VectorChain): groups of U vectors
  // v, v + G, ... (tree/tree_tuning.hpp, group_loads) while U remain, then halving
  // groups, then single vectors; a group of N vectors is one add_group of N*W
  // terms where the reducer takes it, else its vectors one by one, each one
  // add_group of W where the reducer takes that, else W adds.
  auto add_loads = [&]<int W, int N>(std::integral_constant<int, W>, std::integral_constant<int, N>,
                                     std::int64_t v) {
    float a[N * W], b[N * W];
    for (int u = 0; u < N; ++u)
      for (int j = 0; j < W; ++j) {
        const std::int64_t i = (v + u * o.threads) * W + j;
        a[u * W + j] = x[i];
        b[u * W + j] = y ? y[i] : 0.0f;
      }
    if constexpr (reducer_adds_groups<R, N * W>) {
      add_group_of<R, N * W>(st, a, y ? b : nullptr, pr);
    } else {
      for (int u = 0; u < N; ++u) {
        if constexpr (reducer_adds_groups<R, W>) {
          add_group_of<R, W>(st, a + u * W, y ? b + u * W : nullptr, pr);
        } else {
          for (int j = 0; j < W; ++j) R::add(st, a[u * W + j], b[u * W + j], pr);
        }
      }
    }
  };
  auto add_vectors = [&]<int W>(std::integral_constant<int, W> w) {
    constexpr int U = group_loads<R, W>();
    const std::int64_t G = o.threads;
    std::int64_t v = g;
    for (; v + (U - 1) * G < nv; v += U * G) add_loads(w, std::integral_constant<int, U>{}, v);
    if constexpr (U >= 8) {
      if (v + 3 * G < nv) {
        add_loads(w, std::integral_constant<int, 4>{}, v);
        v += 4 * G;
      }
    }
    if constexpr (U >= 4) {
      if (v + G < nv) {
        add_loads(w, std::integral_constant<int, 2>{}, v);
        v += 2 * G;
      }
    }
    for (; v < nv; v += G) add_loads(w, std::integral_constant<int, 1>{}, v);
  };
  switch (o.vec) {
    case 16: add_vectors(std::integral_constant<int, 16>{}); break;
    case 8: add_vectors(std::integral_constant<int, 8>{}); break;
    case 4: add_vectors(std::integral_constant<int, 4>{}); break;
    default:
      for (std::int64_t i = g * o.vec; i < nv * o.vec;) {
        for (int j = 0; j < o.vec; ++j) R::add(st, x[i + j], y ? y[i + j] : 0.0f, pr);
        i += o.threads * o.vec;
      }
  }
  if (g < o.tail()) {
    const std::int64_t i = o.tail_begin() + g;
    R::add(st, x[i], y ? y[i] : 0.0f, pr);
  }
  return R::partial(st);
}

// The block partials of the first pass alone (the atomic shape's inputs).
template <class R>
std::vector<typename R::Partial> tree_block_partials(const float* x, const float* y, std::int64_t n, int vec,
                                                     const LaunchConfig& cfg, const typename R::Params& pr) {
  const int T = cfg.threads;
  const TreeOrder o{n, vec, std::int64_t(cfg.blocks) * T};
  std::vector<typename R::Partial> lanes(T), blocks(cfg.blocks);
  for (int b = 0; b < cfg.blocks; ++b) {
    for (int t = 0; t < T; ++t) lanes[t] = thread_partial<R>(o, std::int64_t(b) * T + t, x, y, pr);
    blocks[b] = block_reduce<R>(lanes.data(), T);
  }
  return blocks;
}

// Whole array, steps 1-4: the partial the second pass's thread 0 holds.
template <class R>
typename R::Partial tree_whole(const float* x, const float* y, std::int64_t n, int vec,
                               const LaunchConfig& cfg, const typename R::Params& pr) {
  const int T = cfg.threads;
  const std::vector<typename R::Partial> blocks = tree_block_partials<R>(x, y, n, vec, cfg, pr);
  std::vector<typename R::Partial> lanes(T);
  for (int t = 0; t < T; ++t) {
    lanes[t] = R::identity();
    for (int i = t; i < cfg.blocks; i += T) R::merge(lanes[t], blocks[i]);
  }
  return block_reduce<R>(lanes.data(), T);
}

// One row (or a whole array) in one block: steps 1-3 with G = T.
template <class R>
typename R::Partial tree_block(const float* x, const float* y, std::int64_t n, int vec, int threads,
                               const typename R::Params& pr, std::vector<typename R::Partial>& lanes) {
  const TreeOrder o{n, vec, threads};
  lanes.resize(threads);
  for (int t = 0; t < threads; ++t) lanes[t] = thread_partial<R>(o, t, x, y, pr);
  return block_reduce<R>(lanes.data(), threads);
}

// Serial: one running state over n elements spaced by stride.
template <class R>
typename R::Partial serial(const float* x, const float* y, std::int64_t n, std::int64_t stride,
                           const typename R::Params& pr) {
  auto st = R::start();
  for (std::int64_t i = 0; i < n; ++i) R::add(st, x[i * stride], y ? y[i * stride] : 0.0f, pr);
  return R::partial(st);
}

}  // namespace ulpscope::model
