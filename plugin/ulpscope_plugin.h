/* ulpscope plug-in ABI, version 1: a shared library that exports reduction
 * kernels for accuracy_report --kernel-lib (docs/byo.md).
 *
 * The library exports one C function,
 *
 *     const ulpscope_plugin_v1* ulpscope_get_plugin(void);
 *
 * returning a pointer to a description that stays valid until the library is
 * unloaded (a static object). Its first member is the ABI version the library
 * was built against, ULPSCOPE_PLUGIN_ABI_VERSION; the loader reads that
 * member first and refuses any other version before reading anything else,
 * so later versions may change everything after it.
 *
 * Buffers: every array holds bit patterns of its format in host byte order
 * (fp32: IEEE binary32; fp16, bf16: 16-bit words; fp8: bytes; fp64 outputs:
 * IEEE binary64), row-major [rows, cols]; a whole-array op sees rows = 1,
 * cols = n. The suite owns every buffer: x, y, gamma and beta are read-only
 * and valid during the call only; out holds exactly
 * ulpscope_output_count() values of the output format and every one must be
 * written: a function that returns 0 and leaves a value as the suite
 * filled it fails the cell ("did not write its output"). Host functions get
 * host pointers; device functions get device pointers (CUDA) and a
 * cudaStream_t to enqueue on: the suite synchronises the stream and checks
 * CUDA's errors itself.
 *
 * Functions return 0 on success; on failure, a non-zero value and a
 * NUL-terminated one-line reason written into error (at most error_size
 * bytes, terminator included). accuracy_report isolates every call with a
 * time limit (--kernel-timeout, default 60 s; 0: in its own process): each
 * host function call runs in a child process made by fork(), and device
 * functions run in ulpscope-kernel-host, a process of their own (its own
 * CUDA context, on its own stream) that loads this library, gets the inputs
 * through shared memory and is started again after a failure. A crash,
 * exit(), abort(), hang, CUDA error or write past out (into the 4 KiB after
 * it) fails that cell only, naming the kernel; state kept between calls is
 * lost when the process ends. Host functions may be called from several
 * threads at once unless flags has ULPSCOPE_NOT_REENTRANT.
 *
 * This header is C (C99) and C++; it needs nothing but <stddef.h> and
 * <stdint.h>.
 */
#ifndef ULPSCOPE_PLUGIN_H
#define ULPSCOPE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ULPSCOPE_PLUGIN_ABI_VERSION 1u
#define ULPSCOPE_PLUGIN_ENTRY_POINT "ulpscope_get_plugin"

/* Formats (docs/spec.md, "Number formats"); fp64 is an output format only. */
enum ulpscope_dtype {
  ULPSCOPE_FP64 = 0,
  ULPSCOPE_FP32 = 1,
  ULPSCOPE_FP16 = 2,
  ULPSCOPE_BF16 = 3,
  ULPSCOPE_FP8_E4M3 = 4,
  ULPSCOPE_FP8_E5M2 = 5
};

/* Ops (docs/spec.md, "Ops"). */
enum ulpscope_op {
  ULPSCOPE_SUM = 0,
  ULPSCOPE_MEAN = 1,
  ULPSCOPE_DOT = 2,
  ULPSCOPE_SUMSQ = 3,
  ULPSCOPE_NORM2 = 4,
  ULPSCOPE_RMS = 5,
  ULPSCOPE_MEAN_VAR = 6, /* two outputs per reduction: mean, then variance */
  ULPSCOPE_MAX = 7,
  ULPSCOPE_MIN = 8,
  ULPSCOPE_AMAX = 9,
  ULPSCOPE_LOGSUMEXP = 10,
  ULPSCOPE_RMSNORM = 11, /* a whole row out: y = x / sqrt(mean x^2 + eps) * gamma */
  ULPSCOPE_LAYERNORM = 12, /* a whole row out: y = (x - mean) / sqrt(var + eps) * gamma + beta */
  ULPSCOPE_CUMSUM = 13     /* one output per element: the inclusive prefix sum of its array or row */
};

/* Reduced dimension, and the bits of ulpscope_kernel_v1.axes. */
enum ulpscope_axis { ULPSCOPE_AXIS_ALL = 0, ULPSCOPE_AXIS_INNER = 1, ULPSCOPE_AXIS_OUTER = 2 };
#define ULPSCOPE_AXIS_BIT(axis) (1u << (axis))

