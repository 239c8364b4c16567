#pragma once
// pairwise: fp32 summation along a balanced binary tree, built on line as a
// binary counter: level k holds the sum of the last complete block of 2^k
// terms (Higham 2002, section 4.1; the "cascade" of Castaldo et al. 2008).
// A thread's partial closes its open blocks from the smallest up; threads
// then merge along the warp and block trees, which are balanced already.
#include <cstdint>

#include "formats/host_device.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

template <int Levels>
struct PairwiseSumOf {
  using term_t = float;
  using value_t = float;
  // Levels below kLow change every few groups and stay in registers on the
  // GPU; the levels above change once per 2^8 groups of 64 terms at most and
  // may live in local memory (two arrays, so that the compiler can keep the
  // first in registers whatever it does with the second).
  static constexpr int kLow = Levels < 14 ? Levels : 14;
  struct State {
    float low[kLow];
    float high[Levels - kLow > 0 ? Levels - kLow : 1];
    std::uint64_t count;
    ULPSCOPE_HD float& at(int k) { return k < kLow ? low[k] : high[k - kLow]; }
    ULPSCOPE_HD float at(int k) const { return k < kLow ? low[k] : high[k - kLow]; }
  };
  struct Partial {
    float s;
  };
  ULPSCOPE_HD static State start() {
    State st;
    ULPSCOPE_UNROLL
    for (int k = 0; k < kLow; ++k) st.low[k] = -0.0f;
    // The high levels are read only once written (their bit of count set);
    // left unset, so that no thread writes them to memory before it needs them.
    st.count = 0;
    return st;
  }
  ULPSCOPE_HD static Partial identity() { return {-0.0f}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }
  ULPSCOPE_HD static term_t product(float x, float y) { return rn::mul(x, y); }
  // Terms i and i+1 pair first, then pairs of pairs: the carry chain of count.
  ULPSCOPE_HD static void add(State& st, term_t t) {
    carry<0>(st, t);
    ++st.count;
  }
  // Adds the sum of a complete block of 2^L terms at level L: while level k
  // is occupied (bit k of count), it absorbs level k and moves up; the first
  // free level keeps it (carry_low).
  template <int L>
  ULPSCOPE_HD static void carry(State& st, float v) {
    carry_low<L>(st, v, st.count);
  }
  // carry from level J, the same code on the host and the GPU: a level per
  // template instance, so that every index below kLow is a constant and
  // those levels stay in registers on the GPU (a loop that breaks where the
  // chain ends had the compiler merge its stores into one through a computed
  // address and move the levels to local memory: a 128-byte depot in the
  // PTX), branching where the chain ends: a binary counter's carry visits
  // two levels on average, and the count is the same in every lane of a warp
  // but for a thread's last vectors, so the branches do not diverge; faster
  // than a select at every level (docs/perf-h100.md, "pairwise_sum.hpp").
  template <int J>
  ULPSCOPE_HD static void carry_low(State& st, float v, std::uint64_t c) {
    if constexpr (J >= kLow) {
      for (int k = J; k < Levels; ++k) {
        if (((c >> k) & 1u) == 0) {
          st.at(k) = v;
          return;
        }
        v = rn::add(st.at(k), v);
      }
    } else {
      if (((c >> J) & 1u) == 0) {
        st.low[J] = v;
        return;
      }
      carry_low<J + 1>(st, rn::add(st.low[J], v), c);
    }
  }
  // Two sums with the same count (mean_var's sum of x and of x^2): each
  // level's branch taken once for both, which halves the fp8 first pass's
  // registers (docs/perf-h100.md, "pairwise_sum.hpp").
  template <int J>
  ULPSCOPE_HD static void carry_low_pair(State& a, float va, State& b, float vb, std::uint64_t c) {
    if (((c >> J) & 1u) == 0) {
      a.low[J] = va;
      b.low[J] = vb;
      return;
    }
    va = rn::add(a.low[J], va);
    vb = rn::add(b.low[J], vb);
    if constexpr (J + 1 < kLow) {
      carry_low_pair<J + 1>(a, va, b, vb, c);
    } else {
      carry_low<J + 1>(a, va, c);  // J + 1 == kLow: the high levels, each sum alone
      carry_low<J + 1>(b, vb, c);
    }
  }
  // The balanced tree of t[0..N): ((t0 + t1) + (t2 + t3)) + ..., written
  // recursively so that every index is a constant (registers on the GPU).
  template <int N>
  ULPSCOPE_HD static float tree(const term_t* t) {
    if constexpr (N == 1) return t[0];
    else return rn::add(tree<N / 2>(t), tree<N / 2>(t + N / 2));
  }

  // W terms at once when count is a multiple of W (a power of two): their
  // balanced tree, then the carry chain from level log2(W) on. The same
  // additions in the same order as W calls of add(), with fewer steps of the
  // counter (the tree kernels add whole vectors).
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const term_t* t) {
    static_assert(W >= 2 && (W & (W - 1)) == 0, "a power of two");
    constexpr int L = ceil_log2(W);
    static_assert(L < Levels);
    carry<L>(st, tree<W>(t));
    st.count += W;
  }
  // add_group<W> to two sums of the same count at once (the same additions).
  template <int W>
  ULPSCOPE_HD static void add_group_pair(State& a, const term_t* ta, State& b, const term_t* tb) {
    static_assert(W >= 2 && (W & (W - 1)) == 0, "a power of two");
    constexpr int L = ceil_log2(W);
    static_assert(L < kLow);
    carry_low_pair<L>(a, tree<W>(ta), b, tree<W>(tb), a.count);
    a.count += W;
    b.count += W;
  }
  ULPSCOPE_HD static Partial partial(const State& st) {
    float v = -0.0f;
    bool any = false;
    ULPSCOPE_UNROLL
    for (int k = 0; k < kLow; ++k) {
      if (!((st.count >> k) & 1u)) continue;
      v = any ? rn::add(st.low[k], v) : st.low[k];
      any = true;
    }
    for (int k = kLow; k < Levels; ++k) {
      if (!((st.count >> k) & 1u)) continue;
      v = any ? rn::add(st.at(k), v) : st.at(k);
      any = true;
    }
    return {v};
  }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) { a.s = rn::add(a.s, b.s); }
  ULPSCOPE_HD static value_t total(const Partial& p) { return p.s; }
};

// 32 levels: up to 2^32 - 1 terms in one chain (the serial shape included),
// few enough registers for a GPU thread.
using PairwiseSum = PairwiseSumOf<32>;

}  // namespace ulpscope
