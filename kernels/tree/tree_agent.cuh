#pragma once
// The `tree` shape's kernels, following tree_order.hpp step by step over any
// reducer (reducers.hpp). Whole array: block partials, then a second pass of
// one block; row-wise: one block per row (inner) or one thread per column
// (outer). Two-pass reducers run the first reducer's kernels, which leave the
// second pass's parameters (one per reduction) in the workspace.
#include <cstdint>
#include <type_traits>

#include "kernels/reducers.hpp"
#include "kernels/store_out.hpp"
#include "kernels/tree/async_chain.cuh"
#include "kernels/tree/block_bins.cuh"
#include "kernels/tree/block_reduce.cuh"
#include "kernels/tree/load.cuh"
#include "kernels/tree/tree_order.hpp"
#include "kernels/tree/tree_tuning.hpp"

namespace ulpscope::tree {

// The first pass's reducer: R, or R with its digits outside the state.
template <class R, bool Outside>
struct first_pass_of {
  using type = R;
};
template <class Acc, TermKind K>
struct first_pass_of<SumReducer<Acc, K>, true> {
  using type = SumReducer<typename Acc::WithLimbsOutside, K>;
};
template <class F>
struct first_pass_of<ExactMomentsReducer<F>, true> {
  using type = ExactMomentsReducer<F, true>;
};
// Or the squares in bins (tree_tuning.hpp, exact_in_bins), mean_var's with
// its values in a window (exact_value_window.hpp).
template <class R, class Elem>
struct first_pass_in {
  using type = typename first_pass_of<R, (kLimbsRegisters<R, Elem> > 0)>::type;
};
template <class Acc, class Elem>
  requires(exact_first_pass<SumReducer<Acc, TermKind::square>>::exact &&
           exact_in_bins(ExactSums::squares, dtype_of_v<Elem>))
struct first_pass_in<SumReducer<Acc, TermKind::square>, Elem> {
  using type = BinnedSquaresReducer<typename Elem::format, Acc>;
};
template <class F, class Elem>
  requires(exact_in_bins(ExactSums::moments, dtype_of_v<Elem>))
struct first_pass_in<ExactMomentsReducer<F>, Elem> {
  using type = BinnedMomentsReducer<F, typename ExactMomentsReducer<F>::A1, typename ExactMomentsReducer<F>::A2>;
};
template <class R, class Elem>
using first_pass_t = typename first_pass_in<R, Elem>::type;

// Doubles per thread a first pass keeps in shared memory (its bins), 0 for
// the others.
template <class R>
inline constexpr int shared_bins_of = [] {
  if constexpr (requires { R::shared_bins; }) return R::shared_bins;
  else return 0;
}();

// Dynamic shared memory of block_partials<R> for blocks of `threads`: the
// digits (limbs_outside_of) or the bins (shared_bins_of) and their block's
// integers (shared_block_words_of), then the chains' slots.
template <class R>
inline constexpr int shared_words_of = limbs_outside_of<R> + shared_bins_of<R>;
// And words per block (the bins' integers, block_bins.cuh).
template <class R>
inline constexpr int shared_block_words_of = [] {
  if constexpr (requires { R::block_words; }) return R::block_words;
  else return 0;
}();
template <class R, bool Y, class Elem>
constexpr std::size_t first_pass_shared_bytes(int threads) {
  static_assert(sizeof(double) == sizeof(std::int64_t));
  return (std::size_t(shared_words_of<R>) * std::size_t(threads) + std::size_t(shared_block_words_of<R>)) *
             sizeof(std::int64_t) +
         async_chain_bytes<kAsyncStages<R, Elem>, Y>(threads);
}

template <class Elem>
__device__ __forceinline__ void prefetch_vector(const Elem* base, std::int64_t v) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(reinterpret_cast<const uint4*>(base) + v));
}

template <class R>
__device__ __forceinline__ typename R::Params params_at(const typename R::Params* p, std::int64_t i) {
  return p ? p[i] : typename R::Params{};
}

// R::finish behind a call: the kernels of one reducer (second pass, rows,
// columns, norms, each for every sink) share one copy of it in the PTX, which
// for exact (rounding, square root and division of the long integer) is most
// of their code. It runs once per reduction, on one thread. ptxas still
// compiles it into each calling kernel (whole-program mode clones callees);
// relocatable device code would compile it once but ran slower, so the units
// stay whole-program (docs/perf-h100.md, "Tuning of the tree kernels: finish").
template <class R>
__device__ __noinline__ Finished finish(typename R::Partial p, FinishArgs args, typename R::Params pr) {
  return R::finish(p, args, pr);
}

