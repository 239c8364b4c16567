#include "reference/exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "reference/exact_bins.hpp"

namespace ulpscope {
namespace {

using namespace exact_sum_detail;

// Exact widening of a finite value by moving its fields into a float and
// scaling by the bias difference (2^(127 - bias), exact in double); the float
// is subnormal exactly when the value is, so no branch is needed.
template <class T, bool Magnitude>
inline double widen(typename Layout<T>::bits u) {
  using L = Layout<T>;
  const std::uint32_t mag = std::uint32_t(u & kMagnitudeMask<T>) << (23 - L::man_bits);
  const std::uint32_t sign = Magnitude ? 0u : std::uint32_t(u >> (L::width - 1)) << 31;
  constexpr double scale = std::bit_cast<double>(std::uint64_t(127 - L::bias + 1023) << 52);
  return double(std::bit_cast<float>(sign | mag)) * scale;
}

constexpr bool is_product(Terms k) { return k == Terms::product || k == Terms::product_magnitude; }
constexpr bool is_magnitude(Terms k) { return k == Terms::magnitude || k == Terms::product_magnitude; }

// Blocks of 256 terms: a block's terms, extracted against sigma = 2^k with
// 2^k >= 256 * max|t| (q = (sigma + t) - sigma, r = t - q), leave parts q
// that are multiples of 2^(k-53) and whose sum is exact in double in any
// order, and exact residuals r with |r| <= 2^(k-53) (Rump, Ogita, Oishi
// 2008, "Accurate floating-point summation part I", SIAM J. Sci. Comput.
// 31(1), Section 3: ExtractScalar and ExtractVector). Each level takes
// 53 - 8 = 45 bits below sigma; what is left goes to the next level.
constexpr std::size_t kBlock = 256;
constexpr int kBlockLog2 = 8;
constexpr int kLanes = 8;
constexpr int kMaxLevels = 4;
constexpr std::uint64_t kDoubleMagnitude = 0x7FFFFFFFFFFFFFFFull;

struct BlockStats {
  std::uint64_t max_magnitude = 0;  // the largest |t| as bits (their order is the values' order)
  std::uint64_t all_bits_and = ~std::uint64_t(0);
  bool special = false;  // an input is Inf or NaN: t is meaningless
};

// GCC vector extensions: eight lanes, lowered to whatever the clone's
// instruction set has (AVX-512, AVX2, SSE2).
typedef double VecD __attribute__((vector_size(64)));
typedef std::uint64_t VecU64 __attribute__((vector_size(64)));
typedef std::uint32_t VecU32 __attribute__((vector_size(32)));
typedef float VecF __attribute__((vector_size(32)));

// A clone of each hot function per instruction set, picked at load time.
// clang 14 (the fuzz build) cannot clone templates: there each function is
// built once for the default target, the same arithmetic.
#if defined(__clang__)
#define ULPSCOPE_INSTRUCTION_SET_CLONES
#else
#define ULPSCOPE_INSTRUCTION_SET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
// The helpers that take or return vectors are always inlined into the clone
// that calls them: a call between code built for AVX and code built for the
// default target passes 256- and 512-bit vectors in different registers (the
// x86-64 psABI's vector convention differs by instruction set), which an
// unoptimised build, where nothing is inlined otherwise, gets wrong.
#define ULPSCOPE_VECTOR_HELPER inline __attribute__((always_inline))

template <class T>
ULPSCOPE_INSTRUCTION_SET_CLONES
bool has_special(const T* x, std::size_t n) {
  typename Layout<T>::bits m = 0;
  for (std::size_t i = 0; i < n; ++i) m = std::max<typename Layout<T>::bits>(m, bits_of(x[i]) & kMagnitudeMask<T>);
  return m >= Layout<T>::special_from;
}

// widen() on eight values at once.
template <class T, bool Magnitude>
ULPSCOPE_VECTOR_HELPER VecD widen8(VecU32 u) {
  using L = Layout<T>;
  VecU32 w;
  if constexpr (23 - L::man_bits == 32 - L::width) {  // fp32 itself, or bf16: its top half
    w = (Magnitude ? (u & std::uint32_t(kMagnitudeMask<T>)) : u) << (32 - L::width);
  } else {
    w = (u & std::uint32_t(kMagnitudeMask<T>)) << (23 - L::man_bits);
    if constexpr (!Magnitude) w |= (u >> (L::width - 1)) << 31;
  }
  constexpr double scale = std::bit_cast<double>(std::uint64_t(127 - L::bias + 1023) << 52);
  return __builtin_convertvector((VecF)w, VecD) * scale;
}

#define ULPSCOPE_MAX_U64(a, b) ((a) > (b) ? (a) : (b))

// Horizontal reductions by halving shuffles (a scalar loop over the lanes
// costs as much as the block's main loop). Sums of a level's parts are exact
// in any order.
ULPSCOPE_VECTOR_HELPER std::uint64_t reduce_max(VecU64 m) {
  m = ULPSCOPE_MAX_U64(m, __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3));
  m = ULPSCOPE_MAX_U64(m, __builtin_shufflevector(m, m, 2, 3, 0, 1, 6, 7, 4, 5));
  m = ULPSCOPE_MAX_U64(m, __builtin_shufflevector(m, m, 1, 0, 3, 2, 5, 4, 7, 6));
  return m[0];
}
ULPSCOPE_VECTOR_HELPER std::uint64_t reduce_and(VecU64 m) {
  m &= __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3);
  m &= __builtin_shufflevector(m, m, 2, 3, 0, 1, 6, 7, 4, 5);
  m &= __builtin_shufflevector(m, m, 1, 0, 3, 2, 5, 4, 7, 6);
  return m[0];
}
ULPSCOPE_VECTOR_HELPER std::uint64_t reduce_or(VecU64 m) {
  m |= __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3);
  m |= __builtin_shufflevector(m, m, 2, 3, 0, 1, 6, 7, 4, 5);
  m |= __builtin_shufflevector(m, m, 1, 0, 3, 2, 5, 4, 7, 6);
  return m[0];
}
ULPSCOPE_VECTOR_HELPER double reduce_sum(VecD s) {
  s += __builtin_shufflevector(s, s, 4, 5, 6, 7, 0, 1, 2, 3);
  s += __builtin_shufflevector(s, s, 2, 3, 0, 1, 6, 7, 4, 5);
  s += __builtin_shufflevector(s, s, 1, 0, 3, 2, 5, 4, 7, 6);
  return s[0];
}

