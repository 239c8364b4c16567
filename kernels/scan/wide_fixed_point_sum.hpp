#pragma once
// exact, for the scans of bf16 and fp32 inputs (host and device): every
// value of such a format is an integer multiple of its least subnormal
// 2^Low (bf16 2^-133, fp32 2^-149) below 2^128 in magnitude, so a prefix of
// up to 2^40 values is an integer of 128 + 40 - Low + 1 bits (the sign):
// 302 for bf16, 318 for fp32, held in ten 32-bit words in two's complement
// (lowest word first). Adding is exact and associative, so every shape's
// order gives the same integer, and total() rounds it once, straight into
// the output format: each prefix is correctly rounded, the reference's bits
// (reference/exact_prefix.hpp), like FixedPointSum's (fixed_point_sum.hpp),
// with whom it shares the specials and the rounding (fixed_point_rounding.hpp).
// A prefix beyond Out's range is rounded to an infinity but not kept as
// one: only infinite terms stick, so a prefix that comes back in range is
// finite again, as the reference's.
// On the device the words are added by one chain of add.cc/addc.cc (PTX ISA,
// "Extended-Precision Integer Arithmetic Instructions"); the host adds them
// with a carry in 64 bits: the same bits.
#include <cstdint>
#include <type_traits>

#include "formats/binary_format.hpp"
#include "formats/host_device.hpp"
#include "kernels/scan/fixed_point_rounding.hpp"

namespace ulpscope::scan {

namespace wide_detail {

// a += b over N words with the carry rippling up (mod 2^(32 N)).
template <int N>
ULPSCOPE_HD inline void add_words(std::uint32_t (&a)[N], const std::uint32_t (&b)[N]) {
#if defined(__CUDA_ARCH__)
  if constexpr (N == 10) {
    asm("add.cc.u32 %0, %0, %10;\n\t"
        "addc.cc.u32 %1, %1, %11;\n\t"
        "addc.cc.u32 %2, %2, %12;\n\t"
        "addc.cc.u32 %3, %3, %13;\n\t"
        "addc.cc.u32 %4, %4, %14;\n\t"
        "addc.cc.u32 %5, %5, %15;\n\t"
        "addc.cc.u32 %6, %6, %16;\n\t"
        "addc.cc.u32 %7, %7, %17;\n\t"
        "addc.cc.u32 %8, %8, %18;\n\t"
        "addc.u32 %9, %9, %19;"
        : "+r"(a[0]), "+r"(a[1]), "+r"(a[2]), "+r"(a[3]), "+r"(a[4]), "+r"(a[5]), "+r"(a[6]), "+r"(a[7]),
          "+r"(a[8]), "+r"(a[9])
        : "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(b[4]), "r"(b[5]), "r"(b[6]), "r"(b[7]), "r"(b[8]),
          "r"(b[9]));
    return;
  }
#endif
  std::uint64_t carry = 0;
  ULPSCOPE_UNROLL
  for (int i = 0; i < N; ++i) {
    const std::uint64_t s = std::uint64_t(a[i]) + b[i] + carry;
    a[i] = static_cast<std::uint32_t>(s);
    carry = s >> 32;
  }
}

// w = -w (~w + 1, mod 2^(32 N)) where `negative`; else w stays.
template <int N>
ULPSCOPE_HD inline void negate_if(std::uint32_t (&w)[N], bool negative) {
  const std::uint32_t flip = negative ? 0xFFFFFFFFu : 0u;
  std::uint32_t one[N];
  ULPSCOPE_UNROLL
  for (int i = 0; i < N; ++i) {
    w[i] ^= flip;
    one[i] = i == 0 && negative ? 1u : 0u;
  }
  add_words(w, one);
}

}  // namespace wide_detail

template <class In, class Out>
struct WideFixedPointSum {
  static_assert(In::exp_bits == 8 && In::specials == Specials::ieee && In::man_bits <= 23,
                "bf16 and fp32 terms: float's exponent range");
  static constexpr int kLow = In::emin - In::man_bits;  // the least subnormal's exponent
  // A float term's significand has 23 - man_bits low bits that are zero in
  // In: they are dropped, so that bit 0 of the integer weighs 2^kLow.
  static constexpr int kDropped = Fp32Format::man_bits - In::man_bits;
  static constexpr int kHeadroomBits = 40;  // at least 2^40 terms
  static constexpr int kIntegerBits = In::emax + 1 + kHeadroomBits - kLow + 1;
  static constexpr int kWords = (kIntegerBits + 31) / 32;
  static_assert(kWords == 10, "the device's add chain is written for ten words");
  using in_format = In;
  using out_format = Out;
  using term_t = float;
  using value_t = double;
  struct State {
    std::uint32_t w[kWords];  // the integer, lowest word first, two's complement
    std::uint32_t flags;      // fixed_point::kNaN ...
  };
  using Partial = State;
  // The kernels move partials as 32-bit words (shuffles, coherent loads).
  static_assert(sizeof(State) == 4 * (kWords + 1) && std::is_trivially_copyable_v<State>);
  // total() is already a value of Out: storing it in Out rounds nothing.
  static constexpr bool kTotalRoundedToOut = true;

