// --check's values and the decimals of the --input answer: what a person
// types is read into the output format with one correct rounding, what is
// printed is read back as the same value, and a value is scored against a
// reference as the cells are.
#include "accuracy/user_value.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/binary_format.hpp"
#include "formats/hex_float.hpp"
#include "formats/round_trip_decimal.hpp"
#include "formats/typed_array.hpp"

namespace ulpscope {
namespace {

bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(ReadUserValue, DecimalsHexFloatsAndSpecialValues) {
  const struct {
    const char* text;
    Dtype out;
    double value;
    bool exact;
  } cases[] = {
      {"4444", Dtype::fp32, 4444.0, true},
      {"4444.", Dtype::fp32, 4444.0, true},  // PyTorch prints tensor(4444.)
      {"+4.448e3", Dtype::fp32, 4448.0, true},
      {"0x1.16p+12", Dtype::fp32, 4448.0, true},
      {"-0", Dtype::fp16, -0.0, true},
      {"inf", Dtype::fp32, HUGE_VAL, true},
      {"-Inf", Dtype::bf16, -HUGE_VAL, true},
      {"nan", Dtype::fp16, std::nan(""), true},
      {"NaN", Dtype::fp8_e4m3, std::nan(""), true},
      {"0.1", Dtype::fp32, double(0.1f), false},
      {"0.1", Dtype::fp64, 0.1, false},
      // fp16's neighbours of 4450 are 4448 and 4452: a tie, to even (4448).
      {"4450", Dtype::fp16, 4448.0, false},
      // 1 + 2^-11 is the fp16 midpoint between 1 and 1 + 2^-10: ties to 1.
      {"1.00048828125", Dtype::fp16, 1.0, false},
      // Just above it by 1e-24: RN gives 1 + 2^-10. Read through a double
      // it would land on the midpoint and tie down to 1.
      {"1.000488281250000000000001", Dtype::fp16, 1 + 0x1p-10, false},
      {"-1.000488281250000000000001", Dtype::fp16, -(1 + 0x1p-10), false},
      {"65519", Dtype::fp16, 65504.0, false},  // below the overflow threshold 65520
      {"1e-9", Dtype::fp16, 0.0, false},       // underflows to +0
      {"464", Dtype::fp8_e4m3, 448.0, false},  // ties down to the largest value
  };
  for (const auto& c : cases) {
    bool exact = !c.exact;
    const double v = read_user_value(c.text, c.out, &exact);
    EXPECT_TRUE(same(v, c.value)) << c.text << " in " << to_string(c.out) << ": " << hex_float(v);
    EXPECT_EQ(exact, c.exact) << c.text;
  }
}

TEST(ReadUserValue, AnythingElseIsOneClearLine) {
  const struct {
    const char* text;
    Dtype out;
    const char* phrase;
  } cases[] = {
      {"", Dtype::fp32, "expected a decimal"},
      {" 1", Dtype::fp32, "expected a decimal"},
      {"4444 ", Dtype::fp32, "expected a decimal"},
      {"abc", Dtype::fp32, "expected a decimal"},
      {"1e5x", Dtype::fp32, "expected a decimal"},
      {"tensor(4444.)", Dtype::fp32, "expected a decimal"},
      {"1e39", Dtype::fp32, "beyond fp32's largest finite value"},
      {"65520", Dtype::fp16, "beyond fp16's largest finite value"},
      {"-1e400", Dtype::fp64, "beyond fp64's largest finite value"},
      {"inf", Dtype::fp8_e4m3, "fp8_e4m3 has no infinity"},
  };
  for (const auto& c : cases) {
    try {
      read_user_value(c.text, c.out);
      ADD_FAILURE() << "'" << c.text << "' was read";
    } catch (const UserValueError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(std::string("bad --check value '") + c.text + "': ", 0), 0u) << msg;
      EXPECT_NE(msg.find(c.phrase), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

TEST(RoundTripDecimal, ShortAndReadable) {
  const struct {
    double v;
    Dtype d;
    const char* text;
  } cases[] = {
      {4448.0, Dtype::fp16, "4448"},         {4448.0, Dtype::fp32, "4448"},
      {double(0.1f), Dtype::fp32, "0.1"},    {0.1, Dtype::fp64, "0.1"},
      {-2.5, Dtype::bf16, "-2.5"},           {-0.0, Dtype::fp32, "-0"},
      {double(1e-7f), Dtype::fp32, "1e-07"}, {65504.0, Dtype::fp16, "65504"},
      {0x1p-24, Dtype::fp16, "6e-08"},       {448.0, Dtype::fp8_e4m3, "448"},
      {HUGE_VAL, Dtype::fp16, "inf"},        {std::nan(""), Dtype::bf16, "nan"},
      {double(3.4028235e38f), Dtype::fp32, "3.4028235e+38"},
  };
  for (const auto& c : cases) EXPECT_EQ(round_trip_decimal(c.v, c.d), c.text) << hex_float(c.v);
}

// Every value of the 16- and 8-bit formats, and a sample of fp32 and fp64:
// the decimal is read back (with MPFR, not the way it was found) as the
// same value.
template <class F>
void every_pattern_reads_back(Dtype d) {
  int failures = 0;
  for (std::uint32_t bits = 0; bits < (1u << F::bits) && failures < 10; ++bits) {
    const double v = decode<F>(bits);
    if (!std::isfinite(v)) continue;
    const std::string text = round_trip_decimal(v, d);
    const double back = read_user_value(text, d);
    if (!same(back, v)) {
      ++failures;
      ADD_FAILURE() << to_string(d) << " " << hex_float(v) << " written " << text << " read " << hex_float(back);
    }
  }
}

TEST(RoundTripDecimal, EverySmallFormatValueReadsBack) {
  every_pattern_reads_back<Fp16Format>(Dtype::fp16);
  every_pattern_reads_back<Bf16Format>(Dtype::bf16);
  every_pattern_reads_back<Fp8E4M3Format>(Dtype::fp8_e4m3);
  every_pattern_reads_back<Fp8E5M2Format>(Dtype::fp8_e5m2);
}

TEST(RoundTripDecimal, Fp32AndFp64SamplesReadBackAndAreShortest) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    const auto bits = std::uint32_t(rng());
    const double v = double(std::bit_cast<float>(bits));
    if (!std::isfinite(v) || v == 0) continue;
    const std::string text = round_trip_decimal(v, Dtype::fp32);
    ASSERT_TRUE(same(read_user_value(text, Dtype::fp32), v)) << hex_float(v) << " written " << text;
    // A whole number is written in full; anything else with as many
    // significant digits as fmt's shortest form of the float (Dragonbox,
    // like Python's repr of a NumPy float32).
    if (text.find_first_of(".e") == std::string::npos) {
      EXPECT_EQ(text, fmt::format("{:.0f}", v)) << hex_float(v);
      continue;
    }
    auto digits = [](const std::string& s) {
      std::size_t n = 0;
      bool leading = true;
      for (char c : s.substr(0, s.find('e'))) {
        if (c < '0' || c > '9') continue;
        if (leading && c == '0') continue;
        leading = false;
        ++n;
      }
      return n;
    };
    const std::string shortest = fmt::format("{}", float(v));
    EXPECT_EQ(digits(text), digits(shortest)) << hex_float(v) << ": " << text << " vs " << shortest;
  }
  for (int i = 0; i < 20000; ++i) {
    const double v = std::bit_cast<double>(std::uint64_t(rng()));
    if (!std::isfinite(v)) continue;
    const std::string text = round_trip_decimal(v, Dtype::fp64);
    ASSERT_TRUE(same(read_user_value(text, Dtype::fp64), v)) << hex_float(v) << " written " << text;
  }
}

TEST(CheckUserValue, ScoredAgainstTheReferenceAsTheCellsAre) {
  // fp16 4448 + 1: the exact sum 4449 rounds to 4448 in fp16 (ulp 4 there).
  const TypedArray x(std::vector<Fp16>{Fp16(4448.0), Fp16(1.0)});
  const Reference ref = sum_reference(x, {Dtype::fp16});
  const auto right = check_user_value("user value 1", "4448", Op::sum, Dtype::fp16, Saturation::nosat, ref);
  EXPECT_TRUE(right.correctly_rounded);
  EXPECT_EQ(right.ulp_error, 0.25);
  EXPECT_EQ(right.value, "0x1.16p+12");
  EXPECT_EQ(right.reference_rounded, "0x1.16p+12");
  EXPECT_EQ(right.reference_exact, "4.449e+03");
  EXPECT_EQ(right.op, "sum");
  EXPECT_EQ(right.out_dtype, "fp16");
  EXPECT_TRUE(right.given_exactly);
  const auto low = check_user_value("user value 2", "4444", Op::sum, Dtype::fp16, Saturation::nosat, ref);
  EXPECT_FALSE(low.correctly_rounded);
  EXPECT_EQ(low.ulp_error, 1.25);
  // 4450 is no fp16 value: read as 4448 (a tie, to even), said so.
  const auto tie = check_user_value("user value 3", "4450", Op::sum, Dtype::fp16, Saturation::nosat, ref);
  EXPECT_FALSE(tie.given_exactly);
  EXPECT_EQ(tie.value, "0x1.16p+12");
  EXPECT_TRUE(tie.correctly_rounded);
  const auto nan = check_user_value("user value 4", "nan", Op::sum, Dtype::fp16, Saturation::nosat, ref);
  EXPECT_FALSE(nan.ulp_error.has_value());
  EXPECT_EQ(nan.error_note, "NaN result for a finite reference");
  EXPECT_FALSE(nan.correctly_rounded);
  // An exact sum that fp32 holds: the right value is 0 ULPs away.
  const TypedArray y(std::vector<float>{1e8f, 4448.0f, -1e8f});
  const Reference exact = sum_reference(y, {Dtype::fp32});
  EXPECT_EQ(check_user_value("v", "4448", Op::sum, Dtype::fp32, Saturation::nosat, exact).ulp_error, 0.0);
  EXPECT_EQ(check_user_value("v", "4444", Op::sum, Dtype::fp32, Saturation::nosat, exact).ulp_error, 8192.0);
}

}  // namespace
}  // namespace ulpscope