// 32 consecutive values widened at once from eight 32-bit words, each word
// holding 1, 2 or 4 values: part k of every word is a shift and a mask away,
// with no unpacking shuffles. The terms come out in a permuted order, the
// same for x and y, which a sum does not see.
constexpr std::size_t kStep = 32;
template <class T>
constexpr int kPerWord = 32 / Layout<T>::width;

template <class T, bool Magnitude>
ULPSCOPE_VECTOR_HELPER void widen32(const T* p, VecD* out, VecU32& raw_max) {
  using L = Layout<T>;
  constexpr std::uint32_t low = std::uint32_t((std::uint64_t(1) << L::width) - 1);
  for (std::size_t w = 0; w < kStep / (kLanes * kPerWord<T>); ++w) {
    VecU32 u;
    std::memcpy(&u, p + w * kLanes * kPerWord<T>, sizeof u);
    for (int k = 0; k < kPerWord<T>; ++k) {
      const VecU32 part = k + 1 == kPerWord<T> ? u >> (L::width * k) : (u >> (L::width * k)) & low;
      const VecU32 m = part & std::uint32_t(kMagnitudeMask<T>);
      raw_max = raw_max > m ? raw_max : m;
      out[w * kPerWord<T> + k] = widen8<T, Magnitude>(part);
    }
  }
}

// The terms of x[0..32) (and y) in widen32's order.
template <class T, Terms K>
ULPSCOPE_VECTOR_HELPER void terms32(const T* x, const T* y, VecD* v, VecU32& raw_max) {
  constexpr bool mag = is_magnitude(K);
  widen32<T, mag>(x, v, raw_max);
  if constexpr (is_product(K)) {
    VecD w[kStep / kLanes];
    widen32<T, mag>(y, w, raw_max);
    for (std::size_t j = 0; j < kStep / kLanes; ++j) v[j] = v[j] * w[j];
  }
  if constexpr (K == Terms::square)
    for (std::size_t j = 0; j < kStep / kLanes; ++j) v[j] = v[j] * v[j];
}

