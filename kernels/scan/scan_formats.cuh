#pragma once
// One launcher per input format (scan_<format>.cu), so that the CUDA build
// compiles the formats' kernels in parallel, smaller units.
#include "kernels/accumulators/compensated_sum.hpp"
#include "kernels/accumulators/rounded_sum.hpp"
#include "kernels/scan/fixed_point_sum.hpp"
#include "kernels/scan/scan_dispatch.hpp"
#include "kernels/scan/scan_launch.cuh"
#include "kernels/scan/wide_fixed_point_sum.hpp"

namespace ulpscope::scan {

// Elem: the input's storage; Out: out_dtype's (the input format's default
// output: fp8 scans write fp32).
template <class Fmt, class Elem, class Out, class F>
void with_accumulator(Accumulator acc, F&& f) {
  switch (acc) {
    case Accumulator::naive: f.template operator()<NaiveSum<Fmt>, Elem, Out>(); return;
    case Accumulator::fp32: f.template operator()<Fp32Sum, Elem, Out>(); return;
    case Accumulator::fp64: f.template operator()<Fp64Sum, Elem, Out>(); return;
    case Accumulator::kahan: f.template operator()<KahanSum, Elem, Out>(); return;
    case Accumulator::exact:
      if constexpr (Fmt::bits == 16 && Fmt::exp_bits == 5) {
        f.template operator()<FixedPointSum<Fmt, Fp16Format>, Elem, Out>();
        return;
      } else if constexpr (Fmt::bits == 8) {
        f.template operator()<FixedPointSum<Fmt, Fp32Format>, Elem, Out>();
        return;
      } else {  // bf16 into bf16, fp32 into fp32
        f.template operator()<WideFixedPointSum<Fmt, Fmt>, Elem, Out>();
        return;
      }
    default: throw std::invalid_argument("scan: no GPU kernel for this accumulator");
  }
}

struct Launch {
  const KernelSpec& spec;
  const DeviceProblem& p;
  const LaunchConfig& cfg;
  DeviceWorkspace ws;
  void* out;
  bool as_double;  // the GPU backend's outputs: each rounded value widened to double
  cudaStream_t stream;
  template <class R, class Elem, class Out>
  void operator()() const {
    const std::int64_t lines = p.axis == Axis::all ? 1 : p.rows;
    const std::int64_t length = p.axis == Axis::all ? p.rows * p.cols : p.cols;
    const OutRounding r{spec.out, spec.sat};
    if (as_double)
      launch_scan_with<R>(spec.shape, static_cast<const Elem*>(p.x), static_cast<double*>(out), lines, length, cfg,
                          r, ws, stream);
    else
      launch_scan_with<R>(spec.shape, static_cast<const Elem*>(p.x), static_cast<Out*>(out), lines, length, cfg, r,
                          ws, stream);
  }
};

struct Workspace {
  const KernelSpec& spec;
  const DeviceProblem& p;
  const LaunchConfig& cfg;
  std::size_t* bytes;
  template <class R, class Elem, class Out>
  void operator()() const {
    const std::int64_t lines = p.axis == Axis::all ? 1 : p.rows;
    const std::int64_t length = p.axis == Axis::all ? p.rows * p.cols : p.cols;
    *bytes = workspace_bytes_for<R, Elem>(spec.shape, lines, length, cfg);
  }
};

#define ULPSCOPE_SCAN_FORMAT(name)                                                                         \
  std::size_t workspace_bytes_##name(const KernelSpec&, const DeviceProblem&, const LaunchConfig&);       \
  void launch_##name(const KernelSpec&, const DeviceProblem&, const LaunchConfig&, DeviceWorkspace, void*, \
                     bool as_double, cudaStream_t);
ULPSCOPE_SCAN_FORMAT(fp32)
ULPSCOPE_SCAN_FORMAT(fp16)
ULPSCOPE_SCAN_FORMAT(bf16)
ULPSCOPE_SCAN_FORMAT(fp8_e4m3)
ULPSCOPE_SCAN_FORMAT(fp8_e5m2)
#undef ULPSCOPE_SCAN_FORMAT

#define ULPSCOPE_SCAN_DEFINE(name, Fmt, Elem, Out)                                                          \
  std::size_t workspace_bytes_##name(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {   \
    std::size_t bytes = 0;                                                                                   \
    with_accumulator<Fmt, Elem, Out>(s.acc, Workspace{s, p, c, &bytes});                                     \
    return bytes;                                                                                            \
  }                                                                                                          \
  void launch_##name(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace w,  \
                     void* out, bool as_double, cudaStream_t stream) {                                       \
    with_accumulator<Fmt, Elem, Out>(s.acc, Launch{s, p, c, w, out, as_double, stream});                     \
  }

}  // namespace ulpscope::scan