  ULPSCOPE_HD static State start() { return State{}; }
  ULPSCOPE_HD static Partial identity() { return State{}; }
  ULPSCOPE_HD static term_t term(float x) { return x; }

  // x = +-sig * 2^(pos + kLow) with sig < 2^24, pos < 254: sig << (pos % 32)
  // spans two words from pos / 32, sign-extended above them.
  ULPSCOPE_HD static void add(State& s, float x) {
    if (fixed_point::note_term(s.flags, x)) return;
    const std::uint32_t b = detail::float_bits(x);
    const std::uint32_t field = (b >> 23) & 0xFFu;
    const std::uint32_t sig = ((b & 0x7FFFFFu) | (field != 0 ? 0x800000u : 0u)) >> kDropped;
    const int pos = field != 0 ? int(field) - 1 : 0;
    const int word = pos >> 5;
    std::int64_t t = static_cast<std::int64_t>(std::uint64_t(sig) << (pos & 31));
    if (b >> 31) t = -t;
    const std::uint32_t lo = static_cast<std::uint32_t>(t);
    const std::uint32_t hi = static_cast<std::uint32_t>(static_cast<std::uint64_t>(t) >> 32);
    const std::uint32_t ext = t < 0 ? 0xFFFFFFFFu : 0u;
    std::uint32_t v[kWords];
    ULPSCOPE_UNROLL
    for (int i = 0; i < kWords; ++i) v[i] = i < word ? 0u : i == word ? lo : i == word + 1 ? hi : ext;
    wide_detail::add_words(s.w, v);
  }
  ULPSCOPE_HD static Partial partial(const State& s) { return s; }
  ULPSCOPE_HD static void merge(Partial& a, const Partial& b) {
    wide_detail::add_words(a.w, b.w);
    a.flags |= b.flags;
  }

  // For exact_double_run.hpp. The state of an exact double a, a multiple of
  // 2^kLow: +-M 2^E (M < 2^53) placed at bit E - kLow, which spans three
  // words from word (E - kLow) / 32, then negated where a < 0; a zero's sign
  // as the flags (-0 only when every term was -0).
  ULPSCOPE_HD static State from_exact_double(double a) {
    const std::uint64_t bits = detail::double_bits(a);
    const int field = int((bits >> 52) & 0x7FFu);
    std::uint64_t m = (bits & 0x000FFFFFFFFFFFFFull) | (field != 0 ? 0x0010000000000000ull : 0u);
    int pos = (field != 0 ? field : 1) - 1075 - kLow;  // bit 0 of m, in units of 2^kLow
    if (pos < 0) {  // only zeros are shifted out: a is a multiple of 2^kLow (or zero)
      m = -pos < 64 ? m >> -pos : 0;
      pos = 0;
    }
    const int word = pos >> 5, shift = pos & 31;
    const std::uint64_t low = m << shift;
    const std::uint32_t top = shift != 0 ? static_cast<std::uint32_t>(m >> (64 - shift)) : 0u;
    State s{};
    ULPSCOPE_UNROLL
    for (int i = 0; i < kWords; ++i)
      s.w[i] = i == word ? static_cast<std::uint32_t>(low)
               : i == word + 1 ? static_cast<std::uint32_t>(low >> 32)
               : i == word + 2 ? top
                               : 0u;
    wide_detail::negate_if(s.w, (bits >> 63) != 0);
    s.flags = fixed_point::flags_of_exact(a);
    return s;
  }