// The terms of one full block as doubles, and their statistics.
template <class T, Terms K>
ULPSCOPE_INSTRUCTION_SET_CLONES
BlockStats fill_terms(const T* __restrict x, const T* __restrict y, double* __restrict t) {
  VecU32 raw_max = {};
  VecU64 mx = {};
  VecU64 an = ~VecU64{};
  for (std::size_t i = 0; i < kBlock; i += kStep) {
    VecD v[kStep / kLanes];
    terms32<T, K>(x + i, is_product(K) ? y + i : nullptr, v, raw_max);
    for (std::size_t j = 0; j < kStep / kLanes; ++j) {
      std::memcpy(t + i + j * kLanes, &v[j], sizeof v[j]);
      const VecU64 b = (VecU64)v[j];
      mx = ULPSCOPE_MAX_U64(mx, b & kDoubleMagnitude);
      an &= b;
    }
  }
  BlockStats s;
  s.max_magnitude = reduce_max(mx);
  s.all_bits_and = reduce_and(an);
  s.special = reduce_max(__builtin_convertvector(raw_max, VecU64)) >= Layout<T>::special_from;
  return s;
}

// One extraction level: t_i = q_i + r_i with q_i a multiple of 2^(k-53);
// t keeps the r_i. Returns the exact sum of the q_i and the largest |r_i|.
ULPSCOPE_INSTRUCTION_SET_CLONES
double extract_level(double* __restrict t, double sigma, std::uint64_t* __restrict max_residual) {
  VecD s0 = {}, s1 = {};
  VecU64 m0 = {}, m1 = {};
  for (std::size_t i = 0; i < kBlock; i += 2 * kLanes) {
    VecD a, b;
    std::memcpy(&a, t + i, sizeof a);
    std::memcpy(&b, t + i + kLanes, sizeof b);
    const VecD qa = (sigma + a) - sigma, qb = (sigma + b) - sigma;
    const VecD ra = a - qa, rb = b - qb;
    std::memcpy(t + i, &ra, sizeof ra);
    std::memcpy(t + i + kLanes, &rb, sizeof rb);
    s0 += qa;
    s1 += qb;
    m0 = ULPSCOPE_MAX_U64(m0, (VecU64)ra & kDoubleMagnitude);
    m1 = ULPSCOPE_MAX_U64(m1, (VecU64)rb & kDoubleMagnitude);
  }
  *max_residual = reduce_max(ULPSCOPE_MAX_U64(m0, m1));
  return reduce_sum(s0 + s1);  // every partial sum is exact (the lemma's bound)
}

// sigma = 2^k with 2^k >= 2^kBlockLog2 * |t| for every |t| <= the given magnitude.
inline double sigma_above(std::uint64_t max_magnitude) {
  // floor(log2) for normal doubles; terms never come near double's limits
  // (fp32 squares lie in [2^-298, 2^256]).
  const int e = std::max(int(max_magnitude >> 52) - 1023, -1000);
  return std::bit_cast<double>(std::uint64_t(e + 1 + kBlockLog2 + 1023) << 52);
}

// The first level fused with the widening, for full blocks: sigma comes from
// a bound on max|t| read off the raw inputs (max|x|, squared, or times
// max|y|: an upper bound serves the lemma as well), so the terms are
// extracted as they are made and nothing is stored. When residuals remain
// (rare but for data spanning many binades) the caller starts the block
// over on stored terms.
struct FirstLevel {
  bool special = false;     // Inf or NaN among the inputs
  bool zero_bound = false;  // every input is zero (or every y is): no sigma
  // The exact sums of the first levels' parts: products (up to 48 bits) take
  // two levels, fused as well; sums of values take one.
  double sum[2] = {0, 0};
  std::uint64_t residual_bits = 0;  // nonzero when a residual is left
};

// The largest magnitude patterns of a block of x and of y (y may be x).
template <class T>
inline std::pair<typename Layout<T>::bits, typename Layout<T>::bits> max_magnitude_bits(const T* x, const T* y) {
  using B = typename Layout<T>::bits;
  B mx = 0, my = 0;
  for (std::size_t i = 0; i < kBlock; ++i) {
    mx = std::max<B>(mx, bits_of(x[i]) & kMagnitudeMask<T>);
    my = std::max<B>(my, bits_of(y[i]) & kMagnitudeMask<T>);
  }
  return {mx, my};
}

