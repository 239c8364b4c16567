#pragma once
// A reduction problem whose arrays live on the device, and where a kernel
// writes its answer: the contract between the dispatch of every GPU shape
// (tree, atomic, cub, ...) and the backend that uploads, runs and times them.
// Host-only types (no CUDA headers needed), so host code can hold them.
#include <cstddef>
#include <cstdint>

#include "formats/dtype.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope {

struct DeviceProblem {
  Op op = Op::sum;
  Axis axis = Axis::all;
  Dtype in = Dtype::fp32;
  std::int64_t rows = 1, cols = 0;
  double eps = 1e-6;
  const void* x = nullptr;  // device pointers, elements of format `in`
  const void* y = nullptr;
  const void* gamma = nullptr;
  const void* beta = nullptr;
  std::int64_t elements() const { return rows * cols; }
  std::int64_t reductions() const { return axis == Axis::outer ? cols : rows; }
  std::int64_t length() const { return axis == Axis::outer ? rows : cols; }
};

// Where a launch writes its results, in the layout of ReductionResult: each
// output widened exactly to double, and the accumulator's unrounded value.
struct DeviceOutput {
  double* values = nullptr;     // reductions * components, or rows * cols for rmsnorm/layernorm
  double* unrounded = nullptr;  // same layout; may be null when not wanted
  std::size_t count = 0;
};

// Scratch memory a launch may use (block partials, the second pass's input).
// The backend allocates it once per problem, large enough for any
// configuration it will launch (workspace_bytes() of the dispatch).
struct DeviceWorkspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};

}  // namespace ulpscope