/* ulpscope_kernel_v1.flags */
#define ULPSCOPE_NONDETERMINISTIC 1u /* the kernel does not promise the same bits run to run */
#define ULPSCOPE_NOT_REENTRANT 2u    /* host functions must not be called concurrently */

/* A GPU launch configuration; blocks = 0: the kernel chooses. */
typedef struct ulpscope_launch_config {
  int32_t blocks;
  int32_t threads;
} ulpscope_launch_config;

/* One call: the problem, where to write, and the configuration. */
typedef struct ulpscope_call {
  int32_t op;        /* enum ulpscope_op */
  int32_t axis;      /* enum ulpscope_axis */
  int32_t in_dtype;  /* enum ulpscope_dtype */
  int32_t out_dtype; /* enum ulpscope_dtype */
  int64_t rows, cols;
  const void* x;
  const void* y;     /* dot: second vector, same shape as x; else NULL */
  const void* gamma; /* rmsnorm, layernorm: cols values; else NULL */
  const void* beta;  /* layernorm: cols values; else NULL */
  double eps;        /* rms, rmsnorm, layernorm: the suite's, 1e-6 unless accuracy_report --eps says otherwise */
  void* out;         /* ulpscope_output_count() values of out_dtype */
  ulpscope_launch_config config;
} ulpscope_call;

typedef int (*ulpscope_host_fn)(const ulpscope_call* call, char* error, size_t error_size);
typedef int (*ulpscope_device_fn)(const ulpscope_call* call, void* cuda_stream, char* error, size_t error_size);

typedef struct ulpscope_kernel_v1 {
  const char* name;        /* the report's shape column: no spaces or commas */
  const char* accumulator; /* the report's accumulator column, e.g. "fp32"; NULL: "custom" */
  int32_t op;              /* enum ulpscope_op */
  int32_t in_dtype;        /* enum ulpscope_dtype */
  int32_t out_dtype;       /* enum ulpscope_dtype */
  uint32_t axes;           /* ULPSCOPE_AXIS_BIT(...) of the axes handled; 0: the op's default */
  uint32_t flags;          /* ULPSCOPE_NONDETERMINISTIC, ULPSCOPE_NOT_REENTRANT */
  ulpscope_host_fn run_host;     /* on host memory; may be NULL when run_device is set */
  ulpscope_device_fn run_device; /* on device memory; NULL: no GPU form */
  ulpscope_host_fn model;        /* NULL, or the host function that gives run_device's bits exactly */
  const ulpscope_launch_config* configs; /* NULL, or config_count configurations, the first the default */
  size_t config_count;
} ulpscope_kernel_v1;

typedef struct ulpscope_plugin_v1 {
  uint32_t abi_version; /* ULPSCOPE_PLUGIN_ABI_VERSION: always the first member */
  const char* name;     /* the library's name, for messages */
  size_t kernel_count;
  const ulpscope_kernel_v1* kernels;
} ulpscope_plugin_v1;

typedef const ulpscope_plugin_v1* (*ulpscope_get_plugin_fn)(void);

/* Put before the definition of ulpscope_get_plugin: C linkage (in C++) and
 * default visibility (when the library hides its symbols by default). */
#ifdef __cplusplus
#define ULPSCOPE_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define ULPSCOPE_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Values one call writes: rows * cols for rmsnorm, layernorm and cumsum, else
 * reductions * components (whole array: 1 reduction; inner: rows; outer:
 * cols; mean_var: 2 components). */
static inline int64_t ulpscope_output_count(const ulpscope_call* c) {
  if (c->op == ULPSCOPE_RMSNORM || c->op == ULPSCOPE_LAYERNORM || c->op == ULPSCOPE_CUMSUM) return c->rows * c->cols;
  int64_t reductions = c->axis == ULPSCOPE_AXIS_ALL ? 1 : c->axis == ULPSCOPE_AXIS_OUTER ? c->cols : c->rows;
  return reductions * (c->op == ULPSCOPE_MEAN_VAR ? 2 : 1);
}

#ifdef __cplusplus
}
#endif

#endif /* ULPSCOPE_PLUGIN_H */