template <class T, Terms K>
ULPSCOPE_INSTRUCTION_SET_CLONES
FirstLevel first_level(const T* __restrict x, const T* __restrict y) {
  FirstLevel f;
  const auto [mx, my] = max_magnitude_bits(x, is_product(K) ? y : x);
  if (mx >= Layout<T>::special_from || my >= Layout<T>::special_from) {
    f.special = true;
    return f;
  }
  double bound = widen<T, true>(mx);
  if constexpr (K == Terms::square) bound = bound * bound;
  if constexpr (is_product(K)) bound = bound * widen<T, true>(my);
  if (bound == 0) {
    f.zero_bound = true;
    return f;
  }
  constexpr bool two_levels = K != Terms::value && K != Terms::magnitude;
  const double sigma = sigma_above(std::bit_cast<std::uint64_t>(bound));
  // The second level's sigma: 2^8 times the first level's residual bound,
  // eps * sigma (the lemma again).
  const double sigma2 = sigma * 0x1p-45;
  VecD s0 = {}, s1 = {}, u0 = {}, u1 = {};
  VecU64 m = {};  // the OR of the residuals' bits
  auto level8 = [&](VecD v, VecD& s, VecD& u) __attribute__((always_inline)) {
    const VecD q = (sigma + v) - sigma;
    VecD r = v - q;
    s += q;
    if constexpr (two_levels) {
      const VecD q2 = (sigma2 + r) - sigma2;
      r = r - q2;
      u += q2;
    }
    m |= (VecU64)r;
  };
  VecU32 raw_max = {};  // checked above already
  for (std::size_t i = 0; i < kBlock; i += kStep) {
    VecD v[kStep / kLanes];
    terms32<T, K>(x + i, is_product(K) ? y + i : nullptr, v, raw_max);
    for (std::size_t j = 0; j < kStep / kLanes; ++j)
      level8(v[j], j % 2 ? s1 : s0, j % 2 ? u1 : u0);
  }
  f.sum[0] = reduce_sum(s0 + s1);
  f.sum[1] = reduce_sum(u0 + u1);
  f.residual_bits = reduce_or(m) & kDoubleMagnitude;  // -0 residuals (of -0 terms) are zeros too
  return f;
}

// One term in IEEE double arithmetic (exact for finite inputs; Inf and NaN
// as IEEE has them).
template <class T, Terms K>
double term_of(const T* x, const T* y, std::size_t i) {
  const double a = to_double(x[i]);
  if constexpr (K == Terms::value) return a;
  else if constexpr (K == Terms::magnitude) return std::fabs(a);
  else if constexpr (K == Terms::square) return a * a;
  else if constexpr (K == Terms::product) return a * to_double(y[i]);
  else return std::fabs(a * to_double(y[i]));
}

// Narrow formats sit on a short fixed-point grid: every fp16 value is a
// multiple of 2^-24 below 2^16, 40 bits in all, so any 2^13 of them add up
// exactly in double (docs/spec.md, "Accumulators"; E4M3: 18 bits, E5M2: 32 bits;
// their squares and products twice as many). Where the grid and the count
// fit 53 bits, plain double additions in chunks are exact: no extraction.
template <class T, Terms K>
constexpr int grid_chunk_log2() {
  using L = Layout<T>;
  const int quantum = 1 - L::bias - L::man_bits;  // the smallest subnormal's exponent
  const int bits = L::limit_exponent - quantum;
  const int term_bits = (K == Terms::value || K == Terms::magnitude) ? bits : 2 * bits;
  return std::min(53 - term_bits, 16);
}

// The exact sum of n (a multiple of 32) terms on the grid, and the largest
// raw magnitude pattern (to spot Inf and NaN, which widen8 does not decode).
template <class T, Terms K>
ULPSCOPE_INSTRUCTION_SET_CLONES
double grid_sum(const T* __restrict x, const T* __restrict y, std::size_t n, std::uint32_t* raw_max) {
  VecD s[kStep / kLanes];
  for (auto& e : s) e = -VecD{};  // -0, IEEE's additive identity: a sum of -0s stays -0
  VecU32 rm = {};
  for (std::size_t i = 0; i < n; i += kStep) {
    VecD v[kStep / kLanes];
    terms32<T, K>(x + i, is_product(K) ? y + i : nullptr, v, rm);
    for (std::size_t j = 0; j < kStep / kLanes; ++j) s[j] += v[j];
  }
  *raw_max = std::uint32_t(reduce_max(__builtin_convertvector(rm, VecU64)));
  return reduce_sum((s[0] + s[1]) + (s[2] + s[3]));
}

