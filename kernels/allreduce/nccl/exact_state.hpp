#pragma once
// The exact all-reduce's arithmetic on one element, for host and device
// (docs/nccl-allreduce.md, "The exact method"). Each rank turns its value into
// an integer that NCCL sums; an integer sum is exact and associative, so the
// total is the same bits for any P, algorithm, protocol and rank order, and
// one rounding of it is the correctly rounded sum.
//
// 1. exponent_byte: the value's exponent field as one byte; an ncclMax
//    all-reduce of it gives each element the largest exponent among the
//    ranks, `top` (0: every rank holds -0; 255: an infinity or NaN somewhere).
// 2. window_word: the value as an integer in units of 2^(e(top) - (p - 1) -
//    k), k = window_binades(P): exact for every value at most k binades below
//    the largest (or with enough trailing zeros); a value below the window
//    adds 2^C instead (C = kCountShift), a count of the values that did not
//    fit. Every fitted value is below 2^(p + k) in magnitude, so the P of
//    them sum to below 2^(C - 1) and the count's bits never mix with the sum.
// 3. finish: the low C bits of the total (sign-extended) are the exact sum
//    in window units, the bits above them the count. With no value lost, it
//    is rounded once (round_scaled_bits; the mean through ExactFinish's
//    round_quotient); otherwise the element goes to the second round.
// 4. second round (rare): the flagged elements' raw values are exchanged
//    (an all-reduce of one slot a rank: an all-gather that NCCL's Tree also
//    runs) and every rank sums its P values in an ExactFinish long integer,
//    flags for infinities and NaN included, and rounds once.
#include <cstdint>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/accumulators/exact_finish.hpp"
#include "kernels/integer_log2.hpp"
#include "kernels/out_format.hpp"

namespace ulpscope::allreduce {

// F: Fp32Format, Fp16Format or Bf16Format; Word: the unsigned integer NCCL
// sums (ncclUint32 or ncclUint64: unsigned, so that the count's bits wrap
// as defined behaviour; read as two's complement).
template <class F, class Word, Dtype D>
struct ExactAllreduceState {
  using Format = F;
  using storage = typename F::storage;
  static constexpr Dtype dtype = D;
  static constexpr int word_bits = int(8 * sizeof(Word));
  // The count of lost values lives at 2^C and above: 5 bits of an int32 (P
  // up to 31), 6 bits of an int64 (P up to 63).
  static constexpr int kCountShift = word_bits == 32 ? 27 : 58;
  static constexpr int max_ranks = (1 << (word_bits - kCountShift)) - 1;
  static constexpr std::uint8_t kAllMinusZero = 0, kSpecial = 255;

  // k: P values below 2^(p + k) sum to below 2^(C - 1).
  ULPSCOPE_HD static constexpr int window_binades(int ranks) {
    return kCountShift - 1 - F::precision - ceil_log2(ranks);
  }

  ULPSCOPE_HD static std::uint32_t field_of(std::uint32_t b) { return (b >> F::man_bits) & F::exp_all_ones; }

  // 0 for -0, 255 for an infinity or NaN, else max(field, 1): subnormals
  // share field 1's quantum, and +0 is above -0 so that a max of 0 means
  // every rank holds -0 (whose sum is -0, IEEE 754-2019 6.3).
  ULPSCOPE_HD static std::uint8_t exponent_byte(std::uint32_t b) {
    const std::uint32_t field = field_of(b);
    if (field == F::exp_all_ones) return kSpecial;
    if (b == F::sign_mask) return kAllMinusZero;
    return std::uint8_t(field ? field : 1u);
  }

  // The exponent of the window's unit for an element whose largest exponent byte is top.
  ULPSCOPE_HD static int unit_exponent(std::uint8_t top, int k) { return int(top) - F::bias - F::man_bits - k; }

  ULPSCOPE_HD static Word window_word(std::uint32_t b, std::uint8_t top, int k) {
    if (top == kAllMinusZero || top == kSpecial) return 0;
    const std::uint32_t field = field_of(b);
    const std::uint32_t m = (b & F::man_mask) | (field ? (1u << F::man_bits) : 0u);
    // m * 2^(max(field, 1) - bias - man_bits) on the unit 2^unit_exponent:
    // a shift s <= k, as field <= top.
    const int s = int(field ? field : 1u) - int(top) + k;
    Word v = 0;
    bool lost = false;
    if (m == 0) v = 0;
    else if (s >= 0) v = Word(m) << s;
    else if (-s < F::precision && (m & ((1u << -s) - 1u)) == 0) v = Word(m >> -s);
    else lost = true;
    if (b & F::sign_mask) v = Word(0) - v;
    return lost ? Word(v + (Word(1) << kCountShift)) : v;
  }

