#pragma once
// The kernels around NCCL's all-reduces, launched on each rank's stream
// (docs/nccl-allreduce.md): the upcast method's widening and its one
// rounding, and the exact method's steps (exact_state.hpp). Raw pointers to
// each rank's device buffers; the format picked at run time.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "formats/dtype.hpp"

namespace ulpscope::allreduce {

// upcast: bf16/fp16 to fp32, fp32 to fp64 (exact), and back, rounded once.
std::size_t wide_bytes(Dtype d);
void widen(Dtype d, const void* in, void* wide, std::size_t n, cudaStream_t s);
// RN(wide), or for the mean RN(wide / ranks): one rounding where ranks is a
// power of two (the division is exact), else the quotient is first rounded to
// the wide format's double (docs/nccl-allreduce.md).
void round_wide(Dtype d, const void* wide, void* out, std::size_t n, int ranks, bool mean, cudaStream_t s);

// exact: the state's word (4 or 8 bytes), the most ranks, and its window.
std::size_t exact_word_bytes(Dtype d);
int exact_max_ranks(Dtype d);
int exact_window_binades(Dtype d, int ranks);
void exponent_bytes(Dtype d, const void* in, std::uint8_t* bytes, std::size_t n, cudaStream_t s);
void window_words(Dtype d, const void* in, const std::uint8_t* top, void* words, std::size_t n, int ranks,
                  cudaStream_t s);
// out: the rounded result; second_round[i] = 1 where element i needs the
// second round, and *count (zeroed first) the number of them.
void finish_words(Dtype d, const void* words, const std::uint8_t* top, void* out, std::uint8_t* second_round,
                  unsigned* count, std::size_t n, int ranks, bool mean, cudaStream_t s);
// The indices of the flagged elements, in increasing order (cub::DeviceSelect).
std::size_t select_temp_bytes(std::size_t n);
void select_flagged(void* temp, std::size_t temp_bytes, const std::uint8_t* flags, int* indices, int* count,
                    std::size_t n, cudaStream_t s);
void gather(Dtype d, const void* in, const int* indices, void* gathered, std::size_t m, cudaStream_t s);
// gathered: ranks x m values (rank r's m values in slot r); out[indices[j]] gets
// the exact sum (or mean) of column j, rounded once.
void second_round(Dtype d, const void* gathered, const int* indices, void* out, std::size_t m, int ranks, bool mean,
                  cudaStream_t s);

}  // namespace ulpscope::allreduce