template <class R>
__device__ __forceinline__ typename R::Partial stand_in() {
  auto p = R::identity();
  if constexpr (requires { p.limb[0]; }) p.limb[0] = 1;
  else p.p1.limb[0] = p.p2.limb[0] = 1;
  return p;
}

// Where a reduction's result goes: the outputs, or the parameters of the next
// pass (Next = void: outputs).
template <class Next>
struct Sink {
  using NextParams = typename Next::Params;
  NextParams* next;
  __device__ void put(const Finished& f, std::int64_t i) const { next[i] = Next::params(f); }
};
// values (widened to double), unrounded and typed (in the output format
// `out`, store_out.hpp) may each be null.
template <>
struct Sink<void> {
  double* values;
  double* unrounded;
  int components;
  void* typed = nullptr;
  Dtype out = Dtype::fp64;
  Saturation sat = Saturation::satfinite;
  __device__ void put(const Finished& f, std::int64_t i) const {
    for (int k = 0; k < components; ++k) {
      if (values) values[i * components + k] = f.value[k];
      if (unrounded) unrounded[i * components + k] = f.unrounded[k];
      if (typed) store_out(f.value[k], out, sat, typed, i * components + k);
    }
  }
};

// Step 1's vectors of thread g: v = g, g + G, ... below an end (add_to), U
// loads in flight before their elements are added (reducers.hpp,
// group_loads), one group of U*W terms where the reducer takes such a group,
// else one vector after the other; then halving groups (pairwise: the same
// tree, fewer carries; count stays a multiple of each group), then one at a
// time. Stages > 0: the vectors come through async chains in `slots`.
template <class R, bool Y, int Stages, class Elem>
struct VectorChain {
  static constexpr int W = Vector<Elem>::width;
  static constexpr int U = group_loads<R, W>();
  using State = typename R::State;
  using Params = typename R::Params;
  const Elem* x;
  const Elem* y;
  std::int64_t v, threads, nv;
  VectorSource<Elem, Stages> xsrc;
  VectorSource<Elem, Y ? Stages : 0> ysrc;

  __device__ __forceinline__ VectorChain(const TreeOrder& o, std::int64_t g, const Elem* x_, const Elem* y_,
                                         uint4* slots)
      : x(x_),
        y(y_),
        v(g),
        threads(o.threads),
        nv(o.vectors()),
        xsrc(x_, g, o.threads, o.vectors(), slots),
        ysrc(y_, g, o.threads, o.vectors(), slots + Stages * blockDim.x) {}

  __device__ __forceinline__ void add_vector(State& st, const Params& pr, const Vector<Elem>& xa,
                                             const Vector<Elem>* ya) {
    if constexpr (adds_values_as_doubles<R, Elem>) {
      R::template add_values_by<W>(st, [&](int j) { return value_as_double(xa, j); });
    } else {
      float a[W], b[W];
      widen_vector_as<widens_bf16_by_words<R>>(xa, a);
      if constexpr (Y) widen_vector_as<widens_bf16_by_words<R>>(*ya, b);
      if constexpr (reducer_adds_groups<R, W>) {
        R::template add_group<W>(st, a, b, pr);
      } else {
#pragma unroll
        for (int j = 0; j < W; ++j) R::add(st, a[j], Y ? b[j] : 0.0f, pr);
      }
    }
  }

  template <int N>
  __device__ __forceinline__ void add_loads(State& st, const Params& pr) {
    if constexpr (kPrefetchGroups<R> > 0) {
#pragma unroll
      for (int u = 0; u < N; ++u) {
        const std::int64_t ahead = v + (kPrefetchGroups<R> * N + u) * threads;
        if (ahead < nv) {
          prefetch_vector(x, ahead);
          if constexpr (Y) prefetch_vector(y, ahead);
        }
      }
    }
    Vector<Elem> xs[N], ys[N];
#pragma unroll
    for (int u = 0; u < N; ++u) {
      xs[u] = xsrc.next(x, v + u * threads);
      if constexpr (Y) ys[u] = ysrc.next(y, v + u * threads);
    }
    if constexpr (reducer_adds_groups<R, N * W> && !adds_values_as_doubles<R, Elem>) {
      float a[N * W], b[N * W];
#pragma unroll
      for (int u = 0; u < N; ++u) {
        widen_vector_as<widens_bf16_by_words<R>>(xs[u], a + u * W);
        if constexpr (Y) widen_vector_as<widens_bf16_by_words<R>>(ys[u], b + u * W);
      }
      R::template add_group<N * W>(st, a, b, pr);
    } else {
#pragma unroll
      for (int u = 0; u < N; ++u) add_vector(st, pr, xs[u], &ys[u]);
    }
    v += N * threads;
  }

