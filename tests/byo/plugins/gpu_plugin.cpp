// A plug-in with a GPU form only (run_device over device pointers): the
// serial fp32 sum of gpu_sum_kernel.cu, the order of good_plugin.c's
// c_serial_sum, so the two must give the same bits.
#include <cstdio>

#include "gpu_sum_kernel.hpp"
#include "plugin/ulpscope_plugin.h"

namespace {

int run_device(const ulpscope_call* c, void* stream, char* error, std::size_t error_size) {
  if (c->in_dtype != ULPSCOPE_FP32 || c->out_dtype != ULPSCOPE_FP32) {
    std::snprintf(error, error_size, "fp32 in and out only");
    return 1;
  }
  ulpscope::test::launch_serial_sum_fp32(c->x, c->out, c->rows, c->cols, c->axis, c->config.threads, stream);
  return 0;
}

const ulpscope_launch_config kConfigs[] = {{0, 64}, {0, 256}};
const ulpscope_kernel_v1 kKernels[] = {{"gpu_serial_sum", "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32,
                                        ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_ALL) | ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_INNER) |
                                            ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_OUTER),
                                        0, nullptr, run_device, nullptr, kConfigs, 2}};
const ulpscope_plugin_v1 kPlugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "byo GPU test plug-in", 1, kKernels};

}  // namespace

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &kPlugin; }
