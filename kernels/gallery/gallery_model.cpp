#include "kernels/gallery/gallery_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "kernels/gallery/gallery_ops.hpp"
#include "kernels/gallery/gallery_order.hpp"
#include "kernels/model/model_runner.hpp"
#include "kernels/model/tree_model.hpp"

namespace ulpscope::gallery {
namespace {

// The values one pass reads and the operation that combines them.
template <class O>
struct Values {
  const std::vector<float>& v;
  float at(std::int64_t i) const { return i < std::int64_t(v.size()) ? v[std::size_t(i)] : O::identity(); }
};

// v2/v3: slot t combines slot t+s while t < s, for s from T/2 down to `last`.
template <class O>
void sequential_steps(std::vector<float>& sm, int T, int last) {
  for (int s = T / 2; s >= last; s /= 2)
    for (int t = 0; t < s; ++t) sm[std::size_t(t)] = O::combine(sm[std::size_t(t)], sm[std::size_t(t + s)]);
}

// v4/v5's last warp: all 32 lanes read slots l and l+s, then all write slot l.
template <class O>
void last_warp(std::vector<float>& sm, int T) {
  float next[32];
  for (int s = T >= 64 ? 32 : 16; s > 0; s /= 2) {
    for (int l = 0; l < 32; ++l) next[l] = O::combine(sm[std::size_t(l)], sm[std::size_t(l + s)]);
    for (int l = 0; l < 32; ++l) sm[std::size_t(l)] = next[l];
  }
}

template <class O>
void unrolled_steps(std::vector<float>& sm, int T) {
  for (int s = T / 2; s > 32; s /= 2)
    for (int t = 0; t < s; ++t) sm[std::size_t(t)] = O::combine(sm[std::size_t(t)], sm[std::size_t(t + s)]);
  last_warp<O>(sm, T);
}

// v3-v5: thread t's first add during the load (NVIDIA's reduce3).
template <class O>
float pair(const Values<O>& in, std::int64_t i, int T, std::int64_t n) {
  float a = in.at(i);
  if (i + T < n) a = O::combine(a, in.at(i + T));
  return a;
}

template <class O>
std::vector<float> chunk_pass(Shape s, const std::vector<float>& x, const Pass& q, int T) {
  const Values<O> in{x};
  const std::int64_t n = q.count;
  std::vector<float> out(std::size_t(q.outputs));
  std::vector<float> sm(std::size_t(unrolled_slots(T)));
  for (std::int64_t b = 0; b < q.blocks; ++b) {
    const std::int64_t base = b * q.chunk;
    std::fill(sm.begin(), sm.end(), O::identity());
    const bool first_add = q.chunk == 2 * std::int64_t(T);
    for (int t = 0; t < T; ++t) sm[std::size_t(t)] = first_add ? pair(in, base + t, T, n) : in.at(base + t);
    switch (s) {
      case Shape::v1_interleaved:
        for (int st = 1; st < T; st *= 2)
          for (int t = 0; t < T; ++t)
            if (interleaved_active(t, st)) sm[std::size_t(t)] = O::combine(sm[std::size_t(t)], sm[std::size_t(t + st)]);
        out[std::size_t(b)] = sm[0];
        break;
      case Shape::v2_sequential:
      case Shape::v3_first_add:
        sequential_steps<O>(sm, T, 1);
        out[std::size_t(b)] = sm[0];
        break;
      case Shape::v4_unroll_last_warp:
      case Shape::v5_complete_unroll:
        unrolled_steps<O>(sm, T);
        out[std::size_t(b)] = sm[0];
        break;
      default:  // v5_shuffle, cg_reduce: the tree shape's block step
        out[std::size_t(b)] = model::block_reduce<O>(sm.data(), T);
        break;
    }
  }
  return out;
}

template <class O>
std::vector<float> v6_pass(const std::vector<float>& x, const Pass& q, int T) {
  std::vector<float> out(std::size_t(q.outputs));
  std::vector<float> sm(std::size_t(unrolled_slots(T)));
  const std::int64_t step = 2 * std::int64_t(T) * q.blocks;
  for (std::int64_t b = 0; b < q.blocks; ++b) {
    std::fill(sm.begin(), sm.end(), O::identity());
    for (int t = 0; t < T; ++t) {
      float v = O::identity();
      for (std::int64_t i = 2 * T * b + t; i < q.count; i += step) {
        v = O::combine(v, x[std::size_t(i)]);
        if (i + T < q.count) v = O::combine(v, x[std::size_t(i + T)]);
      }
      sm[std::size_t(t)] = v;
    }
    unrolled_steps<O>(sm, T);
    out[std::size_t(b)] = sm[0];
  }
  return out;
}

// Thread g's grid-stride chain from the identity.
template <class O>
float stride_chain(const std::vector<float>& x, std::int64_t g, std::int64_t step, std::int64_t n) {
  float v = O::identity();
  for (std::int64_t i = g; i < n; i += step) v = O::combine(v, x[std::size_t(i)]);
  return v;
}

template <class O>
std::vector<float> cluster_pass(const std::vector<float>& x, const Pass& q, int T) {
  std::vector<float> lanes(static_cast<std::size_t>(T)), totals(std::size_t(q.blocks)), out(std::size_t(q.outputs));
  const std::int64_t step = std::int64_t(T) * q.blocks;
  for (std::int64_t b = 0; b < q.blocks; ++b) {
    for (int t = 0; t < T; ++t) lanes[std::size_t(t)] = stride_chain<O>(x, b * T + t, step, q.count);
    totals[std::size_t(b)] = model::block_reduce<O>(lanes.data(), T);
  }
  for (std::int64_t c = 0; c < q.outputs; ++c) {
    float total = O::identity();
    for (int r = 0; r < kClusterSize; ++r) total = O::combine(total, totals[std::size_t(c * kClusterSize + r)]);
    out[std::size_t(c)] = total;
  }
  return out;
}

template <class O>
std::vector<float> two_stage_pass(const std::vector<float>& x, const Pass& q, int T) {
  std::vector<float> lanes(static_cast<std::size_t>(T)), out(std::size_t(q.outputs));
  for (std::int64_t b = 0; b < q.blocks; ++b) {
    const std::int64_t base = b * q.chunk;
    for (int t = 0; t < T; ++t) {
      float v = O::identity();
      for (std::int64_t k = 0;; ++k) {
        const std::int64_t e = two_stage_element(k, t, T, q.chunk);
        if (e < 0) break;
        if (base + e < q.count) v = O::combine(v, x[std::size_t(base + e)]);
      }
      lanes[std::size_t(t)] = v;
    }
    out[std::size_t(b)] = model::block_reduce<O>(lanes.data(), T);
  }
  return out;
}

// Fisher-Yates from splitmix64: the arrival order of atomics; seed 0 keeps
// index order.
void shuffle(std::vector<std::int64_t>& order, std::uint64_t seed) {
  if (seed == 0) return;
  std::uint64_t s = seed;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[splitmix64(s) % i]);
}

template <class O>
float atomic_element(const std::vector<float>& x, std::uint64_t seed) {
  std::vector<std::int64_t> order(x.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = std::int64_t(i);
  shuffle(order, seed);
  float acc = O::identity();  // the output reset to the identity before the launch
  for (std::int64_t i : order) acc = O::combine(acc, x[std::size_t(i)]);
  return acc;
}

template <class O>
float atomic_shared(const std::vector<float>& x, const Pass& q, int T, std::uint64_t seed) {
  const std::int64_t step = std::int64_t(T) * q.blocks;
  std::vector<std::int64_t> blocks(std::size_t(q.blocks));
  for (std::size_t b = 0; b < blocks.size(); ++b) blocks[b] = std::int64_t(b);
  shuffle(blocks, seed);
  float acc = O::identity();
  std::uint64_t block_seed = seed;
  for (std::int64_t b : blocks) {
    std::vector<std::int64_t> mine;
    for (std::int64_t base = b * T; base < q.count; base += step)
      for (std::int64_t i = base; i < std::min(base + T, q.count); ++i) mine.push_back(i);
    shuffle(mine, seed == 0 ? 0 : splitmix64(block_seed));
    float slot = O::identity();
    for (std::int64_t i : mine) slot = O::combine(slot, x[std::size_t(i)]);
    acc = O::combine(acc, slot);
  }
  return acc;
}

// The first pass reads the input in place; each later pass the one before's outputs.
template <class O>
float reduce(Shape s, const std::vector<float>& x, const LaunchConfig& cfg, std::uint64_t seed) {
  const Plan plan = make_plan(s, std::int64_t(x.size()), cfg.threads, cfg.blocks);
  const int T = cfg.threads;
  if (plan.passes == 0) return O::identity();
  std::vector<float> values;
  for (int k = 0; k < plan.passes; ++k) {
    const Pass& q = plan.pass[k];
    const std::vector<float>& in = k == 0 ? x : values;
    std::vector<float> next;
    switch (s) {
      case Shape::v6_multi_add: next = v6_pass<O>(in, q, T); break;
      case Shape::cluster: next = cluster_pass<O>(in, q, T); break;
      case Shape::two_stage: next = two_stage_pass<O>(in, q, T); break;
      case Shape::atomic_element: next = {atomic_element<O>(in, seed)}; break;
      case Shape::atomic_shared: next = {atomic_shared<O>(in, q, T, seed)}; break;
      default: next = chunk_pass<O>(s, in, q, T); break;
    }
    values = std::move(next);
  }
  return values.front();
}

template <class Fmt>
ReductionResult run_in(const KernelSpec& spec, const std::vector<float>& x, const LaunchConfig& cfg,
                       std::uint64_t seed) {
  ReductionResult r;
  const bool ok = with_op<Fmt>(spec.op, spec.acc, [&](auto tag) {
    using O = typename decltype(tag)::type;
    const Finished f = finish<O>(reduce<O>(spec.shape, x, cfg, seed), std::int64_t(x.size()), spec.out, spec.sat);
    r.values = {f.value[0]};
    r.unrounded = {f.unrounded[0]};
  });
  if (!ok) throw std::invalid_argument("the gallery has no kernel for this op and accumulator");
  return r;
}

}  // namespace

std::optional<std::string> unsupported(const KernelSpec& spec, Axis axis) {
  const std::string name(to_string(spec.shape));
  if (axis != Axis::all) return name + " reduces whole arrays (axis all), as the seeds' kernels do";
  if (spec.in != Dtype::fp32 && spec.in != Dtype::fp16 && spec.in != Dtype::bf16)
    return "the seed gallery takes fp32, fp16 and bf16 inputs";
  if (spec.op == Op::max) {
    if (spec.acc != Accumulator::fp32) return "max selects, it rounds nothing: one accumulator (fp32) stands for all";
    return std::nullopt;
  }
  if (spec.op != Op::sum) return "the seed gallery's kernels sum and take the max";
  if (spec.acc != Accumulator::naive && spec.acc != Accumulator::fp32)
    return "the seed gallery's sums keep the input's format (naive) or fp32";
  return std::nullopt;
}

std::vector<LaunchConfig> launch_configs(const KernelSpec&, std::int64_t, const DeviceShape& device) {
  // 512 programs is seed 001's cap.
  return {LaunchConfig{512, 256}, LaunchConfig{device.sm_count, 128}, LaunchConfig{1024, 512}, LaunchConfig{64, 64}};
}

std::optional<std::string> bad_config(const LaunchConfig& c) {
  if (c.threads < kMinThreads || c.threads > kMaxThreads || !is_pow2(c.threads))
    return "the gallery's kernels take a power of two of threads in 32..512 (sequential addressing halves the "
           "block)";
  if (c.blocks < 1) return "a launch needs at least one block";
  return std::nullopt;
}

ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& p, const LaunchConfig& cfg,
                          std::uint64_t seed) {
  if (auto why = gallery::unsupported(spec, p.axis)) throw std::invalid_argument(*why);
  if (auto why = bad_config(cfg)) throw std::invalid_argument(*why);
  // fp32 inputs are read in place, others from the caller's widened copy
  // when there is one (ReductionProblem::x_float).
  std::vector<float> own;
  const auto* f32 = std::get_if<std::vector<float>>(&p.x->data());
  const std::vector<float>& x = f32 != nullptr                                       ? *f32
                                : p.x_float != nullptr && p.x_float->size() == p.x->size() ? *p.x_float
                                                                                     : (own = p.x->to_floats());
  switch (spec.in) {
    case Dtype::fp32: return run_in<Fp32Format>(spec, x, cfg, seed);
    case Dtype::fp16: return run_in<Fp16Format>(spec, x, cfg, seed);
    case Dtype::bf16: return run_in<Bf16Format>(spec, x, cfg, seed);
    default: throw std::invalid_argument("the seed gallery takes fp32, fp16 and bf16 inputs");
  }
}

std::int64_t addition_depth(const KernelSpec& spec, std::int64_t length, const LaunchConfig& cfg) {
  return gallery::addition_depth(make_plan(spec.shape, length, cfg.threads, cfg.blocks));
}

}  // namespace ulpscope::gallery
