#include "kernels/combinations.hpp"

#include "formats/dtype.hpp"
#include "kernels/gallery/gallery_model.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/reducers/row_norm.hpp"

namespace ulpscope {
namespace {

bool is_input(Dtype d) { return d != Dtype::fp64; }

bool sums(Op op) {
  return op == Op::sum || op == Op::mean || op == Op::dot || op == Op::sumsq || op == Op::norm2 ||
         op == Op::rms;
}

std::string name(Op op) { return std::string(to_string(op)); }

}  // namespace

std::optional<std::string> unsupported(const KernelSpec& spec, Axis axis) {
  if (!is_input(spec.in)) return "fp64 is an output format only";
  if (is_gallery(spec.shape)) return gallery::unsupported(spec, axis);
  if (spec.shape == Shape::cub || spec.shape == Shape::cub_deterministic)
    return std::string(to_string(spec.shape)) + " is NVIDIA's code: no CPU model (GPU backend only)";
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

std::optional<std::string> unavailable_on(const KernelSpec& spec, Axis axis, bool gpu) {
  if (!gpu) return unsupported(spec, axis);
  if (has_cpu_model(spec.shape))
    if (auto why = unsupported(spec, axis)) return why;
  return GpuBackend::unavailable(spec, axis);
}

}  // namespace ulpscope
