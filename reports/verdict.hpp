#pragma once
// The verdict: one line per kernel, the answer a reader wants before the
// cells (docs/spec.md, "The report"). A kernel is (op, dtype -> out dtype,
// accumulator, shape), and its axis and fp8 saturation where the matrix has
// several; its line sums up every cell of that kernel: the worst ULP error on
// realistic and on adversarial distributions (and on a user's data), the
// share of cells correctly rounded, whether its bits were the same run to
// run, across launch configurations and across input orders, and its
// throughput. Pure data computed from a report's cells; every format renders
// it (text, Markdown, JSON, HTML).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/distribution.hpp"

namespace ulpscope {

// The worst error of a kernel's cells in one distribution group. Failed cells
// are left out (the verdict counts them apart).
struct WorstError {
  std::size_t cells = 0;  // cells of the group that ran
  // The largest defined ulp_error; nullopt when no cell has one.
  std::optional<double> max_ulp;
  // Some cell has no ULP error: its result is not finite where the correctly
  // rounded one is, or the reverse (the cell's error_note says which). No
  // finite number of ULPs is worse.
  bool unbounded = false;
  // Where the worst occurred: the first unbounded cell, else the first cell
  // with the largest ulp_error. Empty when cells == 0.
  std::string distribution;
  std::int64_t n = 0;
  std::uint64_t seed = 0;
};

// Whether a kernel gave the same bits (run to run, across launch
// configurations, across input orders): yes, no, or not measured (one run,
// one launch configuration, no permutation).
enum class SameBits : std::uint8_t { yes, no, not_measured };
std::string to_string(SameBits s);  // "yes", "no", "n/a"

struct Verdict {
  std::string op, dtype, out_dtype, accumulator, shape, axis, saturation;
  std::size_t cells = 0, failed = 0, correctly_rounded = 0;
  WorstError realistic, adversarial, user_input;
  SameBits run_to_run = SameBits::not_measured, across_configs = SameBits::not_measured,
           across_orders = SameBits::not_measured;
  // The measurement at the largest size among the kernel's cells; nullopt
  // where none was measured (the CPU backend, --throughput-n 0).
  std::optional<double> gbps, fraction_of_cub;
  std::optional<std::int64_t> throughput_n;

  const WorstError& worst(DistributionGroup g) const;
  // correctly_rounded / cells (0 for no cells).
  double correctly_rounded_share() const;
};

// One verdict per kernel, in the order the kernels first appear in cells.
std::vector<Verdict> verdicts(const std::vector<Cell>& cells);

// How the renderers write a verdict's parts, so that every format says the
// same: "0.5", "3.1e+04", "inf" (unbounded), "-" (no cell of the group).
std::string worst_ulp_text(const WorstError& w);
// "fp16" or "fp16->fp32"; the axis and the saturation are added when not
// the defaults ("fp16 inner", "fp8_e4m3->fp8_e4m3 satfinite").
std::string verdict_format_text(const Verdict& v);
// "97%" (rounded down, so that 100% means every cell), "0/0" for no cells.
std::string correctly_rounded_text(const Verdict& v);
// "2951 GB/s, 98% of cub" (without the share when not measured), or "not measured".
std::string throughput_text(const Verdict& v);

}  // namespace ulpscope
