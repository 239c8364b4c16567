#include "kernels/scan/scan_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "formats/binary_format.hpp"
#include "kernels/out_format.hpp"
#include "kernels/accumulators/compensated_sum.hpp"
#include "kernels/accumulators/rounded_sum.hpp"
#include "kernels/scan/fixed_point_sum.hpp"
#include "kernels/scan/scan_order.hpp"
#include "kernels/scan/wide_fixed_point_sum.hpp"
#include "reference/exact_prefix.hpp"

namespace ulpscope::scan {
namespace {

// K of the input format (ScanPolicy), as the kernels take it from their
// element type.
int items_per_thread(const KernelSpec& spec) {
  return ScanPolicy::items_per_thread(format_info(spec.in).bits / 8);
}

std::string name(Shape s) { return std::string(to_string(s)); }

bool scans(Shape s) { return s == Shape::serial || s == Shape::cub || is_scan_shape(s); }

bool power_of_two(int t) { return t > 0 && (t & (t - 1)) == 0; }

// A partial of R that may be empty (no tile before, no thread before).
template <class R>
struct Maybe {
  typename R::Partial p{};
  bool has = false;
};

template <class R>
typename R::Partial merged(typename R::Partial a, const typename R::Partial& b) {
  R::merge(a, b);
  return a;
}

template <class R>
typename R::Partial then(const Maybe<R>& first, const typename R::Partial& second) {
  return first.has ? merged<R>(first.p, second) : second;
}

// Writes one line's outputs: value (rounded to out) and the running value.
struct LineOut {
  double* values;
  double* unrounded;
  Dtype out;
  Saturation sat;
  void put(std::int64_t i, double running) const {
    unrounded[i] = running;
    values[i] = round_to_out(running, out, sat);
  }
};

// One tile of a line in the tile order: step 1 (each thread folds its K
// elements), step 2 (the shape's block scan), step 3 (each thread rescans
// from merge(carry, exclusive)); returns the tile's aggregate A (the last
// thread's inclusive value) and writes the outputs when `out` is given.
template <class R>
typename R::Partial scan_tile(Shape shape, const TileOrder& o, std::int64_t tile, const float* x,
                              const Maybe<R>& carry, const LineOut* out) {
  using P = typename R::Partial;
  const int T = o.threads;
  std::vector<P> v(std::size_t(T), R::identity()), exclusive(std::size_t(T), R::identity());
  std::vector<P> warp_totals(std::size_t(T / kWarpSize), R::identity());
  std::vector<char> has(std::size_t(T), 0);
  for (int t = 0; t < T; ++t) {
    auto st = R::start();
    const std::int64_t first = o.first(tile, t);
    for (int j = 0; j < o.items(tile, t); ++j) R::add(st, R::term(x[first + j]));
    v[std::size_t(t)] = R::partial(st);
  }
  auto merge = [](const P& a, const P& b) { return merged<R>(a, b); };
  bool* has_exclusive = reinterpret_cast<bool*>(has.data());
  if (shape == Shape::block) brent_kung_block_scan(v.data(), exclusive.data(), has_exclusive, T, merge);
  else warp_block_scan(v.data(), warp_totals.data(), exclusive.data(), has_exclusive, T, merge);
  if (out != nullptr) {
    for (int t = 0; t < T; ++t) {
      Maybe<R> seed = carry;
      if (has[std::size_t(t)]) seed = {then<R>(carry, exclusive[std::size_t(t)]), true};
      // The running state starts as the seed (a partial is a state for every
      // accumulator scanned here) or empty.
      auto st = seed.has ? seed.p : R::start();
      const std::int64_t first = o.first(tile, t);
      for (int j = 0; j < o.items(tile, t); ++j) {
        R::add(st, R::term(x[first + j]));
        out->put(first + j, double(R::total(R::partial(st))));
      }
    }
  }
  return v[std::size_t(T - 1)];
}

// The tiles of a line in order, one carry chained through them (warp,
// block; reduce_then_scan's third phase over one block's run of tiles).
template <class R>
Maybe<R> scan_tiles(Shape shape, const TileOrder& o, std::int64_t begin, std::int64_t end, const float* x,
                    Maybe<R> carry, const LineOut* out) {
  for (std::int64_t k = begin; k < end; ++k) carry = {then<R>(carry, scan_tile<R>(shape, o, k, x, carry, out)), true};
  return carry;
}

template <class R>
void scan_line(const KernelSpec& spec, const LaunchConfig& cfg, const float* x, std::int64_t length,
               const LineOut& out) {
  using P = typename R::Partial;
  if (spec.shape == Shape::serial) {
    auto st = R::start();
    for (std::int64_t i = 0; i < length; ++i) {
      R::add(st, R::term(x[i]));
      out.put(i, double(R::total(R::partial(st))));
    }
    return;
  }
  const TileOrder o{length, cfg.threads, items_per_thread(spec)};
  const std::int64_t tiles = o.tiles();
  switch (spec.shape) {
    case Shape::warp:
    case Shape::block: scan_tiles<R>(spec.shape, o, 0, tiles, x, Maybe<R>{}, &out); return;
    case Shape::reduce_then_scan: {
      const std::int64_t per = tiles_per_block(tiles, cfg.blocks);
      // Phase 1: each block folds its tiles' aggregates in order.
      std::vector<Maybe<R>> sums;
      for (std::int64_t b = 0; b * per < tiles; ++b) {
        Maybe<R> s;
        for (std::int64_t k = b * per; k < std::min(tiles, (b + 1) * per); ++k)
          s = {then<R>(s, scan_tile<R>(Shape::warp, o, k, x, Maybe<R>{}, nullptr)), true};
        sums.push_back(s);
      }
      // Phase 2: one block scans the block sums serially (exclusive).
      // Phase 3: each block rescans its run with that carry.
      Maybe<R> carry;
      for (std::size_t b = 0; b < sums.size(); ++b) {
        scan_tiles<R>(Shape::warp, o, std::int64_t(b) * per, std::min(tiles, std::int64_t(b + 1) * per), x, carry,
                      &out);
        carry = {then<R>(carry, sums[b].p), true};
      }
      return;
    }
    case Shape::lookback: {
      std::vector<P> aggregate, inclusive;
      for (std::int64_t k = 0; k < tiles; ++k) {
        Maybe<R> carry;
        if (k > 0) {
          std::vector<P> window(std::size_t(kLookbackWindow), R::identity());
          if (k < kLookbackWindow) {
            for (std::int64_t j = 0; j < k; ++j) window[std::size_t(j)] = aggregate[std::size_t(j)];
          } else {
            window[0] = inclusive[std::size_t(k - kLookbackWindow)];
            for (int j = 1; j < kLookbackWindow; ++j)
              window[std::size_t(j)] = aggregate[std::size_t(k - kLookbackWindow + j)];
          }
          carry = {lookback_window_reduce(window.data(), [](const P& a, const P& b) { return merged<R>(a, b); }),
                   true};
        }
        const P a = scan_tile<R>(Shape::warp, o, k, x, carry, &out);
        aggregate.push_back(a);
        inclusive.push_back(then<R>(carry, a));
      }
      return;
    }
    default: throw std::invalid_argument("no scan model for shape " + name(spec.shape));
  }
}

// R, the scan's accumulator for spec on inputs of format F, the kernels' own
// (scan_formats.cuh), passed to each as std::type_identity<R>.
template <class F, class Each>
void with_scan_accumulator(const KernelSpec& spec, Each&& each) {
  if (spec.acc == Accumulator::exact) {
    // The kernel's own integer: fp16 into fp16, fp8 into fp32 (fixed_point_sum.hpp);
    // bf16 into bf16, fp32 into fp32 (wide_fixed_point_sum.hpp).
    if constexpr (F::bits == 16 && F::exp_bits == 5) each(std::type_identity<FixedPointSum<F, Fp16Format>>{});
    else if constexpr (F::bits == 8) each(std::type_identity<FixedPointSum<F, Fp32Format>>{});
    else each(std::type_identity<WideFixedPointSum<F, F>>{});
    return;
  }
  switch (spec.acc) {
    case Accumulator::naive: each(std::type_identity<NaiveSum<F>>{}); return;
    case Accumulator::fp32: each(std::type_identity<Fp32Sum>{}); return;
    case Accumulator::fp64: each(std::type_identity<Fp64Sum>{}); return;
    case Accumulator::kahan: each(std::type_identity<KahanSum>{}); return;
    default: throw std::invalid_argument("no running scan for this accumulator");
  }
}

// The input format of `in` passed to each as std::type_identity<F>.
template <class Each>
void with_input_format(Dtype in, Each&& each) {
  switch (in) {
    case Dtype::fp32: each(std::type_identity<Fp32Format>{}); return;
    case Dtype::fp16: each(std::type_identity<Fp16Format>{}); return;
    case Dtype::bf16: each(std::type_identity<Bf16Format>{}); return;
    case Dtype::fp8_e4m3: each(std::type_identity<Fp8E4M3Format>{}); return;
    case Dtype::fp8_e5m2: each(std::type_identity<Fp8E5M2Format>{}); return;
    default: throw std::invalid_argument("not an input format");
  }
}

template <class F>
void scan_lines(const KernelSpec& spec, const ReductionProblem& p, const LaunchConfig& cfg, const float* x,
                ReductionResult& r) {
  const std::int64_t lines = p.axis == Axis::all ? 1 : p.rows;
  const std::int64_t length = p.axis == Axis::all ? p.rows * p.cols : p.cols;
  with_scan_accumulator<F>(spec, [&](auto tag) {
    using R = typename decltype(tag)::type;
    for (std::int64_t line = 0; line < lines; ++line) {
      const LineOut out{r.values.data() + line * length, r.unrounded.data() + line * length, spec.out, spec.sat};
      scan_line<R>(spec, cfg, x + line * length, length, out);
    }
  });
}

// The bytes of the partial a tile publishes in the look-back.
int partial_bytes(const KernelSpec& spec) {
  int bytes = 0;
  with_input_format(spec.in, [&](auto format) {
    using F = typename decltype(format)::type;
    with_scan_accumulator<F>(spec, [&](auto tag) { bytes = int(sizeof(typename decltype(tag)::type::Partial)); });
  });
  return bytes;
}

std::vector<float> widened(const TypedArray& a) {
  std::vector<float> out(a.size());
  visit_typed(a, [&](const auto& v) {
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(to_double(v[i]));
  });
  return out;
}

}  // namespace

std::optional<std::string> unsupported(const KernelSpec& spec, Axis axis) {
  if (!is_scan(spec.op)) {
    if (is_scan_shape(spec.shape)) return name(spec.shape) + " is a scan shape: cumsum only";
    return std::nullopt;
  }
  if (!scans(spec.shape))
    return name(spec.shape) + " reduces, it does not scan: cumsum's shapes are serial, warp, block, "
                              "reduce_then_scan, lookback and cub";
  if (axis == Axis::outer) return "cumsum scans the whole array or each row (inner), not columns";
  switch (spec.acc) {
    case Accumulator::naive: case Accumulator::fp32: case Accumulator::fp64: case Accumulator::kahan:
    case Accumulator::exact: return std::nullopt;
    case Accumulator::pairwise: return "pairwise sums a tree, a scan keeps a running value";
    default: return std::string(to_string(spec.acc)) + " applies to mean_var and layernorm only";
  }
}

bool has_fixed_point_scan(const KernelSpec& spec) {
  return spec.acc == Accumulator::exact && spec.out == default_out_dtype(spec.in) &&
         (spec.in == Dtype::fp16 || spec.in == Dtype::bf16 || spec.in == Dtype::fp32 || spec.in == Dtype::fp8_e4m3 ||
          spec.in == Dtype::fp8_e5m2);
}

std::optional<std::string> bad_config(const LaunchConfig& c) {
  if (c.threads < 32 || c.threads > kMaxScanThreads || !power_of_two(c.threads) || c.blocks < 1)
    return "a scan launch needs 32..512 threads (a power of two) and at least one block";
  return std::nullopt;
}

std::vector<LaunchConfig> launch_configs(const KernelSpec& spec, std::int64_t length, int sm_count) {
  if (spec.shape == Shape::serial) return {LaunchConfig{1, 1}};
  // The default first: 512 threads for reduce_then_scan (the largest tile,
  // the fewest block sums), ScanPolicy::lookback_threads for lookback (by
  // how its tiles publish their partials), 256 for the chained shapes.
  const int default_threads = spec.shape == Shape::reduce_then_scan ? 512
                              : spec.shape == Shape::lookback   ? ScanPolicy::lookback_threads(partial_bytes(spec))
                                                                : 256;
  const int from_256[] = {256, 128, 512, 64}, from_512[] = {512, 256, 128, 64};
  const int* threads = default_threads == 512 ? from_512 : from_256;
  // reduce_then_scan: 1024 threads on each of the device's SMs (2 blocks of
  // 512, 4 of 256, 8 of 128), then many more blocks of 64.
  const std::int64_t sms = std::max(sm_count, 1);
  const std::int64_t caps[] = {2 * sms, 4 * sms, 8 * sms, 2000};
  std::vector<LaunchConfig> out;
  for (int k = 0; k < 4; ++k) {
    const std::int64_t tiles =
        std::max<std::int64_t>(1, TileOrder{length, threads[k], items_per_thread(spec)}.tiles());
    std::int64_t blocks = 1;
    if (spec.shape == Shape::reduce_then_scan) blocks = std::min(tiles, caps[k]);
    if (spec.shape == Shape::lookback) blocks = tiles;
    out.push_back(LaunchConfig{int(std::min<std::int64_t>(blocks, INT32_MAX)), threads[k]});
  }
  return out;
}

ReductionResult run_model(const KernelSpec& spec, const ReductionProblem& p, const LaunchConfig& cfg) {
  ReductionResult r;
  run_model_into(spec, p, cfg, r);
  return r;
}

void run_model_into(const KernelSpec& spec, const ReductionProblem& p, const LaunchConfig& cfg, ReductionResult& r) {
  if (auto why = unsupported(spec, p.axis)) throw std::invalid_argument(*why);
  if (spec.shape == Shape::cub) throw std::invalid_argument("cub is NVIDIA's scan: no CPU model");
  if (spec.shape != Shape::serial)
    if (auto why = bad_config(cfg)) throw std::invalid_argument(*why);
  const std::int64_t n = p.rows * p.cols;
  r.unrounded.clear();
  r.statistics.clear();
  if (spec.acc == Accumulator::exact && !has_fixed_point_scan(spec)) {
    // Every prefix correctly rounded: the same bits on every shape and launch.
    const OutputFormat out{spec.out, spec.sat};
    if (p.axis == Axis::all) {
      r.values = cumsum_rounded(*p.x, out);
    } else {
      r.values.clear();
      for (std::int64_t row = 0; row < p.rows; ++row) {
        const std::vector<double> v = cumsum_rounded(line_of(*p.x, p.rows, p.cols, Along::inner, row), out);
        r.values.insert(r.values.end(), v.begin(), v.end());
      }
    }
    return;
  }
  r.values.assign(std::size_t(n), 0.0);
  r.unrounded.assign(std::size_t(n), 0.0);
  const std::vector<float> own = p.x_float != nullptr && p.x_float->size() == p.x->size() ? std::vector<float>{}
                                                                                          : widened(*p.x);
  const float* x = own.empty() && n > 0 ? p.x_float->data() : own.data();
  with_input_format(spec.in, [&](auto format) { scan_lines<typename decltype(format)::type>(spec, p, cfg, x, r); });
  if (spec.acc == Accumulator::exact) r.unrounded.clear();  // nothing before the one rounding
}

}  // namespace ulpscope::scan
