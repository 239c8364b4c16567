#pragma once
// Where an exact first pass keeps each thread's long integer, per kind of sum
// and input format: 0, in registers (the state); else in a slice of shared
// memory, the kernel held to that many registers (exact_sum.hpp,
// LimbsOutside; kernels/tree/tree_agent.cuh launches it), or, where
// exact_in_bins (below), nowhere: bins in shared memory, held to that many
// registers, which the block flushes into integers of its own. One table for
// the kernels and for the default launch (kernels/model.cpp), whose blocks per SM
// follow from the registers. The same integer either way. Measured on the
// H100 (2^28, fraction of cub Sum fp32; in registers, from d4ac453's table /
// in shared memory at 80 registers and 3 blocks per SM / at 64 and 4, these
// two from one later session):
//   dot        fp32 0.953 / 0.988 / 0.966   bf16 0.890 / 0.945 / 0.650
//              e4m3 0.953 / 0.959 / 0.901   e5m2 0.675 / 0.719 / 0.688
//              (e5m2 with split products since: - / 0.929 / 0.931)
//              fp16 0.966 / 0.925 / 0.968
//   sumsq      bf16 0.710 / 0.814 / 0.474   fp32 0.895 / 0.885 / 0.867
//   sum        bf16 0.906 / 0.880 / 0.917   (the other sums within 0.01 at
//                                            64, lower at 80)
//   mean_var   fp16 0.777 / 0.777 / 0.818   e4m3 0.663 / 0.695 / 0.730
//              e5m2 0.402 / 0.423 / 0.432   fp32 0.662 / 0.467 / 0.532
//              bf16 0.311 / 0.232 / 0.287
// The sums and means of fp16 and e5m2 take 40 registers (ptxas: fp16 without
// a spill, e5m2 with 8 bytes), so 6 blocks per SM instead of 4 (in registers,
// 55 and 56). One session, two builds, three runs each, in registers at 4
// blocks per SM / at 6 (1.5 waves) / in shared memory at 40 registers and 4 /
// and 6:
//   sum   fp16 0.949 / 0.897 / 0.953 / 0.968   e5m2 0.854 / 0.776 / 0.843 / 0.869
//         e4m3 0.902 / 0.852 / 0.888 / 0.897 (8 bytes of spills at 40: not taken)
//   mean  fp16 0.943 / 0.891 / 0.947 / 0.959   e5m2 0.843 / 0.767 / 0.833 / 0.860
// e4m3's sum and mean take 48 registers without a spill, 5 blocks per SM
// instead of 4 in registers (56). Two sessions, a build each, three runs:
// sum 0.904 -> 0.916 and 0.906 -> 0.912, mean 0.891 -> 0.902 and 0.890 ->
// 0.900 (e5m2 at 48 and 5 blocks: 0.873 -> 0.871, not taken).
// The squares of fp16 (split runs) likewise, 40 registers without a spill
// instead of 60 in registers, 6 blocks per SM instead of 4 (one session, a
// build each, three runs): sumsq 0.926 -> 0.940, norm2 0.913 -> 0.931, rms
// 0.904 -> 0.921. Not taken, the same session: the squares of e4m3 at 48
// registers, 5 blocks (sumsq 0.870 -> 0.855, norm2 0.844 -> 0.832; again
// with add_float_products, 0.877 -> 0.843 and 0.858 -> 0.827); dot
// e5m2 at 64 registers and 4 blocks, 0.928 -> 0.932, as in the table above;
// again once its products were cut in float (add_float_products), 0.945 ->
// 0.927 (a later session, three runs each); at 72 registers (no spill) in
// blocks of 128 threads, 7 per SM (28 warps instead of 24), 0.945 either
// way (four runs each, `gpu_throughput --threads 128 --blocks 924`).
#include "formats/dtype.hpp"
#include "kernels/op.hpp"

