#include "kernels/model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "formats/dtype.hpp"
#include "kernels/combinations.hpp"
#include "kernels/gallery/gallery_model.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/model/model_runner.hpp"
#include "kernels/scan/scan_model.hpp"

namespace ulpscope {

int vector_width(Dtype d) { return kVectorBytes / (format_info(d).bits / 8); }

namespace {

// Throws std::invalid_argument where the model cannot run the problem.
void check_model_problem(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config) {
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
}

ReductionResult checked_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                              std::uint64_t order_seed) {
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

}  // namespace

ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                          std::uint64_t order_seed) {
  check_model_problem(spec, problem, config);
  return checked_model(spec, problem, config, order_seed);
}

void run_model_into(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                    std::uint64_t order_seed, ReductionResult& into) {
  check_model_problem(spec, problem, config);
  if (is_scan(spec.op) && !is_gallery(spec.shape)) scan::run_model_into(spec, problem, config, into);
  else into = checked_model(spec, problem, config, order_seed);
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
