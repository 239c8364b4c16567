#pragma once
// The launch configurations a kernel is run and modelled with, planned for a
// device's shape: the GPU backend passes the device it opened, the CPU
// backend the reference device, and the CPU models take whichever
// configuration they are given (model.hpp). Host only.
#include <cstdint>
#include <vector>

#include "kernels/reduction.hpp"

namespace ulpscope {

// What a default launch depends on: how many SMs, and how many registers
// each holds (the blocks that fit where a kernel is held to a register count).
struct DeviceShape {
  int sm_count = 0;
  int registers_per_sm = 0;
};

// The reference device for CPU-only runs: an H100 SXM (132 SMs of 65536
// registers), the device the default launches were tuned on
// (docs/perf-h100.md, "Launch configurations"). The CPU backend plans for it,
// so that a CPU run's orders, and so its bits, do not depend on the machine.
inline constexpr DeviceShape kReferenceDevice{132, 65536};

// At least 3 launch configurations (serial: its one order) for a reduction of
// `length` elements on `device`, the first the default one. Whole-array
// orders depend on blocks and threads; row-wise inner orders on threads only
// (one block per row); outer orders on neither (one thread per column).
std::vector<LaunchConfig> launch_configs(const KernelSpec& spec, std::int64_t length,
                                         const DeviceShape& device = kReferenceDevice);

}  // namespace ulpscope
