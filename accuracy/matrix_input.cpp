#include "accuracy/matrix_input.hpp"

#include <algorithm>
#include <utility>
#include <variant>

namespace ulpscope::matrix {
namespace {

// into[i] = from[source(i)] for i in [b, e). A random gather waits on memory
// at every element; computing a batch of source indices first and asking for
// their cache lines before reading any lets the loads overlap.
template <class T, class Source>
void gather(const T* from, T* into, std::int64_t b, std::int64_t e, const Source& source) {
  constexpr std::int64_t kBatch = 64;
  std::int64_t at[kBatch];
  for (std::int64_t i = b; i < e; i += kBatch) {
    const std::int64_t m = std::min(kBatch, e - i);
    for (std::int64_t k = 0; k < m; ++k) {
      at[k] = source(i + k);
      __builtin_prefetch(from + at[k]);
    }
    for (std::int64_t k = 0; k < m; ++k) into[i + k] = from[at[k]];
  }
}

template <class Source>
TypedArray permuted(const TypedArray& a, std::int64_t count, WorkPool& pool, const Source& source) {
  return std::visit(
      [&](const auto& v) {
        std::decay_t<decltype(v)> out(v.size());
        pool.for_chunks(count, [&](std::int64_t b, std::int64_t e) { gather(v.data(), out.data(), b, e, source); });
        return TypedArray(std::move(out));
      },
      a.data());
}

}  // namespace

ProblemPermutation permutation_of(const ReductionProblem& p, std::uint64_t seed) {
  return ProblemPermutation(p.axis, is_elementwise_output(p.op), p.rows, p.cols, seed);
}

std::unique_ptr<PermutedArrays> permuted_on_host(const ReductionProblem& p, std::uint64_t seed, WorkPool& pool) {
  const ProblemPermutation perm = permutation_of(p, seed);
  auto out = std::make_unique<PermutedArrays>();
  auto element = [&perm](std::int64_t i) { return perm.source(i); };
  auto column = [&perm](std::int64_t k) { return perm.column(k); };
  const std::int64_t n = p.rows * p.cols;
  out->x = permuted(*p.x, n, pool, element);
  out->problem = p;
  out->problem.x = &out->x;
  if (p.y) out->problem.y = &out->y.emplace(permuted(*p.y, n, pool, element));
  // The widened copies follow the same permutation.
  auto widened = [&](const std::vector<float>* from, std::vector<float>& into) -> const std::vector<float>* {
    if (from == nullptr) return nullptr;
    into.resize(from->size());
    pool.for_chunks(std::int64_t(from->size()),
                    [&](std::int64_t b, std::int64_t e) { gather(from->data(), into.data(), b, e, element); });
    return &into;
  };
  out->problem.x_float = widened(p.x_float, out->x_float);
  out->problem.y_float = p.y ? widened(p.y_float, out->y_float) : nullptr;
  if (is_elementwise_output(p.op)) {
    if (p.gamma) out->problem.gamma = &out->gamma.emplace(permuted(*p.gamma, p.cols, pool, column));
    if (p.beta) out->problem.beta = &out->beta.emplace(permuted(*p.beta, p.cols, pool, column));
  }
  return out;
}

std::unique_ptr<ScoredRows> scored_rows(const ReductionProblem& p) {
  const bool per_element = is_elementwise_output(p.op) || (is_scan(p.op) && p.axis == Axis::inner);
  if (!per_element || p.rows * p.cols <= kScoredElements) return nullptr;
  auto out = std::make_unique<ScoredRows>();
  const std::int64_t count = std::max<std::int64_t>(1, kScoredElements / p.cols);
  for (std::int64_t k = 0; k < count; ++k) out->rows.push_back(k * p.rows / count);
  out->x = std::visit(
      [&](const auto& v) {
        std::decay_t<decltype(v)> sub;
        sub.reserve(std::size_t(count * p.cols));
        for (std::int64_t r : out->rows)
          sub.insert(sub.end(), v.begin() + r * p.cols, v.begin() + (r + 1) * p.cols);
        return TypedArray(std::move(sub));
      },
      p.x->data());
  out->problem = p;
  out->problem.rows = count;
  out->problem.x = &out->x;
  out->problem.x_float = out->problem.y_float = nullptr;  // widened per run: a few rows
  return out;
}

ReductionResult scored_part(ReductionResult r, const ScoredRows* scored, std::int64_t cols) {
  if (scored == nullptr) return r;
  ReductionResult out;
  const auto take = [&](const std::vector<double>& v, std::vector<double>& into) {
    for (std::int64_t row : scored->rows)
      into.insert(into.end(), v.begin() + row * cols, v.begin() + (row + 1) * cols);
  };
  take(r.values, out.values);
  if (!r.unrounded.empty()) take(r.unrounded, out.unrounded);
  if (!r.statistics.empty())
    for (std::int64_t row : scored->rows)
      out.statistics.insert(out.statistics.end(), r.statistics.begin() + 2 * row, r.statistics.begin() + 2 * row + 2);
  return out;
}

InputCase make_input(Dtype dtype, const DistributionSpec& dist, std::int64_t n, std::uint64_t seed,
                     std::int64_t row_cols) {
  InputCase in;
  in.dtype = dtype;
  in.distribution = dist.name();
  in.n = n;
  in.seed = seed;
  GeneratedInput g = generate(dist, dtype, n, seed, /*with_y=*/true);
  in.own_x = std::move(g.x);
  in.y = std::move(g.y);
  in.note = g.note;
  // The norms' weights: gamma in [0, 1), beta ~ N(0, 1), one per column.
  const std::int64_t cols = std::min<std::int64_t>(row_cols, std::max<std::int64_t>(n, 1));
  in.gamma = generate({Distribution::uniform, std::nullopt}, dtype, cols, seed ^ 0x6A09E667F3BCC908ull).x;
  in.beta = generate({Distribution::normal, std::nullopt}, dtype, cols, seed ^ 0xBB67AE8584CAA73Bull).x;
  return in;
}

}  // namespace ulpscope::matrix
