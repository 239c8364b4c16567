#include "accuracy/allreduce_problem.hpp"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <cstring>
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

AllreduceScore score_allreduce(const AllreduceProblem& p, const AllreduceMethod& m,
                               const std::vector<double>* device_output, unsigned threads) {
  if (p.ranks < 1 || p.n < 0) throw std::invalid_argument("an all-reduce needs P >= 1 ranks and n >= 0 elements");
  const std::size_t n = static_cast<std::size_t>(p.n);
  if (device_output && device_output->size() != n)
    throw std::invalid_argument(fmt::format("the device gave {} elements for n = {}", device_output->size(), n));
  // The blocks: pieces of fold segments, so that a block has one order.
  struct Block {
    std::size_t first, count;
    std::vector<int> order;
  };
  std::vector<Block> blocks;
  for (const allreduce::FoldSegment& s :
       allreduce::fold_segments(m.topology, m.algorithm, m.protocol, p.dtype, n)) {
    const std::vector<int> order = allreduce::fold_order(m.topology, m.algorithm, s);
    for (std::size_t b = 0; b < s.count; b += kBlockElements)
      blocks.push_back({s.first + b, std::min(kBlockElements, s.count - b), order});
  }
  const allreduce::FoldArithmetic arithmetic{p.dtype, p.mean, m.method, p.ranks};
  const Saturation sat = saturation_of(p.dtype);
  std::vector<double> model(n), correct_value(n);
  std::vector<ElementScore> scores(n);
  std::vector<std::string> notes(n);

  WorkPool pool(threads);
  pool.for_chunks(static_cast<std::int64_t>(blocks.size()), [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> values;
    ExactAccumulator acc;
    const ExactAccumulator empty;
    for (std::int64_t b = begin; b < end; ++b) {
      const Block& block = blocks[static_cast<std::size_t>(b)];
      values.resize(static_cast<std::size_t>(p.ranks) * block.count);
      for (int r = 0; r < p.ranks; ++r)
        rank_values(p, r, static_cast<std::int64_t>(block.first),
                    std::span<double>(values.data() + static_cast<std::size_t>(r) * block.count, block.count));
      if (m.method != Method::exact)
        allreduce::fold_block(arithmetic, block.order, values.data(), block.count, block.count,
                              model.data() + block.first);
      for (std::size_t i = 0; i < block.count; ++i) {
        const std::size_t e = block.first + i;
        acc = empty;
        for (int r = 0; r < p.ranks; ++r) acc.add(values[static_cast<std::size_t>(r) * block.count + i]);
        const ExactReal exact = reference_value(acc, p.mean, p.ranks);
        const double rounded = round_to_format(exact, p.dtype, sat);
        correct_value[e] = rounded;
        if (m.method == Method::exact) model[e] = rounded;
        const double y = device_output ? (*device_output)[e] : model[e];
        scores[e].error = ulp_error(y, exact, p.dtype, &notes[e], sat);
        scores[e].correct = same_value_bits(y, rounded);
      }
    }
  });

  AllreduceScore out;
  out.model_digest = output_digest(model, p.dtype);
  const std::vector<double>& scored = device_output ? *device_output : model;
  out.profile.digest = device_output ? output_digest(scored, p.dtype) : out.model_digest;
  if (device_output) out.matches_model = out.profile.digest == out.model_digest && scored.size() == model.size() &&
                                         std::equal(scored.begin(), scored.end(), model.begin(), same_value_bits);
  std::size_t correct = 0, worst = 0;
  double total = 0;
  bool missing = false;
  std::optional<double> max_error = 0.0;
  for (std::size_t e = 0; e < n; ++e) {
    correct += scores[e].correct;
    if (!scores[e].error) {
      if (!missing) worst = e;
      missing = true;
      continue;
    }
    total += *scores[e].error;
    if (!missing && *scores[e].error > *max_error) max_error = scores[e].error, worst = e;
  }
  out.profile.share_correctly_rounded = n ? static_cast<double>(correct) / static_cast<double>(n) : 1.0;
  out.correctly_rounded = correct == n;
  out.profile.max_ulp_error = missing ? std::nullopt : max_error;
  out.profile.mean_ulp_error = missing || n == 0 ? std::nullopt : std::optional<double>(total / static_cast<double>(n));
  out.profile.worst_element = static_cast<std::int64_t>(worst);
  if (n > 0) {
    out.result = hex_float(scored[worst]);
    out.reference_rounded = hex_float(correct_value[worst]);
    // The worst element's exact value, recomputed alone for its decimal.
    ExactAccumulator acc;
    std::vector<double> v(1);
    for (int r = 0; r < p.ranks; ++r) {
      rank_values(p, r, static_cast<std::int64_t>(worst), v);
      acc.add(v[0]);
    }
    bool is_exact = true;
    const ExactReal exact = reference_value(acc, p.mean, p.ranks, &is_exact);
    out.reference_exact = exact_decimal(exact, is_exact);
    if (missing) out.error_note = fmt::format("element {}: {}", worst, notes[worst]);
  }
  return out;
}

}  // namespace ulpscope
