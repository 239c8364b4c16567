// GpuBackend on CUDA: device, stream, the uploaded problem, workspace and
// outputs; run, time and the yardsticks (docs/spec.md, "Metrics").
#include "kernels/gpu_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kernels/counter_rng.hpp"
#include "kernels/cuda/cccl_features.hpp"
#include "kernels/cuda/cub_shapes.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_problem.hpp"
#include "kernels/cuda/output_digest.hpp"
#include "kernels/cuda/permuted_copy.hpp"
#include "kernels/cuda/timing.hpp"
#include "kernels/model.hpp"
#include "kernels/scan/scan_dispatch.hpp"
#include "kernels/tree/tree_dispatch.hpp"
#include "kernels/gallery/gallery_dispatch.hpp"

namespace ulpscope {

namespace {

// A bit pattern no kernel writes (a negative NaN with every payload bit set;
// CUDA's own NaNs are 0x7FF8... or widened floats, 0x...E0000000): outputs are
// filled with it before each run so that an element left unwritten is caught
// (METHOD: "poison the output before each run").
constexpr std::uint64_t kPoison = ~std::uint64_t(0);

// Values that are not zeros for the yardsticks' inputs (METHOD: "never time
// on zeros"): uniform in [-1, 1) from splitmix64 (Steele, Lea, Flood 2014).
__global__ void fill_uniform(float* x, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t z = mix64(seed + std::uint64_t(i) * kGoldenGamma);
    x[i] = __fmul_rn(float(std::int32_t(z >> 40) - (1 << 23)), 1.0f / float(1 << 23));
  }
}

std::size_t align_up(std::size_t b) { return (b + 255) / 256 * 256; }

// The Timing of `reps` timed launches that each count bytes_per_run, rotating
// among `copies` buffers of copy_bytes each (docs/spec.md, "Metrics": throughput).
GpuBackend::Timing timing_of(const EventTimes& t, int reps, std::size_t bytes_per_run, int copies,
                             std::size_t copy_bytes, std::size_t l2_bytes) {
  GpuBackend::Timing r;
  r.median_ms = t.median();
  r.min_ms = t.min();
  r.max_ms = t.max();
  r.timed_runs = reps;
  r.bytes_per_run = bytes_per_run;
  r.gbps = double(bytes_per_run) / (r.median_ms * 1e-3) / 1e9;
  r.copies = copies;
  r.exceeds_l2 = std::size_t(copies) * copy_bytes > l2_bytes;
  return r;
}

std::string describe(const KernelSpec& s) {
  return std::string(to_string(s.shape)) + " " + std::string(to_string(s.op)) + " " +
         std::string(to_string(s.in)) + "->" + std::string(to_string(s.out)) + " acc " +
         std::string(to_string(s.acc));
}

}  // namespace

struct GpuBackend::Impl {
  DeviceInfo info;
  cudaStream_t stream = nullptr;

  bool uploaded = false;
  DeviceProblem problem;  // what run() and time() read: the view, or its permuted copy
  DeviceProblem viewed;   // the uploaded arrays as the last upload() or view_as() described them
  std::size_t x_bytes = 0, aux_bytes = 0;
  DeviceBuffer x, y, gamma, beta;
  // The host arrays whose copies the buffers hold (view_as copies no other).
  const TypedArray *host_x = nullptr, *host_y = nullptr, *host_gamma = nullptr, *host_beta = nullptr;
  DeviceBuffer px, py, pgamma, pbeta;  // the permuted copy
  // The permutation of a norm's columns that problem is read through, if it
  // is: its outputs go back to the positions it took them from.
  std::optional<ProblemPermutation> permuted_columns;
  DeviceBuffer check_scratch;  // check_outputs_on_device's totals

  DeviceBuffer workspace, values, unrounded;
  DeviceBuffer rotating;  // copies 1.. of x (and y) for time(); copy 0 is x itself
  int rotating_count = 1;
  std::size_t rotating_stride = 0;

