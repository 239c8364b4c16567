#include "accuracy/allreduce_problem.hpp"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

#include "accuracy/metrics.hpp"
#include "accuracy/work_pool.hpp"
#include "formats/hex_float.hpp"
#include "formats/round_to_dtype.hpp"
#include "kernels/allreduce/allreduce_model.hpp"
#include "reference/exact_accumulator.hpp"
#include "reference/round_to_format.hpp"

namespace ulpscope {
namespace {

using allreduce::Method;

// Elements scored together: P rows of this many values, a block's inputs.
constexpr std::size_t kBlockElements = 2048;

Saturation saturation_of(Dtype d) { return is_fp8(d) ? Saturation::satfinite : Saturation::nosat; }

// sum / P to 128 bits beyond the sum's: ulp_error measures |y - r| at 128
// bits, and RN of the quotient is decided (a quotient by P is a tie of the
// format only when it is exact, and then this precision holds it).
ExactReal reference_value(const ExactAccumulator& sum, bool mean, int ranks, bool* exact = nullptr) {
  ExactReal v = sum.value();
  if (exact) *exact = true;
  if (!mean || v.is_nan() || v.is_inf() || v.is_zero()) return v;
  ExactReal q(v.precision() + 128);
  const int inexact = mpfr_div_ui(q.get(), v.get(), static_cast<unsigned long>(ranks), MPFR_RNDN);
  if (exact) *exact = inexact == 0;
  return q;
}

// Equal as values of a format: the same bits, any NaN equal to any NaN.
bool same_value_bits(double a, double b) {
  if (a != a || b != b) return a != a && b != b;
  std::uint64_t x = 0, y = 0;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

// The type NCCL reduces: upcast all-reduces the widened array (fp64 for fp32
// inputs, else fp32), which NCCL splits by that type's size.
Dtype reduced_dtype(Dtype d, Method m) { return m == Method::upcast ? allreduce::upcast_dtype(d) : d; }

struct ElementScore {
  std::optional<double> error;
  bool correct = false;
};

}  // namespace

std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(rank) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void rank_values(const AllreduceProblem& p, int rank, std::int64_t first, std::span<double> out) {
  const int holder = p.holder.empty() ? rank : p.holder.at(static_cast<std::size_t>(rank));
  generate_elements(p.distribution, p.dtype, p.n, rank_seed(p.seed, holder), 0, first, out);
}

std::vector<std::uint8_t> rank_bits(const AllreduceProblem& p, int rank) {
  std::vector<double> values(static_cast<std::size_t>(p.n));
  rank_values(p, rank, 0, values);
  const TypedArray a = to_typed_array(values, p.dtype);
  std::vector<std::uint8_t> bits(a.bytes());
  if (!bits.empty()) std::memcpy(bits.data(), a.raw(), bits.size());
  return bits;
}

std::string output_digest(std::span<const double> values, Dtype dtype) {
  const TypedArray a = to_typed_array(values, dtype);
  const auto* bytes = static_cast<const unsigned char*>(a.raw());
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
  for (std::size_t i = 0; i < a.bytes(); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  return fmt::format("{:016x}", h);
}

std::vector<AllreduceScore> score_allreduce(const AllreduceProblem& p, const std::vector<AllreduceVariant>& variants,
                                            unsigned threads) {
  if (p.ranks < 1 || p.n < 0) throw std::invalid_argument("an all-reduce needs P >= 1 ranks and n >= 0 elements");
  const std::size_t n = static_cast<std::size_t>(p.n);
  // Rows of the block buffer are the tensors (the identity holder); a
  // variant's fold order is mapped through its holder onto them.
  AllreduceProblem tensors = p;
  tensors.holder.clear();
  struct Plan {
    std::vector<allreduce::FoldSegment> segments;
    std::vector<std::vector<int>> orders;  // per segment, in tensors
    allreduce::FoldArithmetic arithmetic;
    std::vector<double> model;
    std::vector<ElementScore> scores;
    std::map<std::size_t, std::string> notes;  // why an element has no ULP error
  };
  std::mutex notes_lock;
  std::vector<Plan> plans(variants.size());
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const AllreduceVariant& var = variants[v];
    const std::vector<int>& holder = var.holder.empty() ? p.holder : var.holder;
    if (!holder.empty() && holder.size() != static_cast<std::size_t>(p.ranks))
      throw std::invalid_argument("a holder per rank");
    if (var.device_output && var.device_output->size() != n)
      throw std::invalid_argument(fmt::format("the device gave {} elements for n = {}", var.device_output->size(), n));
    Plan& plan = plans[v];
    const AllreduceMethod& m = var.method;
    plan.segments = allreduce::fold_segments(m.topology, m.algorithm, m.protocol, reduced_dtype(p.dtype, m.method), n);
    for (const auto& seg : plan.segments) {
      std::vector<int> order = allreduce::fold_order(m.topology, m.algorithm, seg);
      if (!holder.empty())
        for (int& r : order) r = holder[static_cast<std::size_t>(r)];
      plan.orders.push_back(std::move(order));
    }
    plan.arithmetic = {p.dtype, p.mean, m.method, p.ranks};
    plan.model.resize(n);
    plan.scores.resize(n);
  }
  const Saturation sat = saturation_of(p.dtype);
  std::vector<double> correct_value(n);
  // A block holds P rows of `block` values: about 2^22 values, so 32 MiB a thread.
  const std::size_t block = std::clamp<std::size_t>((std::size_t{1} << 22) / static_cast<std::size_t>(p.ranks), 16,
                                                    kBlockElements);
  const std::size_t blocks = (n + block - 1) / block;

  WorkPool pool(threads);
  pool.for_chunks(static_cast<std::int64_t>(blocks), [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> values;
    ExactAccumulator acc;
    const ExactAccumulator empty;
    std::vector<std::size_t> next_segment(plans.size(), 0);
    for (std::int64_t b = begin; b < end; ++b) {
      const std::size_t first = static_cast<std::size_t>(b) * block, count = std::min(block, n - first);
      values.resize(static_cast<std::size_t>(p.ranks) * count);
      for (int r = 0; r < p.ranks; ++r)
        rank_values(tensors, r, static_cast<std::int64_t>(first),
                    std::span<double>(values.data() + static_cast<std::size_t>(r) * count, count));
      for (std::size_t v = 0; v < plans.size(); ++v) {
        Plan& plan = plans[v];
        if (plan.arithmetic.method == Method::exact) continue;
        // The segments overlapping [first, first + count), found from the first that ends after `first`.
        auto seg = std::partition_point(plan.segments.begin(), plan.segments.end(),
                                        [&](const allreduce::FoldSegment& s) { return s.first + s.count <= first; });
        for (; seg != plan.segments.end() && seg->first < first + count; ++seg) {
          const std::size_t lo = std::max(seg->first, first), hi = std::min(seg->first + seg->count, first + count);
          allreduce::fold_block(plan.arithmetic, plan.orders[static_cast<std::size_t>(seg - plan.segments.begin())],
                                values.data() + (lo - first), count, hi - lo, plan.model.data() + lo);
        }
      }
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t e = first + i;
        acc = empty;
        for (int r = 0; r < p.ranks; ++r) acc.add(values[static_cast<std::size_t>(r) * count + i]);
        const ExactReal exact = reference_value(acc, p.mean, p.ranks);
        const double rounded = round_to_format(exact, p.dtype, sat);
        correct_value[e] = rounded;
        for (std::size_t v = 0; v < plans.size(); ++v) {
          Plan& plan = plans[v];
          if (plan.arithmetic.method == Method::exact) plan.model[e] = rounded;
          const double y = variants[v].device_output ? (*variants[v].device_output)[e] : plan.model[e];
          std::string note;
          plan.scores[e].error = ulp_error(y, exact, p.dtype, &note, sat);
          if (!plan.scores[e].error) {
            const std::lock_guard<std::mutex> hold(notes_lock);
            plan.notes[e] = note;
          }
          plan.scores[e].correct = same_value_bits(y, rounded);
        }
      }
    }
  }, /*min_part=*/1);  // a block is thousands of values of work

