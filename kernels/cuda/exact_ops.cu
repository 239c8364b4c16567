// ulpscope::exact::reduce (kernels/exact.hpp): the tree kernels' `exact`
// accumulator on the caller's arrays, whose finishing pass stores each output
// in the output format (tree_dispatch.hpp, TypedOutput): two launches for a
// whole array (block partials, second pass), one for rows.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_shape.hpp"
#include "kernels/cuda/per_device.hpp"
#include "kernels/exact.hpp"
#include "kernels/launch_policy.hpp"
#include "kernels/model.hpp"
#include "kernels/tree/tree_dispatch.hpp"

namespace ulpscope::exact {
namespace {

Op to_op(Reduction r) {
  switch (r) {
    case Reduction::sum: return Op::sum;
    case Reduction::mean: return Op::mean;
    case Reduction::dot: return Op::dot;
    case Reduction::sumsq: return Op::sumsq;
    case Reduction::norm2: return Op::norm2;
    case Reduction::mean_var: return Op::mean_var;
  }
  throw std::invalid_argument("exact::reduce: unknown reduction");
}

// A CUDA call's status; the message is built only on failure.
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw_cuda_error(e, what);
}

// The scratch memory's pool, one per device, created on first use. The
// device's default pool gives its memory back to the system at every
// synchronisation (release threshold 0, CUDA Runtime API, "Stream Ordered
// Memory Allocator"), so that the next call maps it again; this pool keeps
// it, without changing the default pool that the caller's code may use.
cudaMemPool_t make_scratch_pool(int device) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  check(cudaMemPoolCreate(&pool, &props), "exact::reduce (creating the scratch memory pool)");
  std::uint64_t keep = UINT64_MAX;
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
        "exact::reduce (the scratch memory pool's release threshold)");
  return pool;
}

cudaMemPool_t scratch_pool(int device) {
  static PerDevice<cudaMemPool_t> pools;
  return pools.get(device, make_scratch_pool);
}

}  // namespace

void reduce(const Arguments& a, cudaStream_t stream) {
  if (a.rows < 0 || a.cols < 0) throw std::invalid_argument("exact::reduce: rows and cols must not be negative");
  if (a.rows == 0) return;
  if (a.in == Dtype::fp64) throw std::invalid_argument("exact::reduce: fp64 is an output format only");
  if (a.cols > 0 && a.x == nullptr) throw std::invalid_argument("exact::reduce: x is null");
  if (a.op == Reduction::dot && a.cols > 0 && a.y == nullptr)
    throw std::invalid_argument("exact::reduce: dot needs y");
  if (a.out == nullptr) throw std::invalid_argument("exact::reduce: out is null");
  const KernelSpec spec{to_op(a.op), a.in, a.out_dtype, Accumulator::exact, Shape::tree, Saturation::satfinite};
  const Axis axis = a.rows == 1 ? Axis::all : Axis::inner;
  if (auto why = unsupported(spec, axis)) throw std::invalid_argument("exact::reduce: " + *why);

  DeviceProblem p;
  p.op = spec.op;
  p.axis = axis;
  p.in = a.in;
  p.rows = a.rows;
  p.cols = a.cols;
  p.x = a.x;
  p.y = a.op == Reduction::dot ? a.y : nullptr;
  // The dispatch's default grid (its LaunchConfig with blocks = 0), resolved
  // here once rather than by each of the dispatch's calls.
  const LaunchConfig config =
      launch_configs(spec, axis == Axis::all ? p.elements() : p.length(), current_device_shape()).front();
  const std::size_t workspace_bytes = tree_workspace_bytes(spec, p, config);
  const TypedOutput out{a.out, std::size_t(a.rows * outputs_per_row(a.op))};
  if (workspace_bytes == 0) {
    launch_tree(spec, p, config, DeviceWorkspace{}, out, stream);
    check(cudaGetLastError(), "exact::reduce");
    return;
  }
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  void* scratch = nullptr;
  check(cudaMallocFromPoolAsync(&scratch, workspace_bytes, scratch_pool(device), stream),
        "exact::reduce (scratch memory)");
  try {
    launch_tree(spec, p, config, DeviceWorkspace{scratch, workspace_bytes}, out, stream);
    check(cudaGetLastError(), "exact::reduce");
  } catch (...) {
    cudaFreeAsync(scratch, stream);
    throw;
  }
  check(cudaFreeAsync(scratch, stream), "exact::reduce (scratch memory)");
}

}  // namespace ulpscope::exact
