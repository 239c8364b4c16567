#pragma once
// What a kernel is asked to compute, how it is launched, and what it returns:
// the vocabulary shared by the CUDA kernels, their CPU models and accuracy/.
#include <cstdint>
#include <string>
#include <vector>

#include "formats/dtype.hpp"
#include "formats/named_enum.hpp"
#include "formats/typed_array.hpp"
#include "kernels/accumulator.hpp"
#include "kernels/op.hpp"
#include "kernels/shape.hpp"

namespace ulpscope {

// Which dimension is reduced. Whole-array ops see [1, n].
enum class Axis : std::uint8_t {
  all,    // the whole array
  inner,  // each row of [rows, cols] over its cols (contiguous)
  outer,  // each column of [rows, cols] over its rows (strided)
};
inline constexpr NameTable<Axis, 3> kAxisNames = {
    {{Axis::all, "all"}, {Axis::inner, "inner"}, {Axis::outer, "outer"}}};
constexpr std::string_view to_string(Axis a) { return name_in(kAxisNames, a); }

struct KernelSpec {
  Op op = Op::sum;
  Dtype in = Dtype::fp32;
  Dtype out = Dtype::fp32;
  Accumulator acc = Accumulator::fp32;
  Shape shape = Shape::tree;
  Saturation sat = Saturation::satfinite;  // for fp8 outputs
};

// The grid of a GPU launch; the CPU models take the same numbers so that they
// add in the same order.
struct LaunchConfig {
  int blocks = 0;   // 0: the dispatch chooses (a few waves of the device's SMs)
  int threads = 256;
  bool operator==(const LaunchConfig&) const = default;
};

struct ReductionProblem {
  Op op = Op::sum;
  Axis axis = Axis::all;
  std::int64_t rows = 1;  // [rows, cols], row-major
  std::int64_t cols = 0;
  const TypedArray* x = nullptr;
  const TypedArray* y = nullptr;      // dot: the second vector (same shape as x)
  const TypedArray* gamma = nullptr;  // rmsnorm, layernorm: scale, cols values
  const TypedArray* beta = nullptr;   // layernorm: shift, cols values
  double eps = 1e-6;                  // rms, rmsnorm, layernorm
  // x and y widened to float once for many CPU-model runs (exact for every
  // input format), or nullptr: the models then widen on each run. Whoever
  // points x or y at other values resets these.
  const std::vector<float>* x_float = nullptr;
  const std::vector<float>* y_float = nullptr;
  std::int64_t reductions() const { return axis == Axis::outer ? cols : rows; }
  std::int64_t length() const { return axis == Axis::outer ? rows : cols; }
};

struct ReductionResult {
  // The kernel's outputs in the output format, widened to double. Layout:
  // [reduction][component] (mean_var: mean, variance) or, for rmsnorm and
  // layernorm, [row][col].
  std::vector<double> values;
  // The accumulator's own value before the final rounding, in the same
  // layout, where the accumulator has one (docs/spec.md, "Metrics": rel_error).
  std::vector<double> unrounded;
  // rmsnorm and layernorm: per row, the statistics the elementwise step used,
  // in the working precision (kernels/model.hpp, finishing_format): the mean
  // (0 for rmsnorm) and r = 1 / sqrt(statistic + eps). Empty where the kernel
  // does not expose them (the GPU kernels and users' kernels).
  std::vector<double> statistics;
};

}  // namespace ulpscope