  std::vector<AllreduceScore> outs;
  for (std::size_t v = 0; v < plans.size(); ++v) {
    Plan& plan = plans[v];
    const std::vector<double>* device = variants[v].device_output;
    AllreduceScore out;
    out.model_digest = output_digest(plan.model, p.dtype);
    const std::vector<double>& scored = device ? *device : plan.model;
    out.profile.digest = device ? output_digest(scored, p.dtype) : out.model_digest;
    if (device) out.matches_model = std::equal(scored.begin(), scored.end(), plan.model.begin(), same_value_bits);
    std::size_t correct = 0, worst = 0;
    double total = 0;
    bool missing = false;
    double max_error = 0;
    for (std::size_t e = 0; e < n; ++e) {
      correct += plan.scores[e].correct;
      if (!plan.scores[e].error) {
        if (!missing) worst = e;
        missing = true;
        continue;
      }
      total += *plan.scores[e].error;
      if (!missing && *plan.scores[e].error > max_error) max_error = *plan.scores[e].error, worst = e;
    }
    out.profile.share_correctly_rounded = n ? static_cast<double>(correct) / static_cast<double>(n) : 1.0;
    out.correctly_rounded = correct == n;
    if (!missing) out.profile.max_ulp_error = max_error;
    if (!missing && n > 0) out.profile.mean_ulp_error = total / static_cast<double>(n);
    out.profile.worst_element = static_cast<std::int64_t>(worst);
    if (n > 0) {
      out.result = hex_float(scored[worst]);
      out.reference_rounded = hex_float(correct_value[worst]);
      // The worst element's exact value, recomputed alone for its decimal.
      ExactAccumulator acc;
      std::vector<double> one(1);
      for (int r = 0; r < p.ranks; ++r) {
        rank_values(tensors, r, static_cast<std::int64_t>(worst), one);
        acc.add(one[0]);
      }
      bool is_exact = true;
      const ExactReal exact = reference_value(acc, p.mean, p.ranks, &is_exact);
      out.reference_exact = exact_decimal(exact, is_exact);
      if (missing) out.error_note = fmt::format("element {}: {}", worst, plan.notes[worst]);
    }
    outs.push_back(std::move(out));
  }
  return outs;
}

AllreduceScore score_allreduce(const AllreduceProblem& p, const AllreduceMethod& m,
                               const std::vector<double>* device_output, unsigned threads) {
  return score_allreduce(p, std::vector<AllreduceVariant>{{m, {}, device_output}}, threads).front();
}

}  // namespace ulpscope
