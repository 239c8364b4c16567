// The kernels around NCCL's all-reduces (allreduce_kernels.hpp): one thread
// an element, grid-stride; each is a pass over memory beside the all-reduce.
#include <cub/device/device_select.cuh>
#include <cuda/std/iterator>
#include <thrust/iterator/counting_iterator.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/allreduce/nccl/allreduce_kernels.hpp"
#include "kernels/allreduce/nccl/exact_state.hpp"

namespace ulpscope::allreduce {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 8192;

unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return unsigned(b < kMaxBlocks ? (b ? b : 1) : kMaxBlocks);
}

void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// The exact state of each input format (exact_state.hpp).
template <class Visit>
decltype(auto) with_state(Dtype d, Visit&& visit) {
  switch (d) {
    case Dtype::fp32: return visit(ExactFp32{});
    case Dtype::fp16: return visit(ExactFp16{});
    case Dtype::bf16: return visit(ExactBf16{});
    default: break;
  }
  throw std::runtime_error("the NCCL all-reduce takes fp32, fp16 and bf16, not " + std::string(to_string(d)));
}

#define ULPSCOPE_GRID_STRIDE(i, n) \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n); i += std::size_t(gridDim.x) * blockDim.x)

// upcast's wide type: fp32 for the 16-bit formats, fp64 for fp32.
template <class S>
using wide_t = std::conditional_t<S::dtype == Dtype::fp32, double, float>;

template <class S>
__global__ void widen_kernel(const typename S::storage* in, wide_t<S>* wide, std::size_t n) {
  ULPSCOPE_GRID_STRIDE(i, n) wide[i] = wide_t<S>(decode<typename S::Format>(in[i]));  // exact
}

template <class S>
__global__ void round_wide_kernel(const wide_t<S>* wide, typename S::storage* out, std::size_t n, int ranks,
                                  bool mean) {
  const bool pow2 = (ranks & (ranks - 1)) == 0;
  const double scale = detail::exact_pow2(-ceil_log2(ranks));
  ULPSCOPE_GRID_STRIDE(i, n) {
    double v = double(wide[i]);
    if (mean) v = pow2 ? rn::mul(v, scale) : rn::div(v, double(ranks));
    out[i] = typename S::storage(encode<typename S::Format>(v));
  }
}

// V elements a thread, loaded and stored as whole vectors (16 bytes of
// input): the exact method's three passes are memory-bound, and one-element
// byte and half-word accesses left them well below the bandwidth. The tail
// (n mod V elements) goes one at a time.
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};
template <int V, class T>
__device__ Pack<T, V> load_pack(const T* p, std::size_t j) {
  return reinterpret_cast<const Pack<T, V>*>(p)[j];
}
template <int V, class T>
__device__ void store_pack(T* p, std::size_t j, const Pack<T, V>& x) {
  reinterpret_cast<Pack<T, V>*>(p)[j] = x;
}
template <class S>
constexpr int kVec = 16 / int(sizeof(typename S::storage));

#define ULPSCOPE_VECTOR_STRIDE(j, nv)                                                                        \
  for (std::size_t j = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; j < (nv); \
       j += std::size_t(gridDim.x) * blockDim.x)
#define ULPSCOPE_TAIL_STRIDE(i, nv, V, n)                                                                    \
  for (std::size_t i = (nv) * (V) + blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::size_t(gridDim.x) * blockDim.x)

template <class S>
__global__ void exponent_bytes_kernel(const typename S::storage* in, std::uint8_t* bytes, std::size_t n) {
  constexpr int V = kVec<S>;
  const std::size_t nv = n / V;
  ULPSCOPE_VECTOR_STRIDE(j, nv) {
    const auto x = load_pack<V>(in, j);
    Pack<std::uint8_t, V> t;
#pragma unroll
    for (int k = 0; k < V; ++k) t.v[k] = S::exponent_byte(x.v[k]);
    store_pack<V>(bytes, j, t);
  }
  ULPSCOPE_TAIL_STRIDE(i, nv, V, n) bytes[i] = S::exponent_byte(in[i]);
}