  // The seed S cut for a run whose items are multiples of 2^s.lsb and whose
  // partial sums are below 2^s.top (exact_double_run.hpp): with
  // |S + P_j| < 2^top, the cut q = max(kLow, top - 51) keeps |D + P_j| below
  // 2^(q + 52); S = H + L, H = floor(S / 2^q) 2^q (an arithmetic shift of the
  // words by q - kLow places), L its remainder; d = H + 2^(q - 1) where
  // L != 0 (sticky). False after a special, or where an item has bits below
  // the cut.
  static constexpr bool kCutsSeed = true;
  template <class Span>
  ULPSCOPE_HD static bool seed_in_double(const State& p, const Span& s, double& d, int& q, bool& sticky) {
    if (fixed_point::has_special(p.flags)) return false;
    const std::uint32_t ext = (p.w[kWords - 1] >> 31) != 0 ? 0xFFFFFFFFu : 0u;
    int width = 0;  // S's bits above its sign extension: |S| < 2^(width + 1) units
    ULPSCOPE_UNROLL
    for (int i = 0; i < kWords; ++i)
      if (p.w[i] != ext) width = 32 * i + fixed_point::bit_length64(p.w[i] ^ ext);
    const int top_seed = kLow + width + 1;
    const int top = (top_seed > s.top ? top_seed : s.top) + 1;
    q = top - 51 > kLow ? top - 51 : kLow;
    if (q > s.lsb) return false;
    const int cut = q - kLow, word = cut >> 5, shift = cut & 31;
    std::uint32_t a0 = ext, a1 = ext, a2 = ext, below = 0;
    ULPSCOPE_UNROLL
    for (int i = 0; i < kWords; ++i) {
      if (i == word) a0 = p.w[i];
      if (i == word + 1) a1 = p.w[i];
      if (i == word + 2) a2 = p.w[i];
      if (i < word) below |= p.w[i];
    }
    const std::uint64_t low = (std::uint64_t(a1) << 32) | a0;
    const std::uint64_t h = shift != 0 ? (low >> shift) | (std::uint64_t(a2) << (64 - shift)) : low;
    sticky = (below | (a0 & ((1u << shift) - 1u))) != 0;
    const auto units = static_cast<std::int64_t>(h);
    if (units == 0 && !sticky) d = fixed_point::zero_total(p.flags);
    else d = double(units) * detail::exact_pow2(q) + (sticky ? detail::exact_pow2(q - 1) : 0.0);
    return true;
  }

  // The prefix correctly rounded to Out, as a double (exactly that value):
  // the magnitude's top two nonzero words (at least words 1 and 0) and the
  // OR of the words below them as a sticky bit. With a word above 1 the
  // window holds 33 or more bits, so the sticky bit lies 9 or more places
  // below Out's quantum (fixed_point::rounded_to_out's condition).
  ULPSCOPE_HD static value_t total(const Partial& p) {
    double special;
    if (fixed_point::special_total(p.flags, special)) return special;
    const bool negative = (p.w[kWords - 1] >> 31) != 0;
    std::uint32_t m[kWords];
    ULPSCOPE_UNROLL
    for (int i = 0; i < kWords; ++i) m[i] = p.w[i];
    wide_detail::negate_if(m, negative);  // |integer|
    // Word by word upwards, so that every index is a constant (an index
    // computed first, m[top], would put m in local memory on the device).
    int top = 1;
    std::uint32_t hi = m[1], lo = m[0], below = 0, under = 0;  // under: the OR of m[0 .. i - 2]
    ULPSCOPE_UNROLL
    for (int i = 2; i < kWords; ++i) {
      under |= m[i - 2];
      if (m[i] != 0) {
        top = i;
        hi = m[i];
        lo = m[i - 1];
        below = under;
      }
    }
    const std::uint64_t window = ((std::uint64_t(hi) << 32) | lo) | (below != 0 ? 1u : 0u);
    if (window == 0) return fixed_point::zero_total(p.flags);
    return fixed_point::rounded_to_out<Out>(window, fixed_point::bit_length64(window), kLow + 32 * (top - 1),
                                            negative);
  }
};

}  // namespace ulpscope::scan