namespace ulpscope {

// The exact sums an op's first pass adds.
enum class ExactSums { values, squares, products, moments };

constexpr ExactSums exact_sums_of(Op op) {
  switch (op) {
    case Op::sumsq:
    case Op::norm2:
    case Op::rms:
    case Op::rmsnorm: return ExactSums::squares;
    case Op::dot: return ExactSums::products;
    case Op::mean_var:
    case Op::layernorm: return ExactSums::moments;
    default: return ExactSums::values;
  }
}

constexpr int exact_limbs_registers(ExactSums s, Dtype in) {
  switch (s) {
    case ExactSums::products: return in == Dtype::fp16 ? 0 : 80;
    case ExactSums::squares: return in == Dtype::bf16 ? 80 : (in == Dtype::fp16 ? 40 : 0);
    case ExactSums::values:
      if (in == Dtype::bf16) return 64;
      if (in == Dtype::fp8_e4m3) return 48;
      return in == Dtype::fp16 || in == Dtype::fp8_e5m2 ? 40 : 0;
    case ExactSums::moments: return in == Dtype::fp16 || is_fp8(in) ? 64 : (in == Dtype::bf16 ? 80 : 0);
  }
  return 0;
}

// Whether an exact first pass adds its squares in bins of double in shared
// memory (kernels/accumulators/exact_binned_squares.hpp), flushed by the
// block into integers in shared memory (tree/block_bins.cuh), held to
// exact_limbs_registers: the squares of bf16, whose window costs 22
// instructions a square. The bins take 256 bytes a thread, so that 3 blocks
// of 256 fit an SM, as 80 registers allow. H100, one session, a build each
// (three runs, fraction of cub Sum fp32), the window with its digits in
// shared memory / the bins, each thread with its integer in registers:
// sumsq 0.808 / 0.860, norm2 0.790 / 0.849, rms 0.774 / 0.815; the block's
// flushes then measured in tree/block_bins.cuh.
// mean_var of bf16 likewise, its values in a run on a window that follows
// the data (exact_value_window.hpp), whose spills go to an integer the
// block's threads share: 0.326 -> 0.525 of cub Sum fp32 against both sums
// in registers (H100, three runs). ncu: the first pass 265 us (sumsq's 186),
// the second pass 86 us, most of it thread 0's finish (ExactVariance: then
// 7900 sm_90 instructions, the numerator's digit products and two divisions
// by n of 35 digits); compiled for 256 threads, without spills, it ran no
// faster. Its division of the numerator's top digits alone (5072
// instructions) took it to 44 us and the whole op to 0.590
// (exact_moments.hpp; docs/perf-h100.md).
constexpr bool exact_in_bins(ExactSums s, Dtype in) {
  return (s == ExactSums::squares || s == ExactSums::moments) && in == Dtype::bf16;
}

// Slots of shared memory per thread and input in which an exact first pass's
// loads wait (tree/async_chain.cuh; 0: loads into registers). Measured on the
// H100 (2^28, fraction of cub Sum fp32; direct loads / 4 slots, three and two
// runs of one session, a build each):
//   sumsq      fp32 0.896 / 0.929   e4m3 0.846 / 0.869   e5m2 0.632 / 0.648
//   norm2      fp32 0.876 / 0.913   e4m3 0.826 / 0.848   e5m2 0.622 / 0.638
//   rms        fp32 0.869 / 0.886   e4m3 0.811 / 0.833   e5m2 0.612 / 0.628
//   mean_var   fp32 0.662 / 0.701   fp16 0.823 / 0.851   bf16 0.311 / 0.323
//              e4m3 0.733 / 0.747   e5m2 0.433 / 0.444
// Not taken, one earlier session (one run each): the sums of values, within
// 0.01 either way; squares of bf16 0.808 -> 0.789 and fp16 0.928 -> 0.923;
// dots, two inputs each with its slots, lost up to 0.24 (fp16 0.966 ->
// 0.723); 8 slots lost to 4 nearly everywhere (mean_var fp16 0.713). Again
// in a later session: dot e5m2 0.948 -> 0.944, squares of fp16 at 40
// registers (16 bytes of spills) 0.942 -> 0.779. A first pass in bins
// (exact_in_bins) loads into registers: its shared memory holds the bins.
constexpr int exact_async_stages(ExactSums s, Dtype in) {
  if (exact_in_bins(s, in)) return 0;
  switch (s) {
    case ExactSums::squares: return in == Dtype::fp32 || is_fp8(in) ? 4 : 0;
    case ExactSums::moments: return 4;
    default: return 0;
  }
}

// Blocks of 256 threads an SM holds at that many registers (65536 of them).
constexpr int blocks_at_registers(int registers) { return 65536 / (registers * 256); }

}  // namespace ulpscope
