#pragma once
// The throughput of the matrix's kernels (docs/spec.md, "Metrics":
// throughput): the yardsticks a cell's GB/s is divided by, and the phase
// that times once, at the throughput size, each kernel whose cells were too
// small to time.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "accuracy/cell.hpp"
#include "accuracy/phase_times.hpp"
#include "accuracy/run_matrix.hpp"
#include "accuracy/user_kernel.hpp"
#include "accuracy/work_pool.hpp"
#include "kernels/gpu_backend.hpp"

namespace ulpscope::matrix {

// A kernel measured once at the throughput size, for the cells that were too
// small to time (docs/spec.md, "Metrics": throughput).
struct ThroughputJob {
  Op op;
  Axis axis;
  Dtype in;
  std::optional<KernelSpec> spec;  // a built-in kernel, or
  const UserKernel* user = nullptr;
};

// The key of a cell's kernel in the throughput phase (op, formats, accumulator, shape, axis).
std::string throughput_key(const Cell& c);

// cub::DeviceReduce::Sum's and a device-to-device copy's GB/s, measured once per run; 0: not measured.
struct Yardsticks {
  double cub_gbps = 0, copy_gbps = 0;
};

// A cell's throughput: t measured at n elements.
void set_throughput(Cell& c, const GpuBackend::Timing& t, std::int64_t n, const Yardsticks& yardsticks);

// Times each job once on a generated input of s.throughput_n elements (rows
// of s.row_cols for the row-wise ops); the cells without a throughput of
// their own take their kernel's.
void measure_throughput(const MatrixSettings& s, GpuBackend& gpu, const Yardsticks& yardsticks,
                        const std::map<std::string, ThroughputJob>& jobs, std::vector<Cell>& cells, WorkPool& pool,
                        PhaseTimes* clock);

}  // namespace ulpscope::matrix
