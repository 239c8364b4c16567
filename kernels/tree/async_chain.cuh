#pragma once
// A thread's chain of 16-byte vectors (tree_order.hpp, step 1: v = g, g + G,
// ...) read through Stages slots of shared memory that cp.async keeps filled
// Stages vectors ahead (PTX ISA, "cp.async"; CUDA C++ Programming Guide,
// "Asynchronous Data Copies"). The copies wait in the memory system, not in
// registers: a first pass whose state holds few blocks per SM (exact sums:
// 2 to 4 of 256 threads) keeps Stages vectors per thread in flight instead of
// the one or two its registers allow. The vectors come out in the chain's
// order, so the additions and their result are the same as with direct loads.
//
// Each thread owns its slots (slot s at s * blockDim.x + threadIdx.x: a warp
// reads 512 contiguous bytes, no bank conflicts), so no barrier is needed:
// cp.async.wait_group makes the thread's own copies visible to it. One commit
// group per vector, empty past the chain's end, so that "all but the newest
// Stages - 1 groups complete" always means the oldest vector has arrived. A
// slot is refilled right after it is read: the refill's write lands when its
// global read returns, long after the shared read ahead of it in the thread's
// own instruction stream. Before sm_80 (no cp.async) the slots are filled by
// ordinary loads and stores.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/tree/load.cuh"

namespace ulpscope::tree {

template <class Elem, int Stages>
struct AsyncChain {
  static_assert(Stages >= 1 && Stages <= 8, "cp.async.wait_group takes Stages - 1 as an immediate");
  const uint4* src;
  std::int64_t ahead;  // the next vector to copy
  std::int64_t step;   // G
  std::int64_t end;    // vectors in the array
  uint4* slots;        // this thread's first slot; the next at + blockDim.x
  unsigned stride;     // blockDim.x
  int head = 0;        // the slot of the next vector to read

  // Starts the copies of the chain's first Stages vectors from vector g.
  __device__ __forceinline__ AsyncChain(const Elem* base, std::int64_t g, std::int64_t threads, std::int64_t vectors,
                                        uint4* block_slots)
      : src(reinterpret_cast<const uint4*>(base)),
        ahead(g),
        step(threads),
        end(vectors),
        slots(block_slots + threadIdx.x),
        stride(blockDim.x) {
#pragma unroll
    for (int s = 0; s < Stages; ++s) copy_into(s);
  }

  __device__ __forceinline__ void copy_into(int s) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    if (ahead < end) slots[s * stride] = __ldg(src + ahead);
#else
    if (ahead < end) {
      const auto to = static_cast<unsigned>(__cvta_generic_to_shared(slots + s * stride));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(src + ahead) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
    ahead += step;
  }

  // The chain's next vector; its slot starts the copy Stages vectors ahead.
  __device__ __forceinline__ Vector<Elem> next() {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(Stages - 1) : "memory");
#endif
    const uint4 raw = slots[head * stride];
    copy_into(head);
    head = head + 1 == Stages ? 0 : head + 1;
    Vector<Elem> out;
    static_assert(sizeof(out) == sizeof(raw));
    std::memcpy(&out, &raw, sizeof raw);
    return out;
  }
};

// Where VectorChain's vectors come from: an AsyncChain, or (Stages = 0)
// direct loads of vector v.
template <class Elem, int Stages>
struct VectorSource {
  AsyncChain<Elem, Stages> chain;
  __device__ __forceinline__ VectorSource(const Elem* base, std::int64_t g, std::int64_t threads,
                                          std::int64_t vectors, uint4* block_slots)
      : chain(base, g, threads, vectors, block_slots) {}
  __device__ __forceinline__ Vector<Elem> next(const Elem*, std::int64_t) { return chain.next(); }
};
template <class Elem>
struct VectorSource<Elem, 0> {
  __device__ __forceinline__ VectorSource(const Elem*, std::int64_t, std::int64_t, std::int64_t, uint4*) {}
  __device__ __forceinline__ Vector<Elem> next(const Elem* base, std::int64_t v) { return load_vector(base, v); }
};

// Shared memory of a block's chains: Stages slots of 16 bytes per thread and input.
template <int Stages, bool Y>
constexpr std::size_t async_chain_bytes(int threads) {
  return std::size_t(Stages) * (Y ? 2 : 1) * sizeof(uint4) * std::size_t(threads);
}

}  // namespace ulpscope::tree
