#pragma once
// Host side of the tree and atomic shapes for one input format: pick the
// reducer from the shared table, lay out the workspace, enqueue the kernels.
// Included by one .cu file per input format (tree_<format>.cu).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_problem.hpp"
#include "kernels/cuda/device_shape.hpp"
#include "kernels/cuda/per_device.hpp"
#include "kernels/model.hpp"
#include "kernels/reducer_table.hpp"
#include "kernels/tree/tree_agent.cuh"

namespace ulpscope::tree {

// What a launch needs to know besides the reducer.
struct Launch {
  const KernelSpec& spec;
  const DeviceProblem& problem;
  LaunchConfig config;
  DeviceWorkspace workspace;
  DeviceOutput out;
  void* typed;  // the outputs in spec.out, or null (tree_dispatch.hpp, TypedOutput)
  cudaStream_t stream;
  bool atomic;
};

inline LaunchConfig resolve(const KernelSpec& s, const DeviceProblem& p, LaunchConfig c) {
  if (c.blocks == 0) c = launch_configs(s, p.axis == Axis::all ? p.elements() : p.length(), current_device_shape()).front();
  if (c.threads < 32 || c.threads > kMaxThreads || c.threads % 32 != 0 || c.blocks < 1)
    throw std::invalid_argument("tree: threads must be a multiple of 32 in 32.." + std::to_string(kMaxThreads) +
                                ", blocks at least 1");
  return c;
}

constexpr std::size_t align_up(std::size_t b) { return (b + 255) / 256 * 256; }

// Workspace: [partials of the widest pass][the second pass's parameters]
// [rmsnorm and layernorm: the rows' statistics, statistics_bytes].
template <class R>
std::size_t workspace_for(const DeviceProblem& p, const LaunchConfig& c) {
  std::size_t partial = sizeof(typename R::Partial), params = 0;
  if constexpr (R::passes == 2) {
    partial = std::max(partial, sizeof(typename R::First::Partial));
    params = sizeof(typename R::Params) * std::size_t(p.axis == Axis::all ? 1 : p.reductions());
  }
  const std::size_t blocks = p.axis == Axis::all ? std::size_t(c.blocks) : 0;
  return align_up(partial * blocks) + align_up(params);
}

inline unsigned grid_for(std::int64_t work, int per_block) {
  return unsigned(std::clamp<std::int64_t>((work + per_block - 1) / per_block, 1, 1 << 20));
}

// Programmatic dependent launch needs compute capability 9.0 (CUDA C++
// Programming Guide, "Programmatic Dependent Launch and Synchronization").
// Asked once per device (per_device.hpp), so that a launch makes no
// attribute query.
inline bool has_programmatic_launch() {
  static PerDevice<bool> has;
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  return has.get(device, [](int d) {
    int major = 0;
    cuda_check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d), "cudaDeviceGetAttribute");
    return major >= 9;
  });
}

// The second pass as a programmatic dependent launch where the GPU has it: it
// may be scheduled once every block of block_partials has started (their
// griddepcontrol.launch_dependents) and waits in griddepcontrol.wait
// (tree_agent.cuh); elsewhere an ordinary launch after block_partials.
template <class R, class Next>
void launch_second_pass(const Launch& L, const typename R::Partial* partials, int count, const FinishArgs& args,
                        const typename R::Params* params, Sink<Next> sink) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(unsigned(L.config.threads));
  cfg.stream = L.stream;
  cfg.attrs = attr;
  cfg.numAttrs = has_programmatic_launch() ? 1 : 0;
  // The message is built only on failure (no string per launch).
  if (const cudaError_t e = cudaLaunchKernelEx(&cfg, second_pass<R, Next>, partials, count, args, params, sink);
      e != cudaSuccess)
    throw_cuda_error(e, "tree second pass launch");
}

// block_partials for reducer R, as F = first_pass_t<R, Elem> (its digits in
// shared memory where kernels/tree/tree_tuning.hpp says so). A kernel takes more than 48
// KB of dynamic shared memory only once it has opted in (CUDA C++
// Programming Guide, "Shared Memory"): done once per device, for
// kMaxThreads, so that no host call sits between a timed launch's events.
template <class R, bool Y, class Elem>
void launch_block_partials(const Launch& L, const Elem* x, const Elem* y, const typename R::Params* params,
                           typename R::Partial* partials) {
  using F = first_pass_t<R, Elem>;
  static_assert(std::is_same_v<typename F::Partial, typename R::Partial>, "the second pass reads R's partials");
  constexpr int regs = kLimbsRegisters<R, Elem>;
  constexpr auto kernel = [] {
    if constexpr (regs > 0) return block_partials_limbs<F, Y, Elem, regs>;
    else return block_partials<F, Y, false, Elem>;
  }();
  static_assert(first_pass_shared_bytes<F, Y, Elem>(kMaxThreads) <= 227 * 1024, "a block's shared memory (sm_90)");
  const std::size_t smem = first_pass_shared_bytes<F, Y, Elem>(L.config.threads);
  if constexpr (first_pass_shared_bytes<F, Y, Elem>(kMaxThreads) > 48 * 1024) {
    static PerDevice<bool> opted_in;
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    opted_in.get(device, [&](int) {
      cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(first_pass_shared_bytes<F, Y, Elem>(kMaxThreads))),
                 "tree first pass: shared memory for the digits");
      return true;
    });
  }
  kernel<<<L.config.blocks, L.config.threads, smem, L.stream>>>(x, y, L.problem.elements(), params, partials);
}

