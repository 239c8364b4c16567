/* A plug-in written in C (the ABI is C): recursive summation of fp32 in index
 * order, the order of the built-in serial shape (Higham 2002, eq. 4.1), and
 * a kernel that refuses one size, to see a library's error reach the cell. */
#include <stdio.h>
#include <string.h>

#include "plugin/ulpscope_plugin.h"

static int64_t reductions_of(const ulpscope_call* c) {
  return c->axis == ULPSCOPE_AXIS_ALL ? 1 : c->axis == ULPSCOPE_AXIS_OUTER ? c->cols : c->rows;
}
static int64_t length_of(const ulpscope_call* c) {
  return c->axis == ULPSCOPE_AXIS_ALL ? c->rows * c->cols : c->axis == ULPSCOPE_AXIS_OUTER ? c->rows : c->cols;
}

static int serial_sum(const ulpscope_call* c, char* error, size_t error_size) {
  if (c->in_dtype != ULPSCOPE_FP32 || c->out_dtype != ULPSCOPE_FP32) {
    snprintf(error, error_size, "fp32 in and out only");
    return 1;
  }
  const float* x = (const float*)c->x;
  float* out = (float*)c->out;
  const int64_t length = length_of(c);
  for (int64_t g = 0; g < reductions_of(c); ++g) {
    /* The first element, then the others: a sum of -0s stays -0, an empty
     * sum is +0 (IEEE 754, 6.3). */
    float acc = 0.0f;
    for (int64_t k = 0; k < length; ++k) {
      const float v = x[c->axis == ULPSCOPE_AXIS_OUTER ? k * c->cols + g : g * length + k];
      acc = k == 0 ? v : acc + v;
    }
    out[g] = acc;
  }
  return 0;
}

static int picky_sum(const ulpscope_call* c, char* error, size_t error_size) {
  if (length_of(c) == 33) {
    snprintf(error, error_size, "refuses n = 33");
    return 7;
  }
  return serial_sum(c, error, error_size);
}

static const ulpscope_launch_config serial_config[] = {{1, 1}};

static const ulpscope_kernel_v1 kernels[] = {
    {"c_serial_sum", "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32,
     ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_ALL) | ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_INNER) |
         ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_OUTER),
     0, serial_sum, NULL, NULL, serial_config, 1},
    {"c_picky_sum", NULL, ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32, 0, ULPSCOPE_NOT_REENTRANT, picky_sum, NULL,
     NULL, NULL, 0},
};

static const ulpscope_plugin_v1 plugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "byo test plug-in", 2, kernels};

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &plugin; }
