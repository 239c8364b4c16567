#pragma once
// The tuning of the tree and atomic shapes: every knob their kernels and
// default launch take, per reducer and input format, in one place, as CUB
// keeps one policy per algorithm (cub/device/dispatch/tuning/tuning_reduce.cuh).
// Each knob says why in a line; the measurements behind it are in
// docs/perf-h100.md, "Tuning of the tree kernels", under the knob's name.
// No knob changes a result: the order is tree_order.hpp's, a grouping that
// shows in the bits (logsumexp's) is the models' too (kernels/model/tree_model.hpp),
// and the launch's blocks and threads are the models' input. Host and device.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "formats/dtype.hpp"
#include "formats/host_device.hpp"
#include "formats/small_float.hpp"
#include "kernels/op.hpp"
#include "kernels/reducers.hpp"
#include "kernels/reduction.hpp"
#include "kernels/tree/tree_order.hpp"

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

// Where an exact first pass keeps each thread's long integer: 0, in registers
// (the state); else in a slice of shared memory (exact_sum.hpp, LimbsOutside),
// the kernel held to that many registers so that more blocks fit an SM; or,
// where exact_in_bins, nowhere: bins in shared memory at that many registers.
// The integer is the same either way. One table for the kernels and the
// default launch, whose blocks per SM follow from it (docs/perf-h100.md,
// "Tuning of the tree kernels: exact_limbs_registers").
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
// memory (accumulators/exact_binned_squares.hpp), flushed by the block into
// integers in shared memory (block_bins.cuh): the squares of bf16, whose
// window costs 22 instructions a square, and mean_var of bf16, its values in
// a window that follows the data (exact_value_window.hpp). 256 bytes of bins
// a thread: 3 blocks of 256 per SM, as 80 registers allow (docs/perf-h100.md,
// "Tuning of the tree kernels: exact_in_bins").
constexpr bool exact_in_bins(ExactSums s, Dtype in) {
  return (s == ExactSums::squares || s == ExactSums::moments) && in == Dtype::bf16;
}

// Slots of shared memory per thread and input in which an exact first pass's
// loads wait (async_chain.cuh; 0: loads into registers): where few blocks are
// resident, more loads in flight; not for dots (two inputs, each with its
// slots), nor for passes in bins, whose shared memory holds the bins
// (docs/perf-h100.md, "Tuning of the tree kernels: exact_async_stages").
constexpr int exact_async_stages(ExactSums s, Dtype in) {
  if (exact_in_bins(s, in)) return 0;
  switch (s) {
    case ExactSums::squares: return in == Dtype::fp32 || is_fp8(in) ? 4 : 0;
    case ExactSums::moments: return 4;
    default: return 0;
  }
}

// Blocks of 256 threads an SM of registers_per_sm registers holds at that
// many registers a thread.
constexpr int blocks_at_registers(int registers, int registers_per_sm) {
  return registers_per_sm / (registers * 256);
}

// Blocks of 256 threads per SM in the default launch: one wave where the
// kernel's registers hold only a few blocks per SM, else 6, and the kernels
// measured to run faster otherwise (docs/perf-h100.md, "Launch
// configurations" and "Tuning of the tree kernels: default_blocks_per_sm").
// An exact result is the same for any launch, so for exact this is speed only.
constexpr int default_blocks_per_sm(const KernelSpec& spec, int registers_per_sm) {
  const bool fp8 = spec.in == Dtype::fp8_e4m3 || spec.in == Dtype::fp8_e5m2;
  if (spec.op == Op::logsumexp && spec.acc == Accumulator::fp32 && spec.in == Dtype::fp32) return 4;
  if (spec.op == Op::logsumexp && spec.acc == Accumulator::fp32 && spec.in == Dtype::bf16) return 16;
  if (spec.op == Op::logsumexp || (spec.acc == Accumulator::naive && fp8) ||
      (spec.acc == Accumulator::kahan && spec.op == Op::mean_var && spec.in == Dtype::bf16))
    return 8;
  // Exact first passes held to a register count: the blocks that fit, up to 6.
  if (spec.acc == Accumulator::exact && !is_elementwise_output(spec.op)) {
    const int registers = exact_limbs_registers(exact_sums_of(spec.op), spec.in);
    if (registers > 0) return std::min(6, blocks_at_registers(registers, registers_per_sm));
  }
  // Exact in registers and pairwise (55-128 registers): at most 4 resident.
  if (spec.acc == Accumulator::exact || spec.acc == Accumulator::pairwise) return 4;
  // welford's groups of reciprocals: 43 registers for bf16 (5 blocks fit), 52-54
  // for fp16 and fp8 (4 fit); a grid of 6 ran in two waves.
  if (spec.acc == Accumulator::welford && spec.in == Dtype::bf16) return 5;
  if (spec.acc == Accumulator::welford && spec.in != Dtype::fp32) return 4;
  return 6;
}

