#pragma once
// The exact sum of squares of bf16 in bins of double, one bin per 8 binades
// of the input, indexed by the value's exponent field: the tree kernels'
// first pass of exact sumsq, norm2, rms of bf16 (tree_agent.cuh,
// first_pass_t; the block's flushes in tree/block_bins.cuh), its bins in
// shared memory. The same integer as ExactSumOf's (Acc) add of each square,
// so the second pass and the models are Acc's.
//
// A value x = m 2^(E - bias - man_bits), m < 2^(man_bits + 1), with E in bin
// b's fields [8b, 8b + 7] has a square that is a multiple of the bin's
// quantum 2^(2 (max(8b, 1) - bias - man_bits)) below 2^(2 (8 + man_bits)) =
// 2^30 of them, so run_terms = 2^23 squares add exactly in bin b's doubles
// (each partial sum a multiple of the quantum below 2^53 of them), in any
// order and grouping: a thread's bin, and the sum of one bin over a block's
// threads, as long as the block's threads have added at most run_terms
// squares since the last flush. A flush sums each bin over the block and
// spills the sum into an integer of Acc's with its digits in memory
// (Integer, one per bin), every bin back to -0. A square is one conversion,
// one multiplication and one addition, in a bin at a computed address,
// against the window's split and checks (ExactSumOf, "Window";
// docs/perf-h100.md, "Tuning of the tree kernels: exact_in_bins"). Infinities
// and NaN (field 255) land in
// the top bin and make it infinite or NaN, which its spill turns into the
// integer's flags; a bin starts at -0, which every square (+0 or more)
// changes, so that an untouched bin spills nothing.
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/rounded_arith.hpp"

namespace ulpscope {

template <class F, class Acc>
struct ExactBinnedSquares {
  // The bin comes from the float's exponent field, which is F's own (bf16
  // is float's top half).
  static_assert(F::exp_bits == 8 && F::man_bits <= 23, "F's exponent field is float's");
  static constexpr int kBinLog2 = 3;                        // fields per bin: 8
  static constexpr int bins = 1 << (F::exp_bits - kBinLog2);  // 32
  static constexpr int kSpanBits = 2 * ((1 << kBinLog2) + F::man_bits);
  static_assert(kSpanBits < 53, "a bin's square below 2^53 of its quanta");
  static constexpr std::uint32_t run_terms = std::uint32_t(1) << (53 - kSpanBits);  // 2^23 for bf16
  static_assert(Acc::low == 2 * (F::emin - F::man_bits), "every square a multiple of the integer's unit");

  using value_t = double;
  using Partial = typename Acc::Partial;
  // A bin's sums, spilled: Acc's integer with its digits in memory.
  using Integer = typename Acc::WithLimbsOutside;
  struct State {
    double* bin;  // bin b at bin[b * stride]
    unsigned stride;
  };

  ULPSCOPE_HD static State start() { return {nullptr, 0u}; }
  ULPSCOPE_HD static Partial identity() { return Acc::identity(); }
  // A thread's bins at bin[b * stride] (the tree kernels: shared memory,
  // bin-major across the block's threads, so that a warp's 32 bins of one
  // index fall in distinct banks whatever bins its lanes pick), set to -0.
  ULPSCOPE_HD static void place_bins(State& st, double* bin, unsigned stride) {
    st.bin = bin;
    st.stride = stride;
    for (int b = 0; b < bins; ++b) bin[b * stride] = -0.0;
  }
  ULPSCOPE_HD static int bin_of(float x) { return int(detail::float_bits(x) >> (23 + kBinLog2)) & (bins - 1); }

  // *bin += t. On the GPU the bins are shared memory, addressed as such: the
  // compiler does not always see it through the state's pointer (with the
  // spills out of line it emitted generic loads and stores). Volatile, so
  // that the accesses stay in order (two squares of a group may share a bin).
  ULPSCOPE_HD static void add_to_bin(double* bin, double t) {
#if defined(__CUDA_ARCH__)
    const auto at = static_cast<unsigned>(__cvta_generic_to_shared(bin));
    double v;
    asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(at) : "memory");
    v = rn::add(v, t);
    asm volatile("st.shared.f64 [%0], %1;" ::"r"(at), "d"(v) : "memory");
#else
    *bin = rn::add(*bin, t);
#endif
  }

  // Vectors of W elements each of a block's `threads` threads adds between
  // flushes: with one more element (the tail), at most run_terms squares.
  ULPSCOPE_HD static constexpr std::int64_t segment_vectors(int threads, int W) {
    return (std::int64_t(run_terms) / threads - 1) / W;
  }

  // W squares x[j]^2, unchecked: the caller flushes before the bins hold
  // more than run_terms squares (segment_vectors).
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x) {
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) {
      const double d = x[j];
      add_to_bin(st.bin + bin_of(x[j]) * st.stride, rn::mul(d, d));  // exact: the note at the top
    }
  }
  ULPSCOPE_HD static void add(State& st, float x) { add_group<1>(st, &x); }

  // The sum of at[i * step] for i = first, first + 1, ..., count - 1, 0, ...,
  // first - 1, each set back to -0: exact while they hold at most run_terms
  // squares together (the note at the top), so the order is the caller's
  // choice (tree/block_bins.cuh: one free of bank conflicts).
  ULPSCOPE_HD static double take(double* at, int count, int step, int first) {
    double s = -0.0;
    int i = first;
    for (int k = 0; k < count; ++k) {
      double& v = at[i * step];
      s = rn::add(s, v);
      v = -0.0;
      if (++i == count) i = 0;
    }
    return s;
  }

  // A flush of a block's bins (bin b of thread t at bin[b * stride + t],
  // stride >= the block's threads, a multiple of 32), in two phases that the
  // GPU separates by barriers (tree/block_bins.cuh). Phase 1, lane l of warp
  // w: bin l of the warp's 32 threads into the slot of thread 32 w + l,
  // starting at that thread (at step k lane l reads thread 32 w + (l + k) mod
  // 32's bin: 32 distinct doubles of 256 bytes, no bank conflict). Phase 2,
  // lane l of warp 0: bin l's slots of every warp, at l (stride + 1) + 32 w
  // (lanes 16 doubles apart only), spilled into its integer.
  ULPSCOPE_HD static void gather_warp(double* bin, unsigned stride, int lane, int warp) {
    double* row = bin + std::size_t(lane) * stride + std::size_t(warp) * 32;
    row[lane] = take(row, 32, 1, lane);
  }
  ULPSCOPE_HD static void spill_warps(double* bin, unsigned stride, int warps, int lane,
                                      typename Integer::State& acc) {
    Integer::spill(acc, take(bin + std::size_t(lane) * stride + lane, warps, 32, 0));
  }
};

}  // namespace ulpscope
