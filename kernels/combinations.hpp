#pragma once
// Which kernels exist, decided here once. A combination of op, input and
// output formats, accumulator and shape along an axis with no reason below
// exists for the CPU models and for the tree and atomic kernels alike, and
// the reducer table (reducer_table.hpp) has its reducer; the GPU adds the
// reasons of its own shapes (GpuBackend::unavailable: cub, a build without
// them). The CPU models, the CUDA dispatch and the report's "not run" list
// (accuracy/run_matrix.cpp) all ask here. Host only.
#include <optional>
#include <string>

#include "kernels/reduction.hpp"

namespace ulpscope {

// nullopt when the (op, in, out, accumulator, shape) exists along axis; else
// why not ("welford applies to mean_var only", ...).
std::optional<std::string> unsupported(const KernelSpec& spec, Axis axis);

// Why a run on the CPU models (gpu = false) or on the GPU skips this kernel:
// unsupported() for the shapes with a model, then the GPU's own reasons;
// nullopt where it runs.
std::optional<std::string> unavailable_on(const KernelSpec& spec, Axis axis, bool gpu);

}  // namespace ulpscope
