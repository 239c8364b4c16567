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

// Step 1 for the threads g0 .. g0+K-1 of an order over x (and y): their
// partials in part[0..K). Each thread adds exactly the sequence of step 1, but
// the threads advance together through the groups of loads they all have, so
// that the K threads read K neighbouring vectors at a time, as a warp's loads
// do on the GPU, instead of one thread walking the whole array at a stride of
// G vectors (a stride that maps every load to the same cache sets).
template <class R>
void thread_partials(const TreeOrder& o, std::int64_t g0, int K, const float* x, const float* y,
                     const typename R::Params& pr, typename R::Partial* part) {
  using State = decltype(R::start());
  std::vector<State> st(std::size_t(K), R::start());
  const std::int64_t nv = o.vectors(), G = o.threads;
  // The kernel's loads (tree_agent.cuh, VectorChain): groups of U vectors
  // v, v + G, ... (tree/tree_tuning.hpp, group_loads) while U remain, then halving
  // groups, then single vectors; a group of N vectors is one add_group of N*W
  // terms where the reducer takes it, else its vectors one by one, each one
  // add_group of W where the reducer takes that, else W adds.
  auto add_loads = [&]<int W, int N>(std::integral_constant<int, W>, std::integral_constant<int, N>, State& s,
                                     std::int64_t v) {
    float a[N * W], b[N * W];
    for (int u = 0; u < N; ++u)
      for (int j = 0; j < W; ++j) {
        const std::int64_t i = (v + u * G) * W + j;
        a[u * W + j] = x[i];
        b[u * W + j] = y ? y[i] : 0.0f;
      }
    if constexpr (reducer_adds_groups<R, N * W>) {
      add_group_of<R, N * W>(s, a, y ? b : nullptr, pr);
    } else {
      for (int u = 0; u < N; ++u) {
        if constexpr (reducer_adds_groups<R, W>) {
          add_group_of<R, W>(s, a + u * W, y ? b + u * W : nullptr, pr);
        } else {
          for (int j = 0; j < W; ++j) R::add(s, a[u * W + j], b[u * W + j], pr);
        }
      }
    }
  };
  // Full groups of U while U vectors remain: thread g has them while
  // v + (U-1)G < nv; the last of the K threads has the fewest, and all K
  // take those together.
  auto common_groups = [&](std::int64_t step) {
    const std::int64_t last = g0 + K - 1, need = last + step - G;
    return last + step - G < nv ? (nv - 1 - need) / step + 1 : std::int64_t(0);
  };
  auto add_vectors = [&]<int W>(std::integral_constant<int, W> w) {
    constexpr int U = group_loads<R, W>();
    const std::int64_t together = common_groups(std::int64_t(U) * G);
    for (std::int64_t k = 0; k < together; ++k)
      for (int t = 0; t < K; ++t) add_loads(w, std::integral_constant<int, U>{}, st[std::size_t(t)], g0 + t + k * U * G);
    for (int t = 0; t < K; ++t) {
      State& s = st[std::size_t(t)];
      std::int64_t v = g0 + t + together * U * G;
      for (; v + (U - 1) * G < nv; v += U * G) add_loads(w, std::integral_constant<int, U>{}, s, v);
      if constexpr (U >= 8) {
        if (v + 3 * G < nv) {
          add_loads(w, std::integral_constant<int, 4>{}, s, v);
          v += 4 * G;
        }
      }
      if constexpr (U >= 4) {
        if (v + G < nv) {
          add_loads(w, std::integral_constant<int, 2>{}, s, v);
          v += 2 * G;
        }
      }
      for (; v < nv; v += G) add_loads(w, std::integral_constant<int, 1>{}, s, v);
    }
  };
  switch (o.vec) {
    case 16: add_vectors(std::integral_constant<int, 16>{}); break;
    case 8: add_vectors(std::integral_constant<int, 8>{}); break;
    case 4: add_vectors(std::integral_constant<int, 4>{}); break;
    default: {
      // One vector of o.vec elements at a time, element by element.
      const std::int64_t together = common_groups(G);
      auto add_vector = [&](State& s, std::int64_t v) {
        for (int j = 0; j < o.vec; ++j) {
          const std::int64_t i = v * o.vec + j;
          R::add(s, x[i], y ? y[i] : 0.0f, pr);
        }
      };
      for (std::int64_t k = 0; k < together; ++k)
        for (int t = 0; t < K; ++t) add_vector(st[std::size_t(t)], g0 + t + k * G);
      for (int t = 0; t < K; ++t)
        for (std::int64_t v = g0 + t + together * G; v < nv; v += G) add_vector(st[std::size_t(t)], v);
    }
  }
  for (int t = 0; t < K; ++t) {
    const std::int64_t g = g0 + t;
    if (g < o.tail()) {
      const std::int64_t i = o.tail_begin() + g;
      R::add(st[std::size_t(t)], x[i], y ? y[i] : 0.0f, pr);
    }
    part[t] = R::partial(st[std::size_t(t)]);
  }
}

// The block partials of the first pass alone (the atomic shape's inputs).
template <class R>
std::vector<typename R::Partial> tree_block_partials(const float* x, const float* y, std::int64_t n, int vec,
                                                     const LaunchConfig& cfg, const typename R::Params& pr) {
  const int T = cfg.threads;
  const TreeOrder o{n, vec, std::int64_t(cfg.blocks) * T};
  std::vector<typename R::Partial> lanes(T), blocks(cfg.blocks);
  for (int b = 0; b < cfg.blocks; ++b) {
    thread_partials<R>(o, std::int64_t(b) * T, T, x, y, pr, lanes.data());
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
  thread_partials<R>(o, 0, threads, x, y, pr, lanes.data());
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
