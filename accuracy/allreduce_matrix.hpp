#pragma once
// The all-reduce family's matrix (docs/spec.md, "All-reduce across GPUs"):
// op x dtype x method x algorithm x protocol x P x distribution x n x seed,
// each cell one all-reduce scored element by element. On the CPU backend
// the cells are the models of NCCL's orders (kernels/allreduce); through
// NCCL (builds with ULPSCOPE_HAVE_NCCL) the device's output is scored and
// compared with the model of the topology NCCL reports.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/distribution.hpp"
#include "kernels/allreduce/nccl_runner.hpp"

namespace ulpscope {

inline constexpr int kMaxRanks = 65536;  // --ranks: the CPU models hold P x (2^22 / P) inputs a thread

struct AllreduceSettings {
  std::vector<bool> means = {false};  // the ops: allreduce_sum (false), allreduce_mean (true)
  std::vector<Dtype> dtypes = {Dtype::fp32, Dtype::fp16, Dtype::bf16};
  std::vector<allreduce::Method> methods = {allreduce::Method::plain, allreduce::Method::upcast,
                                            allreduce::Method::exact};
  std::vector<allreduce::Algorithm> algorithms = {allreduce::Algorithm::ring, allreduce::Algorithm::tree};
  std::vector<allreduce::Protocol> protocols = {allreduce::Protocol::simple};
  // The GPU machines hold 2 and 4 GPUs: the same P on both backends makes a
  // CPU report a baseline for a GPU one, cell for cell.
  std::vector<int> ranks = {2, 4};
  std::vector<std::int64_t> sizes = {std::int64_t(1) << 16};  // elements per rank
  std::vector<DistributionSpec> distributions = {{Distribution::normal, {}}, {Distribution::uniform, {}}};
  std::vector<std::uint64_t> seeds = {1};
  int channels = 1;       // the CPU models' channels
  int nccl_channels = 0;  // through NCCL: the channels pinned (--channels), 0 for NCCL's own choice
  int permutations = 1;  // the ranks' tensors in reverse order: order reproducibility
  int runs = 3;          // all-reduces per cell through NCCL
  // The report header's settings: {"family": "allreduce", ...}.
  std::string to_json() const;
};

// The inverse of to_json (a baseline re-run); std::invalid_argument when it is not one.
AllreduceSettings allreduce_settings_from_json(const std::string& json);
bool is_allreduce_settings_json(const std::string& json);

// "" or one line saying what is wrong (P out of 1..kMaxRanks, a distribution
// that is not elementwise, fp64, more channels than 64, ...).
std::string allreduce_settings_problem(const AllreduceSettings& s);

struct AllreduceMatrixRun {
  std::vector<Cell> cells;
  std::vector<std::pair<std::string, std::string>> unavailable;  // the report's "not run" list
};

// use_nccl: through NCCL (the build must have it; the caller has checked
// nccl_unavailable for every P). threads 0: every usable core.
AllreduceMatrixRun run_allreduce_matrix(const AllreduceSettings& s, bool use_nccl, unsigned threads = 0);

// "allreduce_sum" / "allreduce_mean".
std::string allreduce_op_name(bool mean);

}  // namespace ulpscope