  // The long integer of the finishing arithmetic: its unit below every
  // window's (k < 64) and its top above P times the largest finite value.
  static constexpr int kLow = F::emin - F::man_bits - 64;
  static constexpr int kDigits = (F::emax + 1 + 6 - kLow) / 32 + 2;
  using Finish = ExactFinish<kLow, kDigits>;
  using Partial = typename Finish::Partial;

  // Adds +-a * 2^e (a < 2^64, e >= kLow) to p's digits.
  ULPSCOPE_HD static void deposit(Partial& p, std::uint64_t a, int e, bool neg) {
    const int pos = e - kLow;
    const int j = pos / 32;
    const unsigned __int128 t = static_cast<unsigned __int128>(a) << (pos % 32);
    const std::int64_t d[3] = {std::int64_t(std::uint64_t(t) & 0xFFFFFFFFull),
                               std::int64_t(std::uint64_t(t >> 32) & 0xFFFFFFFFull), std::int64_t(t >> 64)};
    for (int i = 0; i < 3 && j + i < kDigits; ++i) p.limb[j + i] += neg ? -d[i] : d[i];
  }

  ULPSCOPE_HD static double rounded_quotient(const Partial& p, int ranks) {
    double total;
    return Finish::round_quotient(p, ranks, out_format(D), total);
  }

  // The element's result bits from its total and top; second_round: the
  // element needs the second round (the bits returned are then meaningless).
  ULPSCOPE_HD static storage finish(Word total, std::uint8_t top, int k, int ranks, bool mean, bool& second_round) {
    second_round = false;
    if (top == kAllMinusZero) return storage(F::sign_mask);
    if (top == kSpecial) {
      second_round = true;
      return 0;
    }
    constexpr Word low_mask = (Word(1) << kCountShift) - 1, half = Word(1) << (kCountShift - 1);
    // Sign-extend the low C bits: the sum in window units, |sum| < 2^(C - 1).
    const std::int64_t sum = std::int64_t(std::uint64_t((total & low_mask) ^ half)) - std::int64_t(half);
    if (((total - Word(sum)) >> kCountShift) != 0) {  // values that did not fit the window
      second_round = true;
      return 0;
    }
    if (sum == 0) return 0;  // +0: an exact zero sum of terms not all -0 (IEEE 754-2019 6.3)
    const bool neg = sum < 0;
    const std::uint64_t a = neg ? std::uint64_t(-sum) : std::uint64_t(sum);
    const int unit = unit_exponent(top, k);
    double r;
    if (!mean || (ranks & (ranks - 1)) == 0) {
      // A sum, or a mean over a power of two: the division only moves the exponent.
      const int nb = bit_width(a);
      const int e = unit + nb - 1 - (mean ? ceil_log2(ranks) : 0);
      r = round_scaled_bits(a << (64 - nb), e, false, neg, out_format(D));
    } else {
      Partial p = Finish::identity();
      p.flags = Finish::kNotMinusZero;
      deposit(p, a, unit, neg);
      r = rounded_quotient(p, ranks);
    }
    return storage(encode<F>(r));
  }

  // The correctly rounded sum (or mean) of the ranks values at v[0],
  // v[stride], ...: the second round's exact sum, non-finite values as IEEE
  // says (a NaN, or infinities of both signs, give NaN).
  ULPSCOPE_HD static storage exact_of_values(const storage* v, std::size_t stride, int ranks, bool mean) {
    Partial p = Finish::identity();
    for (int r = 0; r < ranks; ++r) {
      const std::uint32_t b = v[std::size_t(r) * stride];
      const std::uint32_t field = field_of(b);
      const bool neg = (b & F::sign_mask) != 0;
      if (field == F::exp_all_ones) {
        p.flags |= (b & F::man_mask) ? Finish::kNan : (neg ? Finish::kNegInf : Finish::kPosInf);
        continue;
      }
      if (b != F::sign_mask) p.flags |= Finish::kNotMinusZero;
      const std::uint32_t m = (b & F::man_mask) | (field ? (1u << F::man_bits) : 0u);
      if (m != 0) deposit(p, m, int(field ? field : 1u) - F::bias - F::man_bits, neg);
    }
    const double r = mean ? rounded_quotient(p, ranks) : Finish::round(p, out_format(D));
    return storage(encode<F>(r));
  }
};

using ExactFp32 = ExactAllreduceState<Fp32Format, std::uint64_t, Dtype::fp32>;
using ExactFp16 = ExactAllreduceState<Fp16Format, std::uint32_t, Dtype::fp16>;
using ExactBf16 = ExactAllreduceState<Bf16Format, std::uint32_t, Dtype::bf16>;

}  // namespace ulpscope::allreduce
