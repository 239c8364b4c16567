#pragma once
// The CPU models of the scan shapes (cumsum): the merges of scan_order.hpp in
// the kernels' order, so that a GPU scan is checked bit for bit and the CPU
// backend measures a scan's accuracy without a GPU. kernels/model.cpp
// delegates cumsum and the scan shapes here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/reduction.hpp"

namespace ulpscope::scan {

// nullopt when the scan exists (cumsum; serial, warp, block,
// reduce_then_scan, lookback; naive, fp32, fp64, kahan, exact; all or
// inner); else why not. cub is the caller's (no CPU model).
std::optional<std::string> unsupported(const KernelSpec& spec, Axis axis);

// The default launch first (256 threads; 512 for reduce_then_scan and
// lookback), then the others of 512, 256, 128 and 64 threads (and other block
// counts for reduce_then_scan, from the device's sm_count): every level of
// the order moves.
std::vector<LaunchConfig> launch_configs(const KernelSpec& spec, std::int64_t length, int sm_count);

// The most threads a scan block takes: its shared partials (one a thread
// for the block shape, up to 44 bytes each for the exact scan's of bf16 and
// fp32) stay within 48 KiB.
inline constexpr int kMaxScanThreads = 512;

// Why a configuration does not fit the scans (threads a power of two in
// 32..512, at least one block), or nullopt.
std::optional<std::string> bad_config(const LaunchConfig& config);

// exact into the input format's default output (fp8 into fp32, the others
// into themselves): the scan runs the kernels' fixed-point integer in the
// shape's order (fixed_point_sum.hpp: 96 bits for fp16 and fp8;
// wide_fixed_point_sum.hpp: 320 bits for bf16 and fp32), whose every prefix
// is the reference's. Other exact scans are the reference's one-pass
// prefixes.
bool has_fixed_point_scan(const KernelSpec& spec);

// One output per element, [line][index], in out_dtype widened to double;
// `unrounded` holds the running value before its rounding to out_dtype.
// Throws std::invalid_argument on an unsupported spec or a bad config.
ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config);
// The same outputs into `into`, whose arrays keep their memory where it is
// large enough (a caller that runs many launches and keeps only digests).
void run_model_into(const KernelSpec& spec, const ReductionProblem& problem, const LaunchConfig& config,
                    ReductionResult& into);

}  // namespace ulpscope::scan