  ~Impl() {
    if (stream != nullptr) cudaStreamDestroy(stream);
  }

  DeviceProblem problem_for(const KernelSpec& s) const {
    if (!uploaded) throw GpuError("GpuBackend: no problem uploaded");
    if (s.in != problem.in)
      throw GpuError(describe(s) + ": the uploaded problem holds " + std::string(to_string(problem.in)));
    DeviceProblem p = problem;
    p.op = s.op;
    if (takes_second_input(s.op) && p.y == nullptr)
      throw GpuError(describe(s) + ": the uploaded problem has no second input y");
    if (is_elementwise_output(s.op) && p.gamma == nullptr)
      throw GpuError(describe(s) + ": the uploaded problem has no gamma");
    if (s.op == Op::layernorm && p.beta == nullptr)
      throw GpuError(describe(s) + ": the uploaded problem has no beta");
    return p;
  }

  static std::size_t output_count(const DeviceProblem& p) {
    if (is_elementwise_output(p.op) || is_scan(p.op)) return std::size_t(p.elements());
    const std::int64_t r = p.axis == Axis::all ? 1 : p.reductions();
    return std::size_t(r) * std::size_t(components(p.op));
  }

  // The tree helper's dispatch reports bad requests as std::invalid_argument;
  // here every failure is a GpuError.
  template <class F>
  static auto as_gpu_error(const KernelSpec& s, F&& f) {
    try {
      return f();
    } catch (const std::invalid_argument& e) {
      throw GpuError(describe(s) + ": " + e.what());
    }
  }

  std::size_t workspace_bytes(const KernelSpec& s, const LaunchConfig& cfg, const DeviceProblem& p) const {
    if (is_scan(s.op)) return as_gpu_error(s, [&] { return scan::workspace_bytes(s, p, cfg); });
    switch (s.shape) {
      case Shape::cub:
      case Shape::cub_deterministic:
        (void)cfg;
        return cub_workspace_bytes(s, p);
      case Shape::tree:
        return as_gpu_error(s, [&] { return tree_workspace_bytes(s, p, cfg); });
      case Shape::atomic:
        return as_gpu_error(s, [&] { return atomic_workspace_bytes(s, p, cfg); });
      default:
        if (is_gallery(s.shape)) return as_gpu_error(s, [&] { return gallery_workspace_bytes(s, p, cfg); });
        throw GpuError(describe(s) + ": " + GpuBackend::shape_unavailable(s.shape).value_or("no GPU dispatch"));
    }
  }

  void launch(const KernelSpec& s, const LaunchConfig& cfg, const DeviceProblem& p, DeviceOutput out) {
    const DeviceWorkspace ws{workspace.data(), workspace.bytes()};
    if (is_scan(s.op)) {
      as_gpu_error(s, [&] { scan::launch_into(s, p, cfg, ws, out, stream); });
      return;
    }
    switch (s.shape) {
      case Shape::cub:
      case Shape::cub_deterministic:
        launch_cub(s, p, ws, out, stream);
        break;
      case Shape::tree:
        as_gpu_error(s, [&] { launch_tree(s, p, cfg, ws, out, stream); });
        break;
      case Shape::atomic:
        as_gpu_error(s, [&] { launch_atomic(s, p, cfg, ws, out, stream); });
        break;
      default:
        (void)cfg;
        if (is_gallery(s.shape)) {
          as_gpu_error(s, [&] { launch_gallery(s, p, cfg, ws, out, stream); });
          break;
        }
        throw GpuError(describe(s) + ": " + GpuBackend::shape_unavailable(s.shape).value_or("no GPU dispatch"));
    }
  }

