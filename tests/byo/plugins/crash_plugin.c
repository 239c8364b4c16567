/* Kernels that would take the suite down in its own process: a
 * crash, exit(3), abort(), a call that never returns and a write past out,
 * beside one that works ("fine_sum"), whose cells must survive. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/ulpscope_plugin.h"

static int fine(const ulpscope_call* c, char* error, size_t error_size) {
  (void)error;
  (void)error_size;
  const float* x = (const float*)c->x;
  float acc = 0.0f;
  for (int64_t i = 0; i < c->rows * c->cols; ++i) acc += x[i];
  memcpy(c->out, &acc, sizeof acc);
  return 0;
}

static int segv(const ulpscope_call* c, char* error, size_t error_size) {
  (void)c;
  (void)error;
  (void)error_size;
  raise(SIGSEGV);
  return 0;
}

static int exits(const ulpscope_call* c, char* error, size_t error_size) {
  (void)c;
  (void)error;
  (void)error_size;
  exit(3);
}

static int aborts(const ulpscope_call* c, char* error, size_t error_size) {
  (void)c;
  (void)error;
  (void)error_size;
  abort();
}

static int hangs(const ulpscope_call* c, char* error, size_t error_size) {
  (void)c;
  (void)error;
  (void)error_size;
  for (;;) pause();
}

static int overruns(const ulpscope_call* c, char* error, size_t error_size) {
  (void)error;
  (void)error_size;
  fine(c, error, error_size);
  memset((char*)c->out + sizeof(float), 0, 64);
  return 0;
}

#define SUM_FP32(name, fn) {name, "fp32", ULPSCOPE_SUM, ULPSCOPE_FP32, ULPSCOPE_FP32, 0, 0, fn, NULL, NULL, NULL, 0}
static const ulpscope_kernel_v1 kernels[] = {
    SUM_FP32("fine_sum", fine),     SUM_FP32("segv_sum", segv),   SUM_FP32("exit_sum", exits),
    SUM_FP32("abort_sum", aborts),  SUM_FP32("hang_sum", hangs),  SUM_FP32("overrun_sum", overruns),
};

static const ulpscope_plugin_v1 plugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "crash", 6, kernels};

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &plugin; }
