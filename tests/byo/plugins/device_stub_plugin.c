/* A kernel with a device form only, for a machine without a GPU: its
 * run_device must never be called there (it says so if it is). */
#include <stdio.h>

#include "plugin/ulpscope_plugin.h"

static int device_sum(const ulpscope_call* c, void* stream, char* error, size_t error_size) {
  (void)c;
  (void)stream;
  snprintf(error, error_size, "called without a GPU");
  return 1;
}

static const ulpscope_kernel_v1 kernels[] = {
    {"device_stub_sum", "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32, 0, 0, NULL, device_sum, NULL, NULL, 0},
};

static const ulpscope_plugin_v1 plugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "device stub", 1, kernels};

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &plugin; }
