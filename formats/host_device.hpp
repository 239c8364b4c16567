#pragma once
// Marks functions that compile for both the host and the device, so that a
// format, an accumulator or an order description is written once and used by
// the CUDA kernels and their CPU models alike (STYLE.md, section 2).
#if defined(__CUDACC__)
#define ULPSCOPE_HD __host__ __device__
#else
#define ULPSCOPE_HD
#endif

// Fully unrolls the loop that follows on the device, so that small arrays
// indexed by its counter stay in registers instead of local memory.
#if defined(__CUDA_ARCH__)
#define ULPSCOPE_UNROLL _Pragma("unroll")
#else
#define ULPSCOPE_UNROLL
#endif

// Keeps a rarely taken, long piece of code out of line on the device (one
// copy instead of one per unrolled call site).
#if defined(__CUDACC__)
#define ULPSCOPE_NOINLINE __noinline__
#else
#define ULPSCOPE_NOINLINE
#endif
