#pragma once
// A run's outputs checked and digested where they are, on the device, so that
// a run of 2^28 outputs need not come back to the host to be compared with
// the others (kernels/output_digest.hpp defines the digest).
#include <cstddef>
#include <cstdint>

#include "kernels/index_permutation.hpp"

namespace ulpscope {

struct DeviceOutputCheck {
  std::uint64_t digest = 0;                 // of values, as results_digest on the host
  std::uint64_t unwritten_values = 0;       // values still holding the poison pattern
  std::uint64_t unwritten_unrounded = 0;    // the same for the unrounded values
  std::int64_t first_unwritten_value = -1;  // its smallest index, or -1
};

// `poison` is the pattern the outputs were filled with before the launch.
// With `columns` (the norms' permuted runs: output i belongs to element
// columns->source(i) of the original array), each value is digested at the
// position it goes back to. `scratch` holds 4 uint64 on the device; the call
// synchronises `stream` (a cudaStream_t) and throws GpuError on a CUDA error.
DeviceOutputCheck check_outputs_on_device(const double* values, const double* unrounded, std::size_t count,
                                          std::uint64_t poison, const ProblemPermutation* columns,
                                          std::uint64_t* scratch, void* stream);

}  // namespace ulpscope
