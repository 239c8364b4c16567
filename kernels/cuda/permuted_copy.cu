#include "kernels/cuda/permuted_copy.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"

namespace ulpscope {
namespace {

template <class Word, bool kColumns>
__global__ void gather(const Word* src, Word* dst, std::int64_t count, ProblemPermutation perm) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dst[i] = src[kColumns ? perm.column(i) : perm.source(i)];
}

template <bool kColumns>
void launch(const void* src, void* dst, std::size_t element_bytes, std::int64_t count, const ProblemPermutation& perm,
            void* stream) {
  if (count <= 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  // A grid-stride loop over a few waves; the gather is bound by the
  // permutation's arithmetic and scattered reads, not by the launch shape.
  const int threads = 256;
  const int blocks = int(std::min<std::int64_t>((count + threads - 1) / threads, 65536));
  switch (element_bytes) {
    case 1:
      gather<std::uint8_t, kColumns><<<blocks, threads, 0, s>>>(static_cast<const std::uint8_t*>(src),
                                                                 static_cast<std::uint8_t*>(dst), count, perm);
      break;
    case 2:
      gather<std::uint16_t, kColumns><<<blocks, threads, 0, s>>>(static_cast<const std::uint16_t*>(src),
                                                                  static_cast<std::uint16_t*>(dst), count, perm);
      break;
    case 4:
      gather<std::uint32_t, kColumns><<<blocks, threads, 0, s>>>(static_cast<const std::uint32_t*>(src),
                                                                  static_cast<std::uint32_t*>(dst), count, perm);
      break;
    default:
      throw std::invalid_argument("permuted copy: elements of 1, 2 or 4 bytes");
  }
  check_launch("permuted copy");
}

}  // namespace

void launch_permuted_copy(const void* src, void* dst, std::size_t element_bytes, std::int64_t count,
                          const ProblemPermutation& perm, void* stream) {
  launch<false>(src, dst, element_bytes, count, perm, stream);
}

void launch_column_permuted_copy(const void* src, void* dst, std::size_t element_bytes, std::int64_t cols,
                                 const ProblemPermutation& perm, void* stream) {
  launch<true>(src, dst, element_bytes, cols, perm, stream);
}

}  // namespace ulpscope
