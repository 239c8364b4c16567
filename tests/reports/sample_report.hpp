#pragma once
// A report with one cell of every kind the formats must handle: exact and
// inexact, non-deterministic, failed, undefined and non-finite metrics,
// row-wise with a component, fp8 saturation, n = 0, text that needs escaping.
#include <cmath>
#include <limits>

#include "accuracy/cell.hpp"
#include "formats/hex_float.hpp"

namespace ulpscope::test {

inline Cell base_cell(std::string op, std::string dtype, std::string acc, std::string shape, std::string dist,
                      std::int64_t n) {
  Cell c;
  c.op = std::move(op);
  c.dtype = dtype;
  c.out_dtype = std::move(dtype);
  c.accumulator = std::move(acc);
  c.shape = std::move(shape);
  c.distribution = std::move(dist);
  c.n = n;
  c.seed = 1;
  c.reference_rounded = hex_float(1.5);
  c.reference_exact = "1.500000000000000000000000000000000000000123";
  c.result = hex_float(1.5);
  c.ulp_error = 0.25;
  c.rel_error = 1e-5;
  c.condition = 1.0;
  c.bound_ratio = 0.01;
  c.correctly_rounded = true;
  c.matches_model = true;
  c.runs = 5;
  c.distinct_results = 1;
  c.configs = 4;
  c.distinct_across_configs = 1;
  c.gbps = 900.0;
  c.fraction_of_cub = 0.95;
  c.fraction_of_copy = 0.9;
  return c;
}

inline Report sample_report() {
  Report r;
  r.header.version = "0.1.0";
  r.header.git_commit = "abc1234";
  r.header.device = "NVIDIA H100 80GB HBM3";
  r.header.backend = "cuda";
  r.header.build_flags = "-O3 --fmad=false";
  r.header.command_line = "accuracy_report --dtype fp16,bf16";
  r.header.started_at = "2026-11-22T22:00:00Z";
  r.header.seconds = 12.5;
  r.header.settings_json = R"({"dtypes":["fp16","bf16"],"sizes":[1024],"seeds":[1],"runs":5})";
  r.header.unavailable = {{"cub_deterministic", "needs CCCL >= 3.1"}};

  r.cells.push_back(base_cell("sum", "fp16", "fp32", "tree", "normal", 1024));
  r.cells.back().result = hex_float(1.5 + 0x1p-10);
  r.cells.back().ulp_error = 0.5;
  r.cells.back().correctly_rounded = false;
  r.cells.back().condition = 12.5;

  r.cells.push_back(base_cell("sum", "fp16", "naive", "tree", "constant", 4097));
  r.cells.back().ulp_error = 2048;
  r.cells.back().correctly_rounded = false;
  r.cells.back().gbps = 1200.0;

  r.cells.push_back(base_cell("sum", "fp16", "exact", "tree", "ill_conditioned:1e10", 31));
  r.cells.back().ulp_error = 0;
  r.cells.back().condition = 1e10;
  r.cells.back().note = "condition reached 1.02e10, \"as asked\", <b>|x|</b>";

  r.cells.push_back(base_cell("sum", "fp16", "fp32", "atomic", "uniform", 33));
  r.cells.back().ulp_error = 1.5;
  r.cells.back().correctly_rounded = false;
  r.cells.back().distinct_results = 3;
  r.cells.back().matches_model = false;
  r.cells.back().permutations = 8;
  r.cells.back().distinct_across_permutations = 2;

  r.cells.push_back(base_cell("dot", "bf16", "kahan", "tree", "exact_cancellation", 0));
  r.cells.back().ulp_error = 0;
  r.cells.back().condition.reset();  // 0 / 0
  r.cells.back().reference_rounded = "-0x0p+0";
  r.cells.back().result = "0x0p+0";

  r.cells.push_back(base_cell("mean_var", "fp32", "welford", "tree", "large_mean", 8 * 4096));
  r.cells.back().rows = 8;
  r.cells.back().cols = 4096;
  r.cells.back().axis = "inner";
  r.cells.back().component = "variance, row 3";
  r.cells.back().seed = std::numeric_limits<std::uint64_t>::max();

  r.cells.push_back(base_cell("sum", "fp8_e4m3", "naive", "tree", "near_max", 1024));
  r.cells.back().out_dtype = "fp8_e4m3";
  r.cells.back().saturation = "nosat";
  r.cells.back().result = "nan";
  r.cells.back().ulp_error.reset();
  r.cells.back().error_note = "non-finite result for a finite reference";
  r.cells.back().rel_error = std::numeric_limits<double>::infinity();
  r.cells.back().correctly_rounded = false;

  r.cells.push_back(base_cell("norm2", "fp32", "fp32", "cub", "normal", 1024));
  Cell& failed = r.cells.back();
  failed.status = "failed: cub, needs a GPU";
  failed.ulp_error.reset();
  failed.rel_error.reset();
  failed.condition.reset();
  failed.bound_ratio.reset();
  failed.correctly_rounded = false;
  failed.matches_model.reset();
  failed.runs = failed.distinct_results = failed.configs = failed.distinct_across_configs = 0;
  failed.gbps.reset();
  failed.fraction_of_cub.reset();
  failed.fraction_of_copy.reset();
  failed.result = "nan";
  return r;
}

}  // namespace ulpscope::test
