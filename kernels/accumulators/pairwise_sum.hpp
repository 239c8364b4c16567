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
  // free level keeps it. On the GPU every low level is a select, with no
  // branch and no store through a computed address, so that those levels stay
  // in registers: with a branch and a break, the compiler merges the stores
  // into one whose address depends on the count and moves the levels to local
  // memory (seen in the PTX: a 128-byte local depot). The same additions in
  // the same order either way.
  template <int L>
  ULPSCOPE_HD static void carry(State& st, float v) {
    const std::uint64_t c = st.count;
    int k = L;
#if defined(__CUDA_ARCH__)
    bool moving = true;
    ULPSCOPE_UNROLL
    for (int j = L; j < kLow; ++j) {
      const bool occupied = (c >> j) & 1u;
      const float merged = rn::add(st.low[j], v);
      st.low[j] = moving && !occupied ? v : st.low[j];
      v = occupied ? merged : v;
      moving = moving && occupied;
    }
    if (!moving) return;
    k = L > kLow ? L : kLow;
#endif
    for (; k < Levels; ++k) {
      if (((c >> k) & 1u) == 0) {
        st.at(k) = v;
        return;
      }
      v = rn::add(st.at(k), v);
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
