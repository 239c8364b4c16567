#include "accuracy/kernel_under_test.hpp"

#include "accuracy/error_bound.hpp"

namespace ulpscope::matrix {

decltype(KernelUnderTest::bound_ratio) bound_ratio_for(const KernelSpec& spec, const LaunchConfig& cfg) {
  if (is_scan(spec.op)) return {};  // docs/spec.md defines no bound per prefix
  return [spec, cfg](const ProblemReference& ref, const ReductionProblem& q, const ReductionResult& res,
                     std::size_t i) {
    const std::int64_t depth = addition_depth(spec, q.axis, q.length(), cfg);
    return ref.bound_ratio(spec, q, depth, res.values[i], i);
  };
}

KernelArgs kernel_args(const UserKernel& u, const GpuBackend::UploadedArrays& a, void* out, const LaunchConfig& cfg) {
  KernelArgs k;
  k.op = u.op;
  k.axis = a.axis;
  k.in_dtype = u.in;
  k.out_dtype = u.out;
  k.rows = a.rows;
  k.cols = a.cols;
  k.x = a.x;
  k.y = a.y;
  k.gamma = a.gamma;
  k.beta = a.beta;
  k.eps = a.eps;
  k.out = out;
  k.config = cfg;
  return k;
}

GpuBackend::UploadedArrays host_arrays(const ReductionProblem& p) {
  auto raw = [](const TypedArray* t) { return t ? t->raw() : nullptr; };
  const bool all = p.axis == Axis::all;
  return GpuBackend::UploadedArrays{p.x ? p.x->dtype() : Dtype::fp32, p.axis, all ? 1 : p.rows,
                                    all ? p.rows * p.cols : p.cols, p.eps, raw(p.x), raw(p.y), raw(p.gamma),
                                    raw(p.beta)};
}


GpuBackend::Launch user_launch(const UserKernel& u, const LaunchConfig& cfg) {
  return [&u, cfg](const GpuBackend::UploadedArrays& a, void* out, void* stream) {
    u.run_device(kernel_args(u, a, out, cfg), stream);
  };
}

}  // namespace ulpscope::matrix