template <class T, Terms K>
void accumulate_on_grid(const T* x, const T* y, std::size_t n, ExactAccumulator& acc) {
  constexpr std::size_t kChunk = std::size_t(1) << grid_chunk_log2<T, K>();
  auto scalar_term = [&](std::size_t i) { return term_of<T, K>(x, y, i); };
  for (std::size_t start = 0; start < n; start += kChunk) {
    const std::size_t len = std::min(kChunk, n - start), vec = len / kStep * kStep;
    std::uint32_t raw_max = 0;
    double sum = grid_sum<T, K>(x + start, is_product(K) ? y + start : nullptr, vec, &raw_max);
    if (raw_max >= Layout<T>::special_from) {
      // Inf or NaN: IEEE arithmetic on the decoded values gives the specials'
      // rules (Inf - Inf and Inf * 0 are NaN), and stays exact otherwise.
      sum = -0.0;
      for (std::size_t i = start; i < start + vec; ++i) acc.add(scalar_term(i));
    }
    // The tail, and the chunk's sum (a -0 only if every term was -0, as IEEE
    // addition has it).
    for (std::size_t i = start + vec; i < start + len; ++i) sum += scalar_term(i);
    acc.add(sum);
  }
}

template <class T, Terms K>
void accumulate_serial(const T* x, const T* y, std::size_t n, ExactAccumulator& acc) {
  if constexpr (grid_chunk_log2<T, K>() >= 8) return accumulate_on_grid<T, K>(x, y, n, acc);
  constexpr bool mag = is_magnitude(K);
  constexpr bool product = is_product(K) || K == Terms::square;
  ExponentBins<T, mag> bins;
  ProductBins<T, mag> product_bins;
  // Blocks too wide for the extraction levels go to the bins, which are
  // exact for any spread.
  auto to_bins = [&](const T* xb, const T* yb, std::size_t len) {
    if constexpr (product) product_bins.add(xb, K == Terms::square ? xb : yb, len, acc);
    else bins.add(xb, len, acc);
  };
  alignas(64) double t[kBlock];
  int skip = 0, streak = 0;  // after failed blocks, go straight to the bins for a while
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t len = std::min(kBlock, n - start);
    const T* xb = x + start;
    const T* yb = is_product(K) ? y + start : nullptr;
    if (skip > 0 && !has_special(xb, len) && (!is_product(K) || !has_special(yb, len))) {
      --skip;
      to_bins(xb, yb, len);
      continue;
    }
    if (len == kBlock) {
      const FirstLevel first = first_level<T, K>(xb, yb);
      if (!first.special && !first.zero_bound && first.residual_bits == 0) {
        if (first.sum[0] == 0 && first.sum[1] == 0) {
          // Zero terms, or an exact cancellation (rare): -0 only if every term is.
          std::uint64_t all_bits_and = ~std::uint64_t(0);
          for (std::size_t i = 0; i < len; ++i) all_bits_and &= std::bit_cast<std::uint64_t>(term_of<T, K>(xb, yb, i));
          acc.add_zeros((all_bits_and >> 63) != 0, len);
        } else {
          acc.add(first.sum[0]);
          if (first.sum[1] != 0) acc.add(first.sum[1]);
        }
        streak = 0;
        continue;
      }
    }
    // Inf or NaN, a block of zeros, residuals after the fused levels, or the
    // last, partial block (zero padding adds nothing): widen and store the
    // terms, then extract level by level.
    BlockStats stats;
    if (len == kBlock) {
      stats = fill_terms<T, K>(xb, yb, t);
    } else {
      T xs[kBlock] = {}, ys[kBlock] = {};
      std::copy(xb, xb + len, xs);
      if (yb) std::copy(yb, yb + len, ys);
      stats = fill_terms<T, K>(xs, ys, t);
      stats.all_bits_and = ~std::uint64_t(0);  // of the real terms only
      for (std::size_t i = 0; i < len; ++i) stats.all_bits_and &= std::bit_cast<std::uint64_t>(term_of<T, K>(xb, yb, i));
    }
    if (stats.special) {  // the terms in IEEE arithmetic, one by one
      for (std::size_t i = 0; i < len; ++i) acc.add(term_of<T, K>(xb, yb, i));
      continue;
    }
    if (stats.max_magnitude == 0) {  // only zeros: all -0 or not
      acc.add_zeros((stats.all_bits_and >> 63) != 0, len);
      continue;
    }
    double level_sum[kMaxLevels];
    int levels = 0;
    std::uint64_t residual = stats.max_magnitude;
    while (residual != 0 && levels < kMaxLevels)
      level_sum[levels++] = extract_level(t, sigma_above(residual), &residual);
    if (residual == 0) {
      for (int l = 0; l < levels; ++l) acc.add(level_sum[l]);
      streak = 0;
      continue;
    }
    // Too wide for the levels: bin the block instead, and the next few
    // blocks straight away (wide data tends to stay wide).
    to_bins(xb, yb, len);
    skip = std::min(1 << std::min(++streak, 6), 64);
  }
  if constexpr (product) product_bins.flush(acc);
  else bins.flush(acc);
}

