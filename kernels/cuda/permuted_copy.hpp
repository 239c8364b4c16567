#pragma once
// Permuted copies of an uploaded input, made on the device
// (kernels/index_permutation.hpp): the GPU backend's order-reproducibility
// runs read them instead of a copy shuffled on the host and uploaded again.
#include <cstddef>
#include <cstdint>

#include "kernels/index_permutation.hpp"

namespace ulpscope {

// dst[i] = src[perm.source(i)] for i < count, elements of element_bytes
// (1, 2 or 4), enqueued on stream (a cudaStream_t).
void launch_permuted_copy(const void* src, void* dst, std::size_t element_bytes, std::int64_t count,
                          const ProblemPermutation& perm, void* stream);
// dst[k] = src[perm.column(k)] for k < cols: the norms' gamma and beta.
void launch_column_permuted_copy(const void* src, void* dst, std::size_t element_bytes, std::int64_t cols,
                                 const ProblemPermutation& perm, void* stream);

}  // namespace ulpscope
