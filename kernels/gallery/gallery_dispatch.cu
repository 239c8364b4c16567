// The gallery's dispatch: check the request, lay out the workspace, and
// enqueue the passes of gallery_order.hpp's plan, then the finishing kernel.
#include "kernels/gallery/gallery_dispatch.hpp"

#include <stdexcept>

#include "kernels/cuda/device_shape.hpp"
#include "kernels/gallery/gallery_launch.hpp"
#include "kernels/gallery/gallery_model.hpp"
#include "kernels/gallery/gallery_order.hpp"

namespace ulpscope {
namespace {

constexpr std::size_t align_up(std::size_t b) { return (b + 255) / 256 * 256; }

struct Request {
  LaunchConfig config;
  gallery::Plan plan;
};

Request check(const KernelSpec& s, const DeviceProblem& p, LaunchConfig c) {
  if (!is_gallery(s.shape)) throw std::invalid_argument("not a gallery shape");
  if (auto why = gallery::unsupported(s, p.axis)) throw std::invalid_argument(*why);
  if (s.in != p.in) throw std::invalid_argument("gallery: the spec's input format differs from the problem's");
  if (c.blocks == 0) c = gallery::launch_configs(s, p.elements(), current_device_shape()).front();
  if (auto why = gallery::bad_config(c)) throw std::invalid_argument(*why);
  return {c, gallery::make_plan(s.shape, p.elements(), c.threads, c.blocks)};
}

// [partials of the first pass][partials of the second][the atomics' slot]:
// passes alternate between the two partial buffers.
std::size_t partial_bytes(const gallery::Plan& plan) {
  return plan.passes == 0 ? 0 : align_up(sizeof(float) * std::size_t(plan.pass[0].outputs));
}

}  // namespace

std::size_t gallery_workspace_bytes(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c) {
  return 2 * partial_bytes(check(s, p, c).plan) + 256;
}

void launch_gallery(const KernelSpec& s, const DeviceProblem& p, const LaunchConfig& c, DeviceWorkspace ws,
                    DeviceOutput out, cudaStream_t stream) {
  using namespace gallery;
  const Request r = check(s, p, c);
  if (ws.bytes < gallery_workspace_bytes(s, p, c))
    throw std::invalid_argument("gallery: the workspace is smaller than gallery_workspace_bytes()");
  const OpKind k = op_kind(s);
  const std::size_t half = partial_bytes(r.plan);
  char* base = static_cast<char*>(ws.data);
  float* partials[2] = {reinterpret_cast<float*>(base), reinterpret_cast<float*>(base + half)};
  void* slot = base + 2 * half;
  const bool atomic = s.shape == Shape::atomic_element || s.shape == Shape::atomic_shared;
  if (atomic) launch_reset_slot(k, slot, stream);
  const float* last = nullptr;
  for (int i = 0; i < r.plan.passes; ++i) {
    const PassLaunch L{s.shape, r.plan.pass[i], r.config.threads, i == 0 ? p.x : last, partials[i % 2], slot,
                       stream};
    if (i > 0 || s.in == Dtype::fp32) launch_pass_float(k, L);
    else if (s.in == Dtype::fp16) launch_pass_fp16(k, L);
    else launch_pass_bf16(k, L);
    last = partials[i % 2];
  }
  if (atomic) launch_finish_slot(k, slot, p.elements(), s.out, s.sat, out.values, out.unrounded, stream);
  else launch_finish(k, last, p.elements(), s.out, s.sat, out.values, out.unrounded, stream);
}

}  // namespace ulpscope