// Vectors of W elements that a tree thread loads before adding them: U
// consecutive vectors of its chain, v, v + G, ... (tree_order.hpp, step 1),
// added as one group of U*W terms where the reducer takes such a group, else
// one vector after the other (pairwise and exact: the same result either way;
// logsumexp: not, and the model groups as the kernel does). Pairwise takes up
// to 8 vectors and 64 terms (32 for dot's two inputs), so that its carry chain
// runs once per group; logsumexp up to 16 terms; the others two vectors at a
// time; a reducer may name its count (R::vector_loads: welford)
// (docs/perf-h100.md, "Tuning of the tree kernels: group_loads").
template <class R, int W>
ULPSCOPE_HD constexpr int group_loads() {
  constexpr int terms = takes_y<R>::value ? 32 : 64;
  if constexpr (requires { R::vector_loads; }) return R::vector_loads;
  else if constexpr (8 * W <= terms && reducer_adds_groups<R, 8 * W>) return 8;
  else if constexpr (4 * W <= terms && reducer_adds_groups<R, 4 * W>) return 4;
  else return 2;
}

}  // namespace ulpscope

namespace ulpscope::tree {

// Threads per block the kernels are compiled for: 512 leaves up to 128
// registers per thread (pairwise levels, exact limbs) without spilling.
inline constexpr int kMaxThreads = 512;

// Blocks of kMaxThreads per SM the first pass is compiled for
// (__launch_bounds__'s minimum): narrow states are held to 32 registers (4
// blocks of 512), so that the default grid's 6-8 blocks of 256 per SM run in
// one wave; wide ones (pairwise levels, exact limbs, the naive accumulator's
// rounding to a narrow format, welford) are left to the compiler (0), as a
// minimum made them spill (docs/perf-h100.md, "Tuning of the tree kernels:
// kMinBlocks").
template <class Acc>
inline constexpr bool rounds_to_narrow = false;
template <class F>
inline constexpr bool rounds_to_narrow<FloatSum<RoundToFormat<F>>> = true;
template <class R>
inline constexpr bool wide_state = sizeof(typename R::State) > 16;
template <class Acc, TermKind K>
inline constexpr bool wide_state<SumReducer<Acc, K>> = sizeof(typename Acc::State) > 16 || rounds_to_narrow<Acc>;
template <class Acc>
inline constexpr bool wide_state<MomentsReducer<Acc>> = sizeof(typename Acc::State) > 8 || rounds_to_narrow<Acc>;
template <>
inline constexpr bool wide_state<WelfordReducer> = true;  // at 32 registers it spills on fp8
template <class R>
inline constexpr int kMinBlocks = wide_state<R> ? 0 : 4;

// bf16 widened from the vector's words (load.cuh) in every reducer but the
// exact sums, whose first pass it took past 64 registers (docs/perf-h100.md,
// "Tuning of the tree kernels: widens_bf16_by_words").
template <class R>
inline constexpr bool widens_bf16_by_words = true;
template <class Acc, TermKind K>
inline constexpr bool widens_bf16_by_words<SumReducer<Acc, K>> = !is_exact_sum<Acc>::value;

// Exact sums of fp8_e5m2 values, and the exact mean_var of both fp8 formats,
// take each value as a double converted from its half (R::add_values_by,
// load.cuh's value_as_double): one conversion a value instead of two (mean_var:
// one instead of three, its squares from the value by fma), each added as it
// is converted (docs/perf-h100.md, "Tuning of the tree kernels:
// adds_values_as_doubles").
template <class R, class Elem>
inline constexpr bool adds_values_as_doubles = false;
template <class R, class Elem>
  requires(std::is_same_v<Elem, Fp8E5M2> || std::is_same_v<Elem, Fp8E4M3>) &&
          requires { R::template takes_values_by<vector_width(int(sizeof(Elem)))>; }
inline constexpr bool adds_values_as_doubles<R, Elem> = R::template takes_values_by<vector_width(int(sizeof(Elem)))>;

// Groups of loads a thread asks L2 to prefetch ahead of its loads (0: none):
// for first passes so wide (128 registers, 2 blocks of 256 per SM) or so held
// by shared memory (the bins, 3 blocks) that too few loads are in flight to
// cover DRAM's latency; a prefetch costs no register. Not for dots (twice the
// loads in flight already) nor mean_var with its digits in shared memory (4
// blocks resident) (docs/perf-h100.md, "Tuning of the tree kernels:
// kPrefetchGroups").
template <class R>
inline constexpr int kPrefetchGroups = 0;
template <class Acc>
inline constexpr int kPrefetchGroups<SumReducer<Acc, TermKind::square>> = [] {
  if constexpr (requires { Acc::window; }) return Acc::window ? 2 : 0;
  else return 0;
}();
template <class F, bool LimbsOutside>
inline constexpr int kPrefetchGroups<ExactMomentsReducer<F, LimbsOutside>> = LimbsOutside ? 0 : 2;
template <class F, class Acc>
inline constexpr int kPrefetchGroups<BinnedSquaresReducer<F, Acc>> = 2;
template <class F, class A1, class A2>
inline constexpr int kPrefetchGroups<BinnedMomentsReducer<F, A1, A2>> = 2;

// The exact sums a reducer's first pass adds, for the reducers of exact sums
// with their digits in either home; `exact` is false for the others. The
// exact tables above are looked up through it.
template <class R>
struct exact_first_pass {
  static constexpr bool exact = false;
  static constexpr ExactSums sums = ExactSums::values;  // unused
};
template <class Acc, TermKind K>
  requires is_exact_sum<Acc>::value
struct exact_first_pass<SumReducer<Acc, K>> {
  static constexpr bool exact = true;
  static constexpr ExactSums sums =
      K == TermKind::value ? ExactSums::values : (K == TermKind::square ? ExactSums::squares : ExactSums::products);
};
template <class F, bool LimbsOutside>
struct exact_first_pass<ExactMomentsReducer<F, LimbsOutside>> {
  static constexpr bool exact = true;
  static constexpr ExactSums sums = ExactSums::moments;
};

// Registers of the first pass that keeps its digits in shared memory, 0 for
// one that keeps them in registers (exact_limbs_registers).
template <class R, class Elem>
inline constexpr int kLimbsRegisters =
    exact_first_pass<R>::exact ? exact_limbs_registers(exact_first_pass<R>::sums, dtype_of_v<Elem>) : 0;
static_assert(80 * kMaxThreads <= 65536, "__maxnreg__ replaces __launch_bounds__(kMaxThreads)");

// Slots per thread in which the first pass's loads wait (async_chain.cuh; 0:
// loads into registers): the exact sums' table; the other reducers load into
// registers, as slots lost more than they gained (docs/perf-h100.md, "Tuning
// of the tree kernels: exact_async_stages").
template <class R, class Elem>
inline constexpr int kAsyncStages =
    exact_first_pass<R>::exact ? exact_async_stages(exact_first_pass<R>::sums, dtype_of_v<Elem>) : 0;

// Reducers whose finish is long (exact: rounding the long integer) and is
// worth running early once, on a stand-in, so that thread 0's finish finds
// its code in the instruction caches (second_pass; docs/perf-h100.md,
// "Tuning of the tree kernels: warms_finish").
template <class R>
inline constexpr bool warms_finish = false;
template <class Acc, TermKind K>
inline constexpr bool warms_finish<SumReducer<Acc, K>> = is_exact_sum<Acc>::value;
template <class F>
inline constexpr bool warms_finish<ExactMomentsReducer<F>> = true;

// Partials each thread of the second pass loads before merging them, so that
// the loads wait on L2 together: 8 where partials are small (16 bytes at
// most), 4 up to 64 bytes (exact fp16 and fp8 digits), wider ones (exact fp32
// and bf16 digits, pairwise levels) one at a time, as two at a time made the
// bf16 unit's compile much longer (docs/perf-h100.md, "Tuning of the tree
// kernels: kSecondPassLoads").
template <class Partial>
inline constexpr int kSecondPassLoads = sizeof(Partial) <= 16 ? 8 : (sizeof(Partial) <= 64 ? 4 : 1);

}  // namespace ulpscope::tree
