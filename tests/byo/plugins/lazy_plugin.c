/* A kernel that returns 0 without writing out ("lazy_sum"), one that
 * writes only the first of its row sums ("half_sum"), and one whose every
 * result is the NaN with all bits set ("all_ones_sum"): only the first two
 * are failed cells ("did not write its output"). */
#include <string.h>

#include "plugin/ulpscope_plugin.h"

static int lazy(const ulpscope_call* c, char* error, size_t error_size) {
  (void)c;
  (void)error;
  (void)error_size;
  return 0;
}

static int half(const ulpscope_call* c, char* error, size_t error_size) {
  (void)error;
  (void)error_size;
  const float zero = 0.0f;
  memcpy(c->out, &zero, sizeof zero);
  return 0;
}

static int all_ones(const ulpscope_call* c, char* error, size_t error_size) {
  (void)error;
  (void)error_size;
  memset(c->out, 0xFF, (size_t)ulpscope_output_count(c) * sizeof(float));
  return 0;
}

static const ulpscope_kernel_v1 kernels[] = {
    {"lazy_sum", "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32, 0, 0, lazy, NULL, NULL, NULL, 0},
    {"half_sum", "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32, ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_INNER), 0, half,
     NULL, NULL, NULL, 0},
    {"all_ones_sum", "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32, 0, 0, all_ones, NULL, NULL, NULL, 0},
};

static const ulpscope_plugin_v1 plugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "lazy", 3, kernels};

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &plugin; }
