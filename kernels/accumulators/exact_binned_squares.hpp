#pragma once
// The exact sum of squares of bf16 in bins of double, one bin per 8 binades
// of the input, indexed by the value's exponent field: the tree kernels'
// first pass of exact sumsq, norm2, rms of bf16 (tree_agent.cuh,
// first_pass_t), its bins in shared memory. The same integer as
// ExactSumOf's (Acc) add of each square, so the second pass and the models
// are Acc's.
//
// A value x = m 2^(E - bias - man_bits), m < 2^(man_bits + 1), with E in bin
// b's fields [8b, 8b + 7] has a square that is a multiple of the bin's
// quantum 2^(2 (max(8b, 1) - bias - man_bits)) below 2^(2 (8 + man_bits)) =
// 2^30 of them, so a bin's double adds 2^23 squares exactly (each partial
// sum a multiple of the quantum below 2^53 of them), in any order; every
// 2^23 terms the bins are spilled into Acc's integer. A square is one
// conversion, one multiplication and one addition, in a bin at a computed
// address, against the window's split and checks (ExactSumOf, "Window";
// ncu on the H100: 22 instructions an element). Infinities and NaN (field
// 255) land in the top bin and make it infinite or NaN, which its spill
// turns into the integer's flags; a bin starts at -0, which every square
// (+0 or more) changes, so that an untouched bin spills nothing.
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
  struct State {
    typename Acc::State acc;  // the integer the bins spill into
    double* bin;              // bin b at bin[b * stride]
    unsigned stride;
    std::uint32_t terms;  // squares added since the bins were last spilled
  };

  ULPSCOPE_HD static State start() { return {Acc::start(), nullptr, 0u, 0u}; }
  ULPSCOPE_HD static Partial identity() { return Acc::identity(); }
  // The bins at bin[b * stride] (the tree kernels: shared memory, bin-major
  // across the block's threads, so that a warp's 32 bins of one index fall
  // in distinct banks whatever bins its lanes pick), set to -0 here.
  ULPSCOPE_HD static void place_bins(State& st, double* bin, unsigned stride) {
    st.bin = bin;
    st.stride = stride;
    for (int b = 0; b < bins; ++b) bin[b * stride] = -0.0;
  }
  ULPSCOPE_HD static int bin_of(float x) { return int(detail::float_bits(x) >> (23 + kBinLog2)) & (bins - 1); }

  // Every bin into the integer acc, and back to -0. Inline: out of line,
  // with the integer in the thread's stack instead of 42 registers
  // (ptxas, sm_90: 132 bytes of spills at 80 registers inline, 164 out of
  // line), the first pass ran slower on the H100 (one session, a build each,
  // three runs, fraction of cub Sum fp32): sumsq bf16 0.860 -> 0.770, norm2
  // 0.849 -> 0.759, rms 0.815 -> 0.742.
  ULPSCOPE_HD static void spill_into(typename Acc::State& acc, double* bin, unsigned stride) {
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
    for (int b = 0; b < bins; ++b) {
      double& v = bin[b * stride];
      if (detail::double_bits(v) != 0x8000000000000000ull) {
        Acc::spill(acc, v);
        v = -0.0;
      }
    }
  }
  ULPSCOPE_HD static void spill_bins(State& st) {
    spill_into(st.acc, st.bin, st.stride);
    st.terms = 0;
  }

  // *bin += t. On the GPU the bins are shared memory, addressed as such: the
  // compiler does not always see it through the state's pointer (with
  // spill_into out of line it emitted generic loads and stores; not measured
  // on its own). Volatile, so that the accesses stay in order (two squares
  // of a group may share a bin).
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

  // W squares x[j]^2, the bins spilled first if they might outgrow their runs.
  template <int W>
  ULPSCOPE_HD static void add_group(State& st, const float* x) {
    static_assert(W >= 1 && std::uint32_t(W) <= run_terms);
    if (st.terms > run_terms - W) spill_bins(st);
    ULPSCOPE_UNROLL
    for (int j = 0; j < W; ++j) {
      const double d = x[j];
      add_to_bin(st.bin + bin_of(x[j]) * st.stride, rn::mul(d, d));  // exact: the note at the top
    }
    st.terms += W;
  }
  ULPSCOPE_HD static void add(State& st, float x) { add_group<1>(st, &x); }

  // The thread's integer: the bins spilled into it, carried (Acc::partial).
  // It ends the chain: the bins are left at -0, st's integer without them.
  ULPSCOPE_HD static Partial partial(const State& st) {
    State s = st;
    spill_bins(s);
    return Acc::partial(s.acc);
  }
};

}  // namespace ulpscope
