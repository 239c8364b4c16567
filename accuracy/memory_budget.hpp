#pragma once
// Whether a run fits in memory, decided before any work: a size that does not
// fit is refused in one line that names the size, the estimate and the limit,
// rather than failing part way with an out-of-memory error (or being killed).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "accuracy/run_matrix.hpp"

namespace ulpscope {

struct SizeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

struct MemoryNeed {
  double host_bytes = 0, device_bytes = 0;
};

// An upper estimate of the memory the largest problem of the matrix holds at
// once (docs/perf-tool.md, "Memory"): the inputs, one permuted copy, the
// models' widened inputs and the outputs kept by the cells in flight, the
// scored references, the throughput input. `threads` is the work pool's.
MemoryNeed memory_need(const MatrixSettings& s, const std::optional<UserInput>& user_input, bool gpu,
                       unsigned threads);

// The host memory the kernel says is available (MemAvailable in
// /proc/meminfo); nullopt where it cannot tell.
std::optional<double> host_available_bytes();

// Throws SizeError when the need exceeds what is available: host, and device
// (device_free_bytes; nullopt without a GPU).
void check_memory(const MemoryNeed& need, std::optional<double> host_free, std::optional<double> device_free,
                  const std::string& what);

}  // namespace ulpscope