  // The chain's vectors below end (at most nv).
  __device__ __forceinline__ void add_to(State& st, const Params& pr, std::int64_t end) {
    for (; v + (U - 1) * threads < end;) add_loads<U>(st, pr);
    if constexpr (U >= 8) {
      if (v + 3 * threads < end) add_loads<4>(st, pr);
    }
    if constexpr (U >= 4) {
      if (v + 1 * threads < end) add_loads<2>(st, pr);
    }
    for (; v < end; v += threads) {
      const Vector<Elem> x0 = xsrc.next(x, v);
      Vector<Elem> y0;
      if constexpr (Y) y0 = ysrc.next(y, v);
      add_vector(st, pr, x0, &y0);
    }
  }
};

// Step 1: thread g's chain over the order o (vector loads when o.vec > 1).
// limbs: the thread's slice of shared memory where R keeps its digits there.
// Stages > 0: the vectors come through async chains in `slots` (o.vec > 1).
template <class R, bool Y, int Stages = 0, class Elem>
__device__ __forceinline__ typename R::Partial thread_chain(const TreeOrder& o, std::int64_t g, const Elem* x,
                                                            const Elem* y, const typename R::Params& pr,
                                                            std::int64_t* limbs = nullptr, uint4* slots = nullptr) {
  auto st = R::start();
  if constexpr (limbs_outside_of<R> > 0) R::place_limbs(st, limbs);
  const std::int64_t nv = o.vectors();
  if (o.vec > 1) {
    VectorChain<R, Y, Stages, Elem> chain(o, g, x, y, slots);
    chain.add_to(st, pr, nv);
  } else {
    for (std::int64_t i = g; i < nv; i += o.threads) R::add(st, widen(x[i]), Y ? widen(y[i]) : 0.0f, pr);
  }
  if (g < o.tail()) {
    const std::int64_t i = o.tail_begin() + g;
    R::add(st, widen(x[i]), Y ? widen(y[i]) : 0.0f, pr);
  }
  return R::partial(st);
}

// Steps 1-3 of the whole-array order; Atomic: thread 0 adds the block's
// partial into partials[0] with atomicAdd instead (the atomic shape).
template <class R, bool Y, bool Atomic, class Elem>
__device__ __forceinline__ void block_partials_body(const Elem* x, const Elem* y, std::int64_t n,
                                                    const typename R::Params* params, typename R::Partial* partials) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // The second pass may be scheduled from now on (it waits for this grid in
  // griddepcontrol.wait): without this it is launched only once every block
  // has exited.
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  extern __shared__ __align__(16) std::int64_t limbs[];  // first_pass_shared_bytes<R, Y, Elem>
  const TreeOrder o{n, Vector<Elem>::width, std::int64_t(gridDim.x) * blockDim.x};
  constexpr int S = Atomic ? 0 : kAsyncStages<R, Elem>;  // the atomic shape is launched without them
  const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  auto* slots = reinterpret_cast<uint4*>(limbs + shared_words_of<R> * blockDim.x + shared_block_words_of<R>);
  typename R::Partial p;
  if constexpr (shared_bins_of<R> > 0) {
    // Bins: bin-major, a bin's doubles of all threads side by side, then the
    // digits of warp 0's integers (block_bins.cuh).
    VectorChain<R, Y, S, Elem> chain(o, g, x, y, slots);
    p = binned_block_partial<R>(o, g, x, chain, reinterpret_cast<double*>(limbs),
                                limbs + shared_words_of<R> * blockDim.x);
  } else {
    // A thread's digits are a slice of its own.
    p = thread_chain<R, Y, S>(o, g, x, y, params_at<R>(params, 0), limbs + limbs_outside_of<R> * threadIdx.x, slots);
    p = block_reduce<R>(p);
  }
  if (threadIdx.x == 0) {
    if constexpr (Atomic) atomicAdd(&partials[0].s, p.s);
    else partials[blockIdx.x] = p;
  }
}

template <class R, bool Y, bool Atomic, class Elem>
__global__ void __launch_bounds__(kMaxThreads, kMinBlocks<R>)
    block_partials(const Elem* x, const Elem* y, std::int64_t n, const typename R::Params* params,
                   typename R::Partial* partials) {
  block_partials_body<R, Y, Atomic>(x, y, n, params, partials);
}

// The first pass of reducers whose digits are in shared memory, held to
// Regs registers (kLimbsRegisters; a kernel takes __launch_bounds__ or
// __maxnreg__, not both).
template <class R, bool Y, class Elem, int Regs>
__global__ void __maxnreg__(Regs)
    block_partials_limbs(const Elem* x, const Elem* y, std::int64_t n, const typename R::Params* params,
                         typename R::Partial* partials) {
  block_partials_body<R, Y, false>(x, y, n, params, partials);
}

