#include "reference/exact_accumulator.hpp"

#include <gmp.h>

#include <array>
#include <cstring>

namespace ulpscope {

namespace {
constexpr std::uint32_t kAddsBeforeCarry = 1u << 30;
constexpr std::int64_t kDigitMask = (std::int64_t(1) << ExactAccumulator::kLimbBits) - 1;
}  // namespace

void ExactAccumulator::add_digits(std::int64_t m, int e) {
  const int pos = e - kLowestExponent;
  const int k = pos / kLimbBits, r = pos % kLimbBits;
  // |m| < 2^63 and r < 32: the shifted value fits 95 bits.
  const __int128 t = static_cast<__int128>(m) * (static_cast<__int128>(1) << r);
  limb_[k] += static_cast<std::int64_t>(t) & kDigitMask;
  limb_[k + 1] += static_cast<std::int64_t>(t >> kLimbBits) & kDigitMask;
  limb_[k + 2] += static_cast<std::int64_t>(t >> (2 * kLimbBits));
  if (++adds_since_normalize_ == kAddsBeforeCarry) normalize();
}

void ExactAccumulator::normalize() {
  std::int64_t carry = 0;
  for (int k = 0; k < kLimbs - 1; ++k) {
    const std::int64_t v = limb_[k] + carry;
    limb_[k] = v & kDigitMask;
    carry = v >> kLimbBits;  // arithmetic shift: floor division
  }
  limb_[kLimbs - 1] += carry;
  adds_since_normalize_ = 0;
}

void ExactAccumulator::add_scaled(std::int64_t m, int e) {
  saw_term_ = true;
  if (m == 0) return add_zeros(false, 0);
  saw_non_negative_zero_ = true;
  add_digits(m, e);
}

void ExactAccumulator::add_zeros(bool negative, std::uint64_t count) {
  if (count == 0) return;
  saw_term_ = true;
  if (!negative) saw_non_negative_zero_ = true;
}

void ExactAccumulator::add(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  const bool negative = (u >> 63) != 0;
  const int field = static_cast<int>((u >> 52) & 0x7FF);
  const std::int64_t frac = static_cast<std::int64_t>(u & 0x000FFFFFFFFFFFFFull);
  saw_term_ = true;
  if (field == 0x7FF) {
    saw_non_negative_zero_ = true;
    if (frac != 0) nan_ = true;
    else (negative ? neg_inf_ : pos_inf_) = true;
    return;
  }
  if (field == 0 && frac == 0) return add_zeros(negative, 1);
  saw_non_negative_zero_ = true;
  const std::int64_t m = field == 0 ? frac : (frac | (std::int64_t(1) << 52));
  add_digits(negative ? -m : m, (field == 0 ? 1 : field) - 1075);
}

void ExactAccumulator::merge(const ExactAccumulator& other) {
  normalize();
  ExactAccumulator o = other;
  o.normalize();
  for (int k = 0; k < kLimbs; ++k) limb_[k] += o.limb_[k];
  normalize();
  nan_ |= o.nan_;
  pos_inf_ |= o.pos_inf_;
  neg_inf_ |= o.neg_inf_;
  saw_term_ |= o.saw_term_;
  saw_non_negative_zero_ |= o.saw_non_negative_zero_;
}

ExactReal ExactAccumulator::value() const {
  if (has_nan()) {
    ExactReal r(2);
    mpfr_set_nan(r.get());
    return r;
  }
  if (pos_inf_ || neg_inf_) {
    ExactReal r(2);
    mpfr_set_inf(r.get(), pos_inf_ ? 1 : -1);
    return r;
  }
  ExactAccumulator a = *this;
  a.normalize();
  // The magnitude's digits: a negative sum (its top limb below 0, every
  // digit under it in [0, 2^32)) is negated limb by limb and its carries
  // propagated again, so that only the digits its value uses are nonzero.
  std::array<std::int64_t, kLimbs>& d = a.limb_;
  const bool negative = d[kLimbs - 1] < 0;
  if (negative) {
    std::int64_t carry = 0;
    for (int k = 0; k < kLimbs - 1; ++k) {
      const std::int64_t v = carry - d[k];
      d[k] = v & kDigitMask;
      carry = v >> kLimbBits;
    }
    d[kLimbs - 1] = carry - d[kLimbs - 1];
  }
  int lo = 0, hi = kLimbs - 1;
  while (lo < kLimbs && d[lo] == 0) ++lo;
  if (lo == kLimbs) {
    ExactReal r(2);
    mpfr_set_zero(r.get(), saw_term_ && !saw_non_negative_zero_ ? -1 : 1);
    return r;
  }
  while (d[hi] == 0) --hi;
  // Digits lo .. hi, least significant first, in 32-bit words (the top limb
  // may hold more than 32 bits), then without their trailing zero bits: the
  // value's precision is the span of its own bits, nothing below or above.
  std::array<std::uint32_t, kLimbs + 1> words{};
  std::size_t n = 0;
  for (int k = lo; k <= hi; ++k) words[n++] = static_cast<std::uint32_t>(d[k]);
  if (const auto above = static_cast<std::uint64_t>(d[hi]) >> kLimbBits; above != 0)
    words[n++] = static_cast<std::uint32_t>(above);
  mpz_t z;
  mpz_init(z);
  mpz_import(z, n, -1, sizeof(std::uint32_t), 0, 0, words.data());
  const mp_bitcnt_t trailing = mpz_scan1(z, 0);
  mpz_tdiv_q_2exp(z, z, trailing);
  const auto bits = static_cast<mpfr_prec_t>(mpz_sizeinbase(z, 2));
  ExactReal r(bits < 2 ? 2 : bits);
  const long exponent = long(kLowestExponent) + long(kLimbBits) * lo + long(trailing);
  mpfr_set_z_2exp(r.get(), z, exponent, MPFR_RNDN);  // exact: the precision holds every bit
  mpz_clear(z);
  if (negative) mpfr_neg(r.get(), r.get(), MPFR_RNDN);
  return r;
}

}  // namespace ulpscope