template <class S, class Word>
__global__ void window_words_kernel(const typename S::storage* in, const std::uint8_t* top, Word* words,
                                    std::size_t n, int k) {
  constexpr int V = kVec<S>;
  const std::size_t nv = n / V;
  ULPSCOPE_VECTOR_STRIDE(j, nv) {
    const auto x = load_pack<V>(in, j);
    const auto t = load_pack<V>(top, j);
    Pack<Word, V> w;
#pragma unroll
    for (int e = 0; e < V; ++e) w.v[e] = S::window_word(x.v[e], t.v[e], k);
    store_pack<V>(words, j, w);
  }
  ULPSCOPE_TAIL_STRIDE(i, nv, V, n) words[i] = S::window_word(in[i], top[i], k);
}

template <class S, class Word>
__global__ void finish_kernel(const Word* words, const std::uint8_t* top, typename S::storage* out,
                              std::uint8_t* second, unsigned* count, std::size_t n, int k, int ranks, bool mean) {
  constexpr int V = kVec<S>;
  const std::size_t nv = n / V;
  unsigned flagged = 0;
  ULPSCOPE_VECTOR_STRIDE(j, nv) {
    const auto w = load_pack<V>(words, j);
    const auto t = load_pack<V>(top, j);
    Pack<typename S::storage, V> o;
    Pack<std::uint8_t, V> f;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      bool again;
      o.v[e] = S::finish(w.v[e], t.v[e], k, ranks, mean, again);
      f.v[e] = again ? 1 : 0;
      flagged += again ? 1u : 0u;
    }
    store_pack<V>(out, j, o);
    store_pack<V>(second, j, f);
  }
  ULPSCOPE_TAIL_STRIDE(i, nv, V, n) {
    bool again;
    out[i] = S::finish(words[i], top[i], k, ranks, mean, again);
    second[i] = again ? 1 : 0;
    flagged += again ? 1u : 0u;
  }
  // One atomic a warp: the flagged elements are rare.
  for (int off = 16; off > 0; off >>= 1) flagged += __shfl_down_sync(0xFFFFFFFFu, flagged, off);
  if ((threadIdx.x & 31) == 0 && flagged) atomicAdd(count, flagged);
}

template <class S>
__global__ void gather_kernel(const typename S::storage* in, const int* idx, typename S::storage* g, std::size_t m) {
  ULPSCOPE_GRID_STRIDE(j, m) g[j] = in[idx[j]];
}

template <class S>
__global__ void second_round_kernel(const typename S::storage* gathered, const int* idx, typename S::storage* out,
                                    std::size_t m, int ranks, bool mean) {
  ULPSCOPE_GRID_STRIDE(j, m) out[idx[j]] = S::exact_of_values(gathered + j, m, ranks, mean);
}

template <class S>
using word_t = std::conditional_t<S::word_bits == 32, std::uint32_t, std::uint64_t>;

}  // namespace

std::size_t wide_bytes(Dtype d) {
  return with_state(d, [](auto s) { return sizeof(wide_t<decltype(s)>); });
}

void widen(Dtype d, const void* in, void* wide, std::size_t n, cudaStream_t st) {
  with_state(d, [&](auto s) {
    using S = decltype(s);
    widen_kernel<S><<<blocks_for(n), kThreads, 0, st>>>(static_cast<const typename S::storage*>(in),
                                                      static_cast<wide_t<S>*>(wide), n);
  });
  check_launch("upcast: widen");
}

void round_wide(Dtype d, const void* wide, void* out, std::size_t n, int ranks, bool mean, cudaStream_t st) {
  with_state(d, [&](auto s) {
    using S = decltype(s);
    round_wide_kernel<S><<<blocks_for(n), kThreads, 0, st>>>(static_cast<const wide_t<S>*>(wide),
                                                           static_cast<typename S::storage*>(out), n, ranks, mean);
  });
  check_launch("upcast: round");
}