  // Copies 1.. of x (and y) for timed launches, so that the launches rotate
  // among inputs whose total exceeds L2: [x1 .. x_{c-1}][y1 .. y_{c-1}].
  // Returns how many copies (x itself included) are in use.
  int rotate_inputs(std::size_t rotated) {
    const int copies = rotating_copies(rotated, info.l2_bytes);
    const std::size_t stride = align_up(x_bytes);
    if (copies > 1 && (rotating_count < copies || rotating_stride != stride || rotating.data() == nullptr)) {
      const std::size_t extra = std::size_t(copies - 1) * stride * (y.data() ? 2 : 1);
      rotating = DeviceBuffer();
      rotating_count = 1;
      rotating.reserve(extra, "the rotating input copies (" + std::to_string(copies) + " copies, above L2)");
      char* base = rotating.as<char>();
      for (int k = 1; k < copies; ++k) {
        cuda_check(cudaMemcpyAsync(base + std::size_t(k - 1) * stride, x.data(), x_bytes, cudaMemcpyDeviceToDevice,
                                   stream),
                   "filling the rotating copies");
        if (y.data())
          cuda_check(cudaMemcpyAsync(base + std::size_t(copies - 1 + k - 1) * stride, y.data(), x_bytes,
                                     cudaMemcpyDeviceToDevice, stream),
                     "filling the rotating copies");
      }
      rotating_count = copies;
      rotating_stride = stride;
    }
    return std::min(copies, rotating_count);
  }

  // p reading copy i % used of x (and y); copy 0 is the upload itself.
  DeviceProblem rotated(DeviceProblem p, int i, int used) const {
    const int k = i % used;
    if (k > 0) {
      const char* base = rotating.as<char>();
      p.x = base + std::size_t(k - 1) * rotating_stride;
      if (p.y != nullptr) p.y = base + std::size_t(rotating_count - 1 + k - 1) * rotating_stride;
    }
    return p;
  }

  Timing timing(const EventTimes& t, int reps, std::size_t rotated, int used) const {
    return timing_of(t, reps, rotated + aux_bytes, used, rotated, info.l2_bytes);
  }

  static UploadedArrays arrays(const DeviceProblem& p) {
    return UploadedArrays{p.in, p.axis, p.rows, p.cols, p.eps, p.x, p.y, p.gamma, p.beta};
  }

  // Workspace and outputs for one kernel on the uploaded problem.
  DeviceOutput prepare(const KernelSpec& s, const LaunchConfig& cfg, const DeviceProblem& p) {
    if (auto why = GpuBackend::unavailable(s, p.axis)) throw GpuError(describe(s) + ": " + *why);
    workspace.reserve(workspace_bytes(s, cfg, p), "the workspace of " + describe(s));
    const std::size_t count = output_count(p);
    values.reserve(count * sizeof(double), "the outputs");
    unrounded.reserve(count * sizeof(double), "the unrounded outputs");
    return DeviceOutput{values.as<double>(), unrounded.as<double>(), count};
  }
};

GpuBackend::GpuBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuBackend::~GpuBackend() = default;

