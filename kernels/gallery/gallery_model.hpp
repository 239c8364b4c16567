#pragma once
// The CPU models of the seed gallery's kernels: the operations of
// gallery_order.hpp in the same order as gallery_kernels.cuh, so that a GPU
// result is checked bit for bit (the atomic kernels: one order of many, drawn
// from order_seed). kernels/model.cpp delegates the gallery shapes here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/launch_policy.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::gallery {

// nullopt when the gallery has this kernel (whole array; sum with the naive
// or fp32 accumulator, or max with fp32; fp32, fp16 or bf16 inputs).
std::optional<std::string> unsupported(const KernelSpec& spec, Axis axis);

// Block sizes 256, 128, 512, 64, each with a grid for the grid-stride kernels
// (the program cap of two_stage; the second grid is one block per SM of
// `device`); the first is the default.
std::vector<LaunchConfig> launch_configs(const KernelSpec& spec, std::int64_t length, const DeviceShape& device);

// Why a launch configuration does not fit the gallery (threads a power of two
// in 32..512, at least one block), or nullopt.
std::optional<std::string> bad_config(const LaunchConfig& config);

ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                          std::uint64_t order_seed);

std::int64_t addition_depth(const KernelSpec& spec, std::int64_t length, const LaunchConfig& config);

}  // namespace ulpscope::gallery