template <class T, Terms K>
void accumulate_parallel(const T* x, const T* y, std::size_t n, ExactAccumulator& acc, unsigned max_threads) {
  constexpr std::size_t kParallelFrom = std::size_t(1) << 21;
  const std::size_t parts = n < kParallelFrom ? 1 : std::max(1u, max_threads);
  if (parts == 1) return accumulate_serial<T, K>(x, y, n, acc);
  // Equal shares on block boundaries; each thread has its own accumulator,
  // merged exactly at the end.
  const std::size_t share = (n / parts) / kBlock * kBlock;
  std::vector<ExactAccumulator> partial(parts - 1);
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < parts; ++t) {
    const std::size_t begin = t * share, end = t + 1 == parts ? n : (t + 1) * share;
    workers.emplace_back([=, &partial] {
      accumulate_serial<T, K>(x + begin, y ? y + begin : nullptr, end - begin, partial[t - 1]);
    });
  }
  accumulate_serial<T, K>(x, y, share, acc);
  for (auto& w : workers) w.join();
  for (const auto& p : partial) acc.merge(p);
}

}  // namespace

template <class T>
void accumulate(Terms terms, std::span<const T> x, std::span<const T> y, ExactAccumulator& acc,
                unsigned max_threads) {
  if (is_product(terms) && y.size() != x.size())
    throw std::invalid_argument("exact dot product: the two vectors differ in length");
  const T* xp = x.data();
  const T* yp = y.data();
  const std::size_t n = x.size();
  switch (terms) {
    case Terms::value: return accumulate_parallel<T, Terms::value>(xp, nullptr, n, acc, max_threads);
    case Terms::magnitude: return accumulate_parallel<T, Terms::magnitude>(xp, nullptr, n, acc, max_threads);
    case Terms::square: return accumulate_parallel<T, Terms::square>(xp, nullptr, n, acc, max_threads);
    case Terms::product: return accumulate_parallel<T, Terms::product>(xp, yp, n, acc, max_threads);
    case Terms::product_magnitude:
      return accumulate_parallel<T, Terms::product_magnitude>(xp, yp, n, acc, max_threads);
  }
}

template void accumulate<float>(Terms, std::span<const float>, std::span<const float>,
                                  ExactAccumulator&, unsigned);
template void accumulate<Fp16>(Terms, std::span<const Fp16>, std::span<const Fp16>,
                                  ExactAccumulator&, unsigned);
template void accumulate<Bf16>(Terms, std::span<const Bf16>, std::span<const Bf16>,
                                  ExactAccumulator&, unsigned);
template void accumulate<Fp8E4M3>(Terms, std::span<const Fp8E4M3>, std::span<const Fp8E4M3>,
                                  ExactAccumulator&, unsigned);
template void accumulate<Fp8E5M2>(Terms, std::span<const Fp8E5M2>, std::span<const Fp8E5M2>,
                                  ExactAccumulator&, unsigned);

ExactReal exact_reduce(Terms terms, const TypedArray& x, const TypedArray* y) {
  if (is_product(terms) && (y == nullptr || y->dtype() != x.dtype() || y->size() != x.size()))
    throw std::invalid_argument("exact dot product: needs a second vector of the same format and length");
  ExactAccumulator acc;
  visit_typed(x, [&](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    std::span<const T> ys;
    if (is_product(terms)) ys = y->as<T>();
    accumulate<T>(terms, std::span<const T>(v), ys, acc);
  });
  return acc.value();
}

ExactReal exact_variance_numerator(const ExactReal& sum, const ExactReal& sumsq, std::size_t n) {
  return exact_sub(exact_mul(exact_from_uint(n), sumsq), exact_mul(sum, sum));
}

ExactReal exact_variance_numerator(const TypedArray& x) {
  return exact_variance_numerator(exact_sum(x), exact_sumsq(x), x.size());
}

}  // namespace ulpscope