std::unique_ptr<GpuBackend> GpuBackend::open(std::string* why_not) {
  auto fail = [&](const std::string& why) -> std::unique_ptr<GpuBackend> {
    if (why_not != nullptr) *why_not = why;
    return nullptr;
  };
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return fail(std::string("no CUDA device: cudaGetDeviceCount says ") + cudaGetErrorName(e) + " (" +
                cudaGetErrorString(e) + ")");
  if (count == 0) return fail("no CUDA device: none is present");
  try {
    auto impl = std::make_unique<Impl>();
    cuda_check(cudaSetDevice(0), "cudaSetDevice(0)");
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    impl->info.name = prop.name;
    impl->info.sm_count = prop.multiProcessorCount;
    impl->info.registers_per_sm = prop.regsPerMultiprocessor;
    impl->info.l2_bytes = std::size_t(prop.l2CacheSize);
    impl->info.memory_bytes = prop.totalGlobalMem;
    impl->info.cc_major = prop.major;
    impl->info.cc_minor = prop.minor;
    impl->info.cccl_version = ULPSCOPE_CCCL_VERSION_STRING;
    cuda_check(cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    // cub_deterministic takes its temporary storage with cudaMallocAsync from
    // the device's default pool; keep what it frees in the pool, so that
    // timed runs do not return memory to the driver at every synchronisation
    // (CUDA Programming Guide, "Stream Ordered Memory Allocator",
    // cudaMemPoolAttrReleaseThreshold).
    cudaMemPool_t pool = nullptr;
    cuda_check(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool");
    std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
    cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
               "cudaMemPoolSetAttribute(release threshold)");
    return std::unique_ptr<GpuBackend>(new GpuBackend(std::move(impl)));
  } catch (const GpuError& e) {
    return fail(std::string("CUDA device present but unusable: ") + e.what());
  }
}

const DeviceInfo& GpuBackend::info() const { return impl_->info; }

std::size_t GpuBackend::free_memory_bytes() const {
  std::size_t free = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

void GpuBackend::upload(const ReductionProblem& rp) {
  Impl& m = *impl_;
  m.uploaded = false;
  m.host_x = m.host_y = m.host_gamma = m.host_beta = nullptr;
  view_as(rp);
}

void GpuBackend::view_as(const ReductionProblem& rp) {
  Impl& m = *impl_;
  if (rp.x == nullptr) throw GpuError("upload: the problem has no input x");
  if (rp.rows < 0 || rp.cols < 0) throw GpuError("upload: negative shape");
  const std::int64_t n = rp.rows * rp.cols;
  if (std::int64_t(rp.x->size()) != n)
    throw GpuError("upload: x holds " + std::to_string(rp.x->size()) + " values for a [" +
                   std::to_string(rp.rows) + ", " + std::to_string(rp.cols) + "] problem");
  auto same_as_x = [&](const TypedArray* a, std::int64_t size, const char* name) {
    if (a == nullptr) return;
    if (a->dtype() != rp.x->dtype()) throw GpuError(std::string("upload: ") + name + " is not in x's format");
    if (std::int64_t(a->size()) != size)
      throw GpuError(std::string("upload: ") + name + " holds " + std::to_string(a->size()) + " values, expected " +
                     std::to_string(size));
  };
  same_as_x(rp.y, n, "y");
  same_as_x(rp.gamma, rp.cols, "gamma");
  same_as_x(rp.beta, rp.cols, "beta");

  // Arrays already on the device (the same host array, uploaded before) are
  // not copied again: every op of one input reads one upload.
  bool copied = false;
  auto put = [&](DeviceBuffer& buf, const TypedArray*& on_device, const TypedArray* a,
                 const char* name) -> const void* {
    if (a == nullptr) return nullptr;
    if (a == on_device) return buf.data();
    on_device = nullptr;
    buf.reserve(a->bytes(), std::string("the input ") + name);
    // On the backend's stream: a plain cudaMemcpy from pageable memory may
    // return before its DMA lands, and this non-blocking stream would not
    // wait for it (CUDA Runtime API, "API synchronization behavior").
    cuda_check(cudaMemcpyAsync(buf.data(), a->raw(), a->bytes(), cudaMemcpyHostToDevice, m.stream),
               std::string("upload of ") + name);
    on_device = a;
    copied = true;
    return buf.data();
  };
  const TypedArray* const old_x = m.host_x;
  const TypedArray* const old_y = m.host_y;
  DeviceProblem p;
  p.op = rp.op;
  p.axis = rp.axis;
  p.in = rp.x->dtype();
  // Whole-array ops see [1, n] (kernels/reduction.hpp).
  p.rows = rp.axis == Axis::all ? 1 : rp.rows;
  p.cols = rp.axis == Axis::all ? n : rp.cols;
  p.eps = rp.eps;
  p.x = put(m.x, m.host_x, rp.x, "x");
  p.y = put(m.y, m.host_y, rp.y, "y");
  p.gamma = put(m.gamma, m.host_gamma, rp.gamma, "gamma");
  p.beta = put(m.beta, m.host_beta, rp.beta, "beta");
  if (m.host_x != old_x || m.host_y != old_y) {  // the timed copies of x and y are stale
    m.rotating = DeviceBuffer();
    m.rotating_count = 1;
  }
  if (copied) cuda_check(cudaStreamSynchronize(m.stream), "upload");
  m.x_bytes = rp.x->bytes();
  m.aux_bytes = (rp.gamma ? rp.gamma->bytes() : 0) + (rp.beta ? rp.beta->bytes() : 0);
  m.problem = m.viewed = p;
  m.uploaded = true;
}

void GpuBackend::use_permutation(std::optional<std::uint64_t> seed) {
  Impl& m = *impl_;
  if (!m.uploaded) throw GpuError("use_permutation: no problem uploaded");
  const DeviceProblem& v = m.viewed;
  m.problem = v;
  m.permuted_columns.reset();
  if (!seed) return;
  const bool columns = is_elementwise_output(v.op);
  const ProblemPermutation perm(v.axis, columns, v.rows, v.cols, *seed);
  if (columns) m.permuted_columns = perm;
  const std::size_t width = std::size_t(format_info(v.in).bits / 8);
  auto copy = [&](const void* src, DeviceBuffer& dst, std::int64_t count, bool by_column) -> const void* {
    if (src == nullptr) return nullptr;
    dst.reserve(std::size_t(count) * width, "a permuted copy of the input");
    if (by_column) launch_column_permuted_copy(src, dst.data(), width, count, perm, m.stream);
    else launch_permuted_copy(src, dst.data(), width, count, perm, m.stream);
    return dst.data();
  };
  m.problem.x = copy(v.x, m.px, v.elements(), false);
  m.problem.y = copy(v.y, m.py, v.elements(), false);
  if (columns) {
    m.problem.gamma = copy(v.gamma, m.pgamma, v.cols, true);
    m.problem.beta = copy(v.beta, m.pbeta, v.cols, true);
  }
  cuda_check(cudaStreamSynchronize(m.stream), "the permuted copy");
}

ReductionResult GpuBackend::run(const KernelSpec& s, const LaunchConfig& cfg) {
  return run_digested(s, cfg, nullptr, 0).copied;
}

GpuBackend::DigestedRun GpuBackend::run_digested(const KernelSpec& s, const LaunchConfig& cfg,
                                                 const std::vector<std::int64_t>* rows, std::int64_t cols) {
  Impl& m = *impl_;
  const DeviceProblem p = m.problem_for(s);
  const DeviceOutput out = m.prepare(s, cfg, p);
  const std::string what = describe(s);
  cuda_check(cudaMemsetAsync(out.values, 0xFF, out.count * sizeof(double), m.stream), "poisoning the outputs");
  cuda_check(cudaMemsetAsync(out.unrounded, 0xFF, out.count * sizeof(double), m.stream), "poisoning the outputs");
  m.launch(s, cfg, p, out);
  check_launch(what);
  cuda_check(cudaStreamSynchronize(m.stream), what);

  m.check_scratch.reserve(4 * sizeof(std::uint64_t), "the output check");
  const bool permuted = m.permuted_columns && is_elementwise_output(s.op);
  const DeviceOutputCheck check =
      check_outputs_on_device(out.values, out.unrounded, out.count, kPoison, permuted ? &*m.permuted_columns : nullptr,
                              m.check_scratch.as<std::uint64_t>(), m.stream);
  if (check.unwritten_values != 0)
    throw GpuError(what + " left output " + std::to_string(check.first_unwritten_value) + " of " +
                   std::to_string(out.count) + " unwritten");
  // An accumulator without an unrounded value writes none of them.
  const bool has_unrounded = check.unwritten_unrounded == 0;
  if (!has_unrounded && check.unwritten_unrounded != out.count)
    throw GpuError(what + " wrote only part of its unrounded outputs");

  DigestedRun r;
  r.digest = check.digest;
  auto copy = [&](const double* from, std::vector<double>& into) {
    if (rows == nullptr) {
      into.resize(out.count);
      cuda_check(cudaMemcpy(into.data(), from, out.count * sizeof(double), cudaMemcpyDeviceToHost),
                 "copying the outputs back");
      return;
    }
    const std::size_t width = std::size_t(cols);
    into.resize(rows->size() * width);
    for (std::size_t k = 0; k < rows->size(); ++k) {
      const std::int64_t row = (*rows)[k];
      if (row < 0 || cols <= 0 || std::size_t(row + 1) * width > out.count)
        throw GpuError(what + ": row " + std::to_string(row) + " is outside the outputs");
      cuda_check(cudaMemcpyAsync(into.data() + k * width, from + std::size_t(row) * width, width * sizeof(double),
                                 cudaMemcpyDeviceToHost, m.stream),
                 "copying the outputs back");
    }
    cuda_check(cudaStreamSynchronize(m.stream), "copying the outputs back");
  };
  copy(out.values, r.copied.values);
  if (has_unrounded) copy(out.unrounded, r.copied.unrounded);
  return r;
}

GpuBackend::Timing GpuBackend::time(const KernelSpec& s, const LaunchConfig& cfg, int warmup, int reps) {
  Impl& m = *impl_;
  const DeviceProblem p = m.problem_for(s);
  const DeviceOutput out = m.prepare(s, cfg, p);
  const std::size_t rotated = m.x_bytes * (takes_second_input(s.op) ? 2 : 1);
  const int used = m.rotate_inputs(rotated);
  auto launch = [&](int i) { m.launch(s, cfg, m.rotated(p, i, used), out); };
  const EventTimes t = time_launches(m.stream, warmup, reps, launch, describe(s));
  return m.timing(t, reps, rotated, used);
}

std::vector<unsigned char> GpuBackend::run_launch(const Launch& launch, std::size_t out_bytes,
                                                  const std::string& what) {
  Impl& m = *impl_;
  if (!m.uploaded) throw GpuError(what + ": no problem uploaded");
  m.values.reserve(std::max<std::size_t>(out_bytes, 1), "the outputs of " + what);
  cuda_check(cudaMemsetAsync(m.values.data(), 0xFF, out_bytes, m.stream), "poisoning the outputs");
  launch(m.arrays(m.problem), m.values.data(), m.stream);
  check_launch(what);
  cuda_check(cudaStreamSynchronize(m.stream), what);
  std::vector<unsigned char> bytes(out_bytes);
  cuda_check(cudaMemcpy(bytes.data(), m.values.data(), out_bytes, cudaMemcpyDeviceToHost),
             "copying the outputs of " + what + " back");
  return bytes;
}

GpuBackend::Timing GpuBackend::time_launch(const Launch& launch, std::size_t out_bytes, bool reads_y, int warmup,
                                           int reps, const std::string& what) {
  Impl& m = *impl_;
  if (!m.uploaded) throw GpuError(what + ": no problem uploaded");
  if (reads_y && m.problem.y == nullptr) throw GpuError(what + ": the uploaded problem has no second input y");
  m.values.reserve(std::max<std::size_t>(out_bytes, 1), "the outputs of " + what);
  const std::size_t rotated = m.x_bytes * (reads_y ? 2 : 1);
  const int used = m.rotate_inputs(rotated);
  auto one = [&](int i) { launch(m.arrays(m.rotated(m.problem, i, used)), m.values.data(), m.stream); };
  const EventTimes t = time_launches(m.stream, warmup, reps, one, what);
  return m.timing(t, reps, rotated, used);
}

GpuBackend::Timing GpuBackend::time_cub_sum_fp32(std::int64_t n, int warmup, int reps) {
  Impl& m = *impl_;
  if (n < 0) throw GpuError("cub::DeviceReduce::Sum yardstick: negative n");
  const std::size_t bytes = std::size_t(n) * sizeof(float);
  const int copies = rotating_copies(bytes, m.info.l2_bytes);
  const std::size_t stride = align_up(bytes);
  DeviceBuffer x(std::size_t(copies) * stride, "the cub::DeviceReduce::Sum yardstick's " +
                                                   std::to_string(copies) + " input copies");
  DeviceBuffer sum(sizeof(float), "the yardstick's output");
  DeviceBuffer temp(cub_sum_fp32_workspace_bytes(n), "cub::DeviceReduce::Sum's temporary storage");
  for (int k = 0; k < copies && n > 0; ++k) {
    fill_uniform<<<m.info.sm_count * 4, 256, 0, m.stream>>>(
        reinterpret_cast<float*>(x.as<char>() + std::size_t(k) * stride), n, 0x5eed0000u + std::uint64_t(k));
    check_launch("fill_uniform");
  }
  auto launch = [&](int i) {
    const float* in = reinterpret_cast<const float*>(x.as<char>() + std::size_t(i % copies) * stride);
    launch_cub_sum_fp32(in, n, sum.as<float>(), DeviceWorkspace{temp.data(), temp.bytes()}, m.stream);
  };
  const EventTimes t = time_launches(m.stream, warmup, reps, launch, "cub::DeviceReduce::Sum fp32");
  return timing_of(t, reps, bytes, copies, bytes, m.info.l2_bytes);
}

GpuBackend::Timing GpuBackend::time_copy(std::size_t bytes, int warmup, int reps) {
  Impl& m = *impl_;
  const int copies = rotating_copies(bytes, m.info.l2_bytes);
  const std::size_t stride = align_up(bytes);
  DeviceBuffer src(std::size_t(copies) * stride, "the copy yardstick's " + std::to_string(copies) + " sources");
  DeviceBuffer dst(bytes, "the copy yardstick's destination");
  const auto floats = std::int64_t(src.bytes() / sizeof(float));
  fill_uniform<<<m.info.sm_count * 4, 256, 0, m.stream>>>(src.as<float>(), floats, 0xc0b1u);
  check_launch("fill_uniform");
  auto launch = [&](int i) {
    cuda_check(cudaMemcpyAsync(dst.data(), src.as<char>() + std::size_t(i % copies) * stride, bytes,
                               cudaMemcpyDeviceToDevice, m.stream),
               "cudaMemcpyAsync device to device");
  };
  const EventTimes t = time_launches(m.stream, warmup, reps, launch, "device-to-device copy");
  // Read and written (METHOD: "counting bytes read plus bytes written").
  return timing_of(t, reps, 2 * bytes, copies, bytes, m.info.l2_bytes);
}

std::optional<std::string> GpuBackend::shape_unavailable(Shape s) {
  switch (s) {
    case Shape::serial:
      return std::string("serial is a CPU shape (one running value in index order)");
    case Shape::cub:
      return std::nullopt;
    case Shape::cub_deterministic:
      if (ULPSCOPE_HAVE_CUB_DETERMINISTIC) return std::nullopt;
      return std::string(ULPSCOPE_CUB_DETERMINISTIC_MISSING);
    case Shape::tree:
    case Shape::atomic:
      return std::nullopt;
    default:
      break;
  }
  if (is_scan_shape(s)) return std::nullopt;  // kernels/scan: which specs, scan::gpu_unavailable
  if (is_gallery(s)) return std::nullopt;
  return std::string("unknown shape");
}

std::optional<std::string> GpuBackend::unavailable(const KernelSpec& s, Axis axis) {
  if (is_scan(s.op) || is_scan_shape(s.shape)) return scan::gpu_unavailable(s, axis);
  if (auto why = shape_unavailable(s.shape)) return why;
  if (s.shape == Shape::cub || s.shape == Shape::cub_deterministic) return cub_unavailable(s, axis);
  return unsupported(s, axis);  // tree and atomic: the same combinations as their CPU models
}

}  // namespace ulpscope
