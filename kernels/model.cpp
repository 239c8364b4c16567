#include "kernels/model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "formats/dtype.hpp"
#include "kernels/exact_limbs.hpp"
#include "kernels/gallery/gallery_model.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/model/model_runner.hpp"
#include "kernels/scan/scan_model.hpp"

namespace ulpscope {
namespace {

bool is_input(Dtype d) { return d != Dtype::fp64; }

bool sums(Op op) {
  return op == Op::sum || op == Op::mean || op == Op::dot || op == Op::sumsq || op == Op::norm2 ||
         op == Op::rms;
}

std::string name(Op op) { return std::string(to_string(op)); }

// Blocks that cover `vectors` vector loads with `threads` threads each doing
// `per_thread` of them, at most `cap` (a few waves of an H100's 132 SMs).
int blocks_for(std::int64_t vectors, int threads, int per_thread, int cap) {
  const std::int64_t b = (vectors + std::int64_t(threads) * per_thread - 1) / (std::int64_t(threads) * per_thread);
  return int(std::clamp<std::int64_t>(b, 1, cap));
}

// Blocks of 256 threads per SM in the default launch: one wave where the
// kernel's registers hold only a few blocks per SM (tree_agent.cuh), else 6;
// then the kernels measured to run faster otherwise. Measured on the H100 with
// `gpu_throughput --shapes tree --blocks B` at 2^28 elements, one process,
// fraction of cub Sum fp32 at 4 / 6 / 16 blocks per SM (2026-11-23, at
// d7818de):
// - exact and pairwise (55-128 registers, at most 4 resident): 4 (exact sum fp16
//   0.950 / 0.899 / 0.931, pairwise sum e4m3 0.928 / 0.883 / 0.894, exact
//   sumsq fp32 0.491 / 0.402 / 0.460);
// - the rest (32 registers): 6 (fp64 sum e4m3 0.899 / 0.928 / 0.891, fp32 sum
//   fp32 0.995 / 1.000 / 0.991, welford fp32 0.944 / 0.976 / 0.947);
// - exceptions, with 8 per SM measured in other runs of the same kernels:
//   logsumexp (fp16 0.849 / 0.895 / 0.909, 8: 0.914), naive into fp8 (e4m3
//   0.810 / 0.873 / 0.896, 8: 0.899) and kahan mean_var bf16 (0.808 / 0.891 /
//   0.926; 8: 0.926) take 8 (pairwise mean_var fp32 took 6 while it needed
//   77-86 registers: 0.921 / 0.987 / 0.970; see below);
// - the exact first passes held to a register count (their digits, or the
//   squares' bins of bf16, in shared memory: kernels/exact_limbs.hpp) take
//   the blocks that fit, up to 6: one
//   wave (80 registers: 3; 64: 4; 48, the sums of e4m3: 5; 40, the sums of
//   fp16 and e5m2 and the squares of fp16: 6). exact's result is the same for
//   any launch, so these counts change its speed only.
int default_blocks_per_sm(const KernelSpec& spec) {
  const bool fp8 = spec.in == Dtype::fp8_e4m3 || spec.in == Dtype::fp8_e5m2;
  // logsumexp with the fp32 accumulator, swept again on the H100 at ea6c7fd
  // (blocks per SM x 256 threads: 4 / 6 / 8 / 16): fp32 input 0.984 / 0.959 /
  // 0.951 / 0.934 (2 x 512: 0.985), bf16 0.832 / 0.872 / 0.894 / 0.902.
  if (spec.op == Op::logsumexp && spec.acc == Accumulator::fp32 && spec.in == Dtype::fp32) return 4;
  if (spec.op == Op::logsumexp && spec.acc == Accumulator::fp32 && spec.in == Dtype::bf16) return 16;
  if (spec.op == Op::logsumexp || (spec.acc == Accumulator::naive && fp8) ||
      (spec.acc == Accumulator::kahan && spec.op == Op::mean_var && spec.in == Dtype::bf16))
    return 8;
  if (spec.acc == Accumulator::exact && !is_elementwise_output(spec.op)) {
    const int registers = exact_limbs_registers(exact_sums_of(spec.op), spec.in);
    if (registers > 0) return std::min(6, blocks_at_registers(registers));
  }
  // pairwise: 58-64 registers (ptxas, sm_90), mean_var's two sums included
  // since they carry together (pairwise_sum.hpp). mean_var fp32 at 6 blocks
  // per SM runs in 1.5 waves: 0.907 of cub Sum fp32 in one session and 0.987
  // in another (H100), against 0.974 at 4.
  if (spec.acc == Accumulator::exact || spec.acc == Accumulator::pairwise) return 4;
  // welford's groups of reciprocals (welford.hpp) take 52 and 54 registers
  // for fp16 and fp8, 43 for bf16 (ptxas, sm_90): 4 and 5 blocks of 256 fit
  // an SM, and a grid of 6 per SM ran in two waves. H100, mean_var, fraction
  // of cub Sum fp32 at 4 / 5 / 6 blocks per SM: fp16 0.911 / 0.670 / 0.763,
  // bf16 0.879 / 0.923 / 0.690, e4m3 0.540 / 0.440 / 0.500.
  if (spec.acc == Accumulator::welford && spec.in == Dtype::bf16) return 5;
  if (spec.acc == Accumulator::welford && spec.in != Dtype::fp32) return 4;
  return 6;
}

}  // namespace

int vector_width(Dtype d) { return kVectorBytes / (format_info(d).bits / 8); }

std::optional<std::string> unsupported(const KernelSpec& spec, Axis axis) {
  if (!is_input(spec.in)) return "fp64 is an output format only";
  if (is_gallery(spec.shape)) return gallery::unsupported(spec, axis);
  if (spec.shape == Shape::cub || spec.shape == Shape::cub_deterministic)
    return std::string(to_string(spec.shape)) + " is NVIDIA's code: no CPU model (GPU backend only)";
  if (is_scan(spec.op) || is_scan_shape(spec.shape)) return scan::unsupported(spec, axis);
  if (spec.op == Op::logsumexp && spec.acc != Accumulator::fp32 && spec.acc != Accumulator::fp64)
    return "logsumexp keeps a running maximum and a rescaled sum: fp32 and fp64 accumulators only";
  if (is_elementwise_output(spec.op)) {
    if (axis != Axis::inner) return name(spec.op) + " normalises rows: inner axis only";
    if (spec.shape == Shape::atomic) return name(spec.op) + " has no atomic shape";
    const KernelSpec stats{statistics_op(spec.op), spec.in, spec.out, spec.acc, spec.shape, spec.sat};
    if (auto why = unsupported(stats, axis)) return name(spec.op) + ": " + *why;
    return std::nullopt;
  }
  if (is_selection(spec.op) && spec.acc != Accumulator::fp32)
    return name(spec.op) + " selects, it rounds nothing: one accumulator (fp32) stands for all";
  if (spec.acc == Accumulator::welford && spec.op != Op::mean_var) return "welford applies to mean_var only";
  if (spec.acc == Accumulator::two_pass && spec.op != Op::mean_var) return "two_pass applies to mean_var only";
  if (spec.shape == Shape::atomic) {
    if (axis != Axis::all) return "atomic is a whole-array shape";
    if (!sums(spec.op)) return "atomic adds block partials: sum-like ops only";
    if (spec.acc != Accumulator::fp32 && spec.acc != Accumulator::fp64)
      return "atomic adds block partials with atomicAdd: fp32 and fp64 accumulators only";
  }
  return std::nullopt;
}

std::vector<LaunchConfig> launch_configs(const KernelSpec& spec, std::int64_t length) {
  if (is_scan(spec.op)) return scan::launch_configs(spec, length);
  if (spec.shape == Shape::serial) return {LaunchConfig{1, 1}};
  if (is_gallery(spec.shape)) return gallery::launch_configs(spec, length);
  const std::int64_t vectors = std::max<std::int64_t>(length / vector_width(spec.in), 1);
  // The default: 256 threads, one vector per thread up to 4-8 blocks per SM
  // on 132 SMs (default_blocks_per_sm), beyond that each thread loops. Then
  // other block sizes and counts, so that every level of the order changes.
  // The CUDA kernels take at most 512 threads per block (tree_agent.cuh).
  return {LaunchConfig{blocks_for(vectors, 256, 1, 132 * default_blocks_per_sm(spec)), 256},
          LaunchConfig{blocks_for(vectors, 128, 4, 397), 128},
          LaunchConfig{blocks_for(vectors, 512, 2, 132), 512},
          LaunchConfig{blocks_for(vectors, 64, 8, 2000), 64}};
}

ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                          std::uint64_t order_seed) {
  if (auto why = unsupported(spec, problem.axis)) throw std::invalid_argument(*why);
  if (spec.op != problem.op) throw std::invalid_argument("the spec's op differs from the problem's");
  if (!problem.x || problem.x->dtype() != spec.in)
    throw std::invalid_argument("the input is missing or not in the spec's format");
  if (problem.rows < 0 || problem.cols < 0 || std::int64_t(problem.x->size()) != problem.rows * problem.cols)
    throw std::invalid_argument("the input has not rows*cols elements");
  for (const TypedArray* a : {problem.gamma, problem.beta})
    if (is_elementwise_output(spec.op) && a && (a->dtype() != spec.in || std::int64_t(a->size()) != problem.cols))
      throw std::invalid_argument("gamma and beta need cols values of the input's format");
  if (takes_second_input(spec.op) && (!problem.y || problem.y->dtype() != spec.in ||
                                      problem.y->size() != problem.x->size()))
    throw std::invalid_argument("dot needs a second input of the same format and size");
  if (spec.shape != Shape::serial &&
      (config.threads < 32 || config.threads > 1024 || config.threads % 32 != 0 || config.blocks < 1))
    throw std::invalid_argument("a launch needs 32..1024 threads (a multiple of 32) and at least one block");
  if (is_gallery(spec.shape)) return gallery::run_model(spec, problem, config, order_seed);
  if (is_scan(spec.op)) return scan::run_model(spec, problem, config);
  switch (spec.in) {
    case Dtype::fp32: return model::run_model_fp32(spec, problem, config, order_seed);
    case Dtype::fp16: return model::run_model_fp16(spec, problem, config, order_seed);
    case Dtype::bf16: return model::run_model_bf16(spec, problem, config, order_seed);
    case Dtype::fp8_e4m3: return model::run_model_fp8_e4m3(spec, problem, config, order_seed);
    case Dtype::fp8_e5m2: return model::run_model_fp8_e5m2(spec, problem, config, order_seed);
    default: throw std::invalid_argument("not an input format");
  }
}

ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config) {
  return run_model(spec, problem, config, 0);
}