std::size_t exact_word_bytes(Dtype d) {
  return with_state(d, [](auto s) { return std::size_t(decltype(s)::word_bits / 8); });
}
int exact_max_ranks(Dtype d) {
  return with_state(d, [](auto s) { return decltype(s)::max_ranks; });
}
int exact_window_binades(Dtype d, int ranks) {
  return with_state(d, [&](auto s) { return decltype(s)::window_binades(ranks); });
}

void exponent_bytes(Dtype d, const void* in, std::uint8_t* bytes, std::size_t n, cudaStream_t st) {
  with_state(d, [&](auto s) {
    using S = decltype(s);
    exponent_bytes_kernel<S><<<blocks_for(n / kVec<S> + 1), kThreads, 0, st>>>(static_cast<const typename S::storage*>(in),
                                                               bytes, n);
  });
  check_launch("exact: exponent bytes");
}

void window_words(Dtype d, const void* in, const std::uint8_t* top, void* words, std::size_t n, int ranks,
                  cudaStream_t st) {
  with_state(d, [&](auto s) {
    using S = decltype(s);
    window_words_kernel<S><<<blocks_for(n / kVec<S> + 1), kThreads, 0, st>>>(static_cast<const typename S::storage*>(in), top,
                                                             static_cast<word_t<S>*>(words), n,
                                                             S::window_binades(ranks));
  });
  check_launch("exact: window words");
}

void finish_words(Dtype d, const void* words, const std::uint8_t* top, void* out, std::uint8_t* second,
                  unsigned* count, std::size_t n, int ranks, bool mean, cudaStream_t st) {
  if (cudaMemsetAsync(count, 0, sizeof *count, st) != cudaSuccess) check_launch("exact: zero the count");
  with_state(d, [&](auto s) {
    using S = decltype(s);
    finish_kernel<S><<<blocks_for(n / kVec<S> + 1), kThreads, 0, st>>>(static_cast<const word_t<S>*>(words), top,
                                                       static_cast<typename S::storage*>(out), second, count, n,
                                                       S::window_binades(ranks), ranks, mean);
  });
  check_launch("exact: finish");
}

std::size_t select_temp_bytes(std::size_t n) {
  std::size_t bytes = 0;
  cub::DeviceSelect::Flagged(nullptr, bytes, thrust::counting_iterator<int>(0), static_cast<const std::uint8_t*>(nullptr),
                             static_cast<int*>(nullptr), static_cast<int*>(nullptr), std::int64_t(n));
  return bytes;
}

void select_flagged(void* temp, std::size_t temp_bytes, const std::uint8_t* flags, int* indices, int* count,
                    std::size_t n, cudaStream_t st) {
  const cudaError_t e = cub::DeviceSelect::Flagged(temp, temp_bytes, thrust::counting_iterator<int>(0), flags,
                                                   indices, count, std::int64_t(n), st);
  if (e != cudaSuccess) throw std::runtime_error(std::string("exact: select the second round's elements: ") +
                                                 cudaGetErrorString(e));
}

void gather(Dtype d, const void* in, const int* indices, void* gathered, std::size_t m, cudaStream_t st) {
  with_state(d, [&](auto s) {
    using S = decltype(s);
    gather_kernel<S><<<blocks_for(m), kThreads, 0, st>>>(static_cast<const typename S::storage*>(in), indices,
                                                       static_cast<typename S::storage*>(gathered), m);
  });
  check_launch("exact: gather");
}

void second_round(Dtype d, const void* gathered, const int* indices, void* out, std::size_t m, int ranks, bool mean,
                  cudaStream_t st) {
  with_state(d, [&](auto s) {
    using S = decltype(s);
    second_round_kernel<S><<<blocks_for(m), kThreads, 0, st>>>(static_cast<const typename S::storage*>(gathered),
                                                             indices, static_cast<typename S::storage*>(out), m,
                                                             ranks, mean);
  });
  check_launch("exact: second round");
}

}  // namespace ulpscope::allreduce