// Step 4: one block over the block partials, then thread 0 finishes. Launched
// as a programmatic dependent of block_partials (tree_launch.cuh): it waits
// here for that grid to complete and its writes to be visible. Each thread
// loads kSecondPassLoads partials before merging them, in the same order
// (i = t, t + T, ...), so that the loads wait on L2 together.
template <class R, class Next>
__global__ void __launch_bounds__(kMaxThreads)
    second_pass(const typename R::Partial* partials, int count, FinishArgs args, const typename R::Params* params,
                Sink<Next> sink) {
  if constexpr (warms_finish<R>) {
    // One thread of the last warp runs finish on a stand-in (the least
    // positive value) before the wait, so that thread 0's finish after the
    // merges finds its code in the SM's instruction caches (docs/perf-h100.md,
    // "Tuning of the tree kernels: warms_finish").
    if (threadIdx.x == blockDim.x - kWarpSize) {
      const Finished f = finish<R>(stand_in<R>(), args, typename R::Params{});
      asm volatile("" ::"d"(f.value[0]));
    }
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  using Partial = typename R::Partial;
  constexpr int K = kSecondPassLoads<Partial>;
  auto p = R::identity();
  for (int base = threadIdx.x; base < count; base += K * blockDim.x) {
    Partial q[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (base + k * int(blockDim.x) < count) q[k] = partials[base + k * blockDim.x];
#pragma unroll
    for (int k = 0; k < K; ++k)
      if (base + k * int(blockDim.x) < count) R::merge(p, q[k]);
  }
  p = block_reduce<R>(p);
  if (threadIdx.x == 0) sink.put(finish<R>(p, args, params_at<R>(params, 0)), 0);
}

// Inner rows: one block per row (rows strided over the grid), steps 1-3 with
// G = blockDim.x; vector loads when every row starts 16-byte aligned.
template <class R, bool Y, class Next, class Elem>
__global__ void __launch_bounds__(kMaxThreads)
    inner_rows(const Elem* x, const Elem* y, std::int64_t rows, std::int64_t cols, FinishArgs args,
               const typename R::Params* params, Sink<Next> sink) {
  const int vec = cols % Vector<Elem>::width == 0 ? Vector<Elem>::width : 1;
  const TreeOrder o{cols, vec, blockDim.x};
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const auto pr = params_at<R>(params, r);
    auto p = thread_chain<R, Y>(o, threadIdx.x, x + r * cols, Y ? y + r * cols : nullptr, pr);
    p = block_reduce<R>(p);
    if (threadIdx.x == 0) sink.put(finish<R>(p, args, pr), r);
  }
}

// rmsnorm, layernorm: every element of each row from the row's statistics,
// which inner_rows of the statistics op left in `stats` (its unrounded
// outputs, c per row), in the reducer's precision T (elementwise, no
// order). One kernel per T and input format rather than one per reducer: the
// statistics come from the inner_rows kernel that the sumsq and mean_var rows
// use anyway (a fused kernel per reducer was 18% of the bf16 unit's PTX).
template <class T, class Elem>
__global__ void __launch_bounds__(kMaxThreads)
    normalize_rows(const Elem* x, const Elem* gamma, const Elem* beta, std::int64_t rows, std::int64_t cols, Op op,
                   FinishArgs args, const double* stats, int c, double* values, double* unrounded) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    Finished f{};
    for (int k = 0; k < c; ++k) f.unrounded[k] = stats[r * c + k];
    const RowNorm<T> norm = RowNorm<T>::from(op, f, cols, args.eps);
    const Elem* row = x + r * cols;
    for (std::int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      const double v =
          double(norm.apply(widen(row[j]), gamma ? widen(gamma[j]) : 1.0f, beta ? widen(beta[j]) : 0.0f));
      values[r * cols + j] = round_to_out(v, args.out, args.sat);
      if (unrounded) unrounded[r * cols + j] = v;
    }
  }
}

// Outer columns: one thread per column, rows in index order.
template <class R, bool Y, class Next, class Elem>
__global__ void __launch_bounds__(kMaxThreads)
    outer_columns(const Elem* x, const Elem* y, std::int64_t rows, std::int64_t cols, FinishArgs args,
                  const typename R::Params* params, Sink<Next> sink) {
  for (std::int64_t c = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += std::int64_t(gridDim.x) * blockDim.x) {
    const auto pr = params_at<R>(params, c);
    auto st = R::start();
    for (std::int64_t r = 0; r < rows; ++r)
      R::add(st, widen(x[r * cols + c]), Y ? widen(y[r * cols + c]) : 0.0f, pr);
    sink.put(finish<R>(R::partial(st), args, pr), c);
  }
}

}  // namespace ulpscope::tree