// One reducer's pass over the whole problem, its results into sink.
template <class R, class Next, class Elem>
void enqueue(const Launch& L, const FinishArgs& args, const typename R::Params* params, Sink<Next> sink) {
  constexpr bool Y = takes_y<R>::value;
  const auto* x = static_cast<const Elem*>(L.problem.x);
  const auto* y = static_cast<const Elem*>(L.problem.y);
  const int T = L.config.threads;
  auto* partials = static_cast<typename R::Partial*>(L.workspace.data);
  switch (L.problem.axis) {
    case Axis::all:
      if constexpr (is_atomic_capable<R>::value) {
        if (L.atomic) {
          cudaMemsetAsync(partials, 0, sizeof(typename R::Partial), L.stream);
          block_partials<R, Y, true><<<L.config.blocks, T, 0, L.stream>>>(x, y, L.problem.elements(), params,
                                                                           partials);
          launch_second_pass<R, Next>(L, partials, 1, args, params, sink);
          return;
        }
      }
      launch_block_partials<R, Y>(L, x, y, params, partials);
      launch_second_pass<R, Next>(L, partials, L.config.blocks, args, params, sink);
      return;
    case Axis::inner:
      inner_rows<R, Y, Next><<<grid_for(L.problem.rows, 1), T, 0, L.stream>>>(x, y, L.problem.rows, L.problem.cols,
                                                                             args, params, sink);
      return;
    case Axis::outer:
      outer_columns<R, Y, Next><<<grid_for(L.problem.cols, T), T, 0, L.stream>>>(x, y, L.problem.rows,
                                                                                 L.problem.cols, args, params, sink);
      return;
  }
}

template <class R, class Elem>
void run(const Launch& L) {
  const DeviceProblem& p = L.problem;
  const FinishArgs args{statistics_op(L.spec.op), L.spec.out, L.spec.sat, p.axis == Axis::all ? p.elements() : p.length(), p.eps};
  const Sink<void> out{L.out.values, L.out.unrounded, components(L.spec.op), L.typed, L.spec.out, L.spec.sat};
  typename R::Params* params = nullptr;
  if constexpr (R::passes == 2) {
    using F = typename R::First;
    FinishArgs first = args;
    first.op = R::first_op;
    const std::size_t partial = std::max(sizeof(typename R::Partial), sizeof(typename F::Partial));
    params = reinterpret_cast<typename R::Params*>(static_cast<char*>(L.workspace.data) +
                                                   align_up(partial * (p.axis == Axis::all ? L.config.blocks : 0)));
    enqueue<F, R, Elem>(L, first, nullptr, Sink<R>{params});
  }
  if (is_elementwise_output(L.spec.op)) {
    if constexpr (gathers_norm_statistics<R>::value) {
      // The statistics op's rows into the workspace, then the elements.
      const int c = components(args.op);
      double* stats = reinterpret_cast<double*>(static_cast<char*>(L.workspace.data) + workspace_for<R>(p, L.config));
      enqueue<R, void, Elem>(L, args, params, Sink<void>{stats + p.rows * c, stats, c});
      normalize_rows<typename R::value_t, Elem><<<grid_for(p.rows, 1), L.config.threads, 0, L.stream>>>(
          static_cast<const Elem*>(p.x), static_cast<const Elem*>(p.gamma), static_cast<const Elem*>(p.beta), p.rows,
          p.cols, L.spec.op, args, stats, c, L.out.values, L.out.unrounded);
      return;
    }
    throw std::logic_error("tree: the reducer table gave a normalisation a reducer without its statistics");
  }
  enqueue<R, void, Elem>(L, args, params, out);
}

// rmsnorm and layernorm keep their rows' statistics (unrounded, then rounded)
// after the reducer's workspace.
inline std::size_t statistics_bytes(const KernelSpec& s, const DeviceProblem& p) {
  if (!is_elementwise_output(s.op)) return 0;
  return align_up(2 * sizeof(double) * std::size_t(p.rows) * std::size_t(components(statistics_op(s.op))));
}

template <class Fmt>
std::size_t workspace_bytes_in(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  if (auto why = unsupported(s, p.axis)) throw std::invalid_argument(*why);
  const LaunchConfig rc = resolve(s, p, c);
  std::size_t b = 0;
  with_reducer<Fmt>(s.op, s.acc, [&](auto tag) { b = workspace_for<typename decltype(tag)::type>(p, rc); });
  return b + statistics_bytes(s, p);
}

template <class Fmt, class Elem>
void launch_in(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
               DeviceOutput out, void* typed, cudaStream_t stream, bool atomic) {
  if (auto why = unsupported(s, p.axis)) throw std::invalid_argument(*why);
  if (typed && is_elementwise_output(s.op))
    throw std::invalid_argument("tree: typed outputs are for reductions, not rmsnorm or layernorm");
  const Launch L{s, p, resolve(s, p, c), ws, out, typed, stream, atomic};
  if (ws.bytes < workspace_bytes_in<Fmt>(s, p, L.config))
    throw std::invalid_argument("tree: the workspace is smaller than tree_workspace_bytes()");
  with_reducer<Fmt>(s.op, s.acc, [&](auto tag) { run<typename decltype(tag)::type, Elem>(L); });
}

}  // namespace ulpscope::tree