bool model_is_bit_exact(const KernelSpec& spec) {
  return has_cpu_model(spec.shape) && is_deterministic_order(spec.shape);
}

std::int64_t addition_depth(const KernelSpec& spec, Axis axis, std::int64_t length, const LaunchConfig& cfg) {
  if (is_gallery(spec.shape)) return gallery::addition_depth(spec, length, cfg);
  const bool tree_chain = spec.acc == Accumulator::pairwise;
  auto chain = [&](std::int64_t k) { return tree_chain ? ceil_log2(k) : std::max<std::int64_t>(k - 1, 0); };
  if (spec.shape == Shape::serial || (axis == Axis::outer && spec.shape == Shape::tree)) return chain(length);
  const int T = cfg.threads;
  if (axis == Axis::inner) {
    const int v = length % vector_width(spec.in) == 0 ? vector_width(spec.in) : 1;
    const TreeOrder o{length, v, T};
    return chain(o.elements_of(0)) + ceil_log2(std::min<std::int64_t>(T, std::max<std::int64_t>(length, 1)));
  }
  const TreeOrder o{length, vector_width(spec.in), std::int64_t(cfg.blocks) * T};
  const std::int64_t active = std::max<std::int64_t>(std::min<std::int64_t>(o.threads, o.vectors() + o.tail()), 1);
  std::int64_t depth = chain(o.elements_of(0)) + ceil_log2(std::min<std::int64_t>(T, active));
  const std::int64_t blocks = std::min<std::int64_t>(cfg.blocks, (active + T - 1) / T);
  if (spec.shape == Shape::atomic) return depth + blocks - 1;
  // Second pass: a chain of ceil(B/T) partials per thread, then the trees.
  return depth + (blocks + T - 1) / T - 1 + ceil_log2(std::min<std::int64_t>(T, blocks));
}

}  // namespace ulpscope
