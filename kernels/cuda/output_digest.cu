#include "kernels/cuda/output_digest.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/output_digest.hpp"

namespace ulpscope {
namespace {

// scratch: [digest sum, unwritten values, unwritten unrounded, first unwritten value].
// Every total is a wrapping sum or a minimum, so the order in which the
// blocks add their shares does not change it.
template <bool kPermuted>
__global__ void digest_outputs(const double* values, const double* unrounded, std::int64_t count,
                               std::uint64_t poison, ProblemPermutation perm, unsigned long long* scratch) {
  std::uint64_t sum = 0, unwritten = 0, unwritten_unrounded = 0, first = ~std::uint64_t(0);
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const double v = values[i];
    const std::uint64_t bits = std::uint64_t(__double_as_longlong(v));
    if (bits == poison) {
      ++unwritten;
      if (std::uint64_t(i) < first) first = std::uint64_t(i);
    }
    if (std::uint64_t(__double_as_longlong(unrounded[i])) == poison) ++unwritten_unrounded;
    const std::int64_t position = kPermuted ? perm.source(i) : i;
    sum += digest_term(std::uint64_t(position), output_key(v));
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    sum += __shfl_down_sync(0xFFFFFFFFu, sum, offset);
    unwritten += __shfl_down_sync(0xFFFFFFFFu, unwritten, offset);
    unwritten_unrounded += __shfl_down_sync(0xFFFFFFFFu, unwritten_unrounded, offset);
    const std::uint64_t other = __shfl_down_sync(0xFFFFFFFFu, first, offset);
    if (other < first) first = other;
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&scratch[0], (unsigned long long)sum);
    if (unwritten) atomicAdd(&scratch[1], (unsigned long long)unwritten);
    if (unwritten_unrounded) atomicAdd(&scratch[2], (unsigned long long)unwritten_unrounded);
    if (unwritten) atomicMin(&scratch[3], (unsigned long long)first);
  }
}

}  // namespace

DeviceOutputCheck check_outputs_on_device(const double* values, const double* unrounded, std::size_t count,
                                          std::uint64_t poison, const ProblemPermutation* columns,
                                          std::uint64_t* scratch, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const std::uint64_t start[4] = {0, 0, 0, ~std::uint64_t(0)};
  cuda_check(cudaMemcpyAsync(scratch, start, sizeof start, cudaMemcpyHostToDevice, s), "the output check");
  if (count > 0) {
    // Block size a multiple of the warp: the shuffles above take whole warps.
    const int threads = 256;
    const int blocks = int(std::min<std::int64_t>((std::int64_t(count) + threads - 1) / threads, 8192));
    auto* total = reinterpret_cast<unsigned long long*>(scratch);
    const ProblemPermutation identity(Axis::all, true, 1, 1, 0);
    if (columns != nullptr)
      digest_outputs<true><<<blocks, threads, 0, s>>>(values, unrounded, std::int64_t(count), poison, *columns, total);
    else
      digest_outputs<false><<<blocks, threads, 0, s>>>(values, unrounded, std::int64_t(count), poison, identity, total);
    check_launch("the output check");
  }
  std::uint64_t got[4];
  cuda_check(cudaMemcpyAsync(got, scratch, sizeof got, cudaMemcpyDeviceToHost, s), "the output check");
  cuda_check(cudaStreamSynchronize(s), "the output check");
  DeviceOutputCheck r;
  r.digest = digest_start(count) + got[0];
  r.unwritten_values = got[1];
  r.unwritten_unrounded = got[2];
  r.first_unwritten_value = got[1] ? std::int64_t(got[3]) : -1;
  return r;
}

}  // namespace ulpscope
