#pragma once
// The CPU models of the kernel shapes (serial, tree, atomic): the same
// operations in the same order as the CUDA kernels, so that a GPU result can
// be checked bit for bit and the CPU backend measures accuracy without a GPU
// (docs/spec.md, "Kernel shapes"). Host only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/combinations.hpp"  // unsupported
#include "kernels/launch_policy.hpp"  // launch_configs
#include "kernels/reduction.hpp"

namespace ulpscope {

// The modelled kernel's outputs. Throws std::invalid_argument when the
// combination is unsupported or the problem is malformed.
ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config);
// atomic: block partials arrive in an order that varies; this models the
// order drawn from order_seed (other shapes ignore the seed).
ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                          std::uint64_t order_seed);
// The same outputs into `into`. A scan's model writes into its arrays, which
// keep their memory where it is large enough (a caller that runs every
// launch of one problem and keeps only the digests reuses one result); the
// others replace it.
void run_model_into(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                    std::uint64_t order_seed, ReductionResult& into);

// Whether the GPU kernel's bits must equal the model's (false for atomic,
// whose model gives one order of many).
bool model_is_bit_exact(const KernelSpec& spec);

// The longest chain of rounded additions one input value goes through in this
// order (per-thread chain, warp and block trees, second pass), for a-priori
// error bounds such as gamma_depth * sum|x_i| (Higham 2002, eq. 4.4 and 4.6).
std::int64_t addition_depth(const KernelSpec& spec, Axis axis, std::int64_t length, const LaunchConfig& config);

// The precision of what follows an accumulation (docs/spec.md, "Finishing"):
// the mean's division, the square root, eps and the norms' elementwise step
// run in fp64 for the fp64 and exact accumulators, in fp32 for the others.
constexpr Dtype finishing_format(Accumulator acc) {
  return acc == Accumulator::fp64 || acc == Accumulator::exact ? Dtype::fp64 : Dtype::fp32;
}

// Elements of format d in one 16-byte vector load.
int vector_width(Dtype d);

}  // namespace ulpscope
