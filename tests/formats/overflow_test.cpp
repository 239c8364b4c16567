// Hard cases kept as a table (STYLE.md, 3): the overflow thresholds of each
// format in both saturation modes, infinities and NaN, the underflow edge.
// Each row goes through the run-time entry point round_to_dtype, and the
// exhaustive midpoint sweep covers everything in between.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "formats/dtype.hpp"
#include "formats/round_to_dtype.hpp"
#include "pattern_kind.hpp"

namespace ulpscope::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxF = 0x1.fffffep127;

double above(double x) { return std::nextafter(x, kInf); }
double below(double x) { return std::nextafter(x, -kInf); }

struct Row {
  Dtype dtype;
  Saturation sat;
  double input;
  double want;
};

const Row kRows[] = {
    // fp16: 65504 + 16 is the midpoint to 2^16; 65504's fraction is odd, so
    // the tie goes up and overflows.
    {Dtype::fp16, Saturation::nosat, 65504.0, 65504.0},
    {Dtype::fp16, Saturation::nosat, 65504.0 + 15, 65504.0},
    {Dtype::fp16, Saturation::nosat, below(65520.0), 65504.0},
    {Dtype::fp16, Saturation::nosat, 65520.0, kInf},
    {Dtype::fp16, Saturation::nosat, -65520.0, -kInf},
    {Dtype::fp16, Saturation::nosat, 1e300, kInf},
    {Dtype::fp16, Saturation::nosat, kInf, kInf},
    {Dtype::fp16, Saturation::nosat, -kInf, -kInf},
    {Dtype::fp16, Saturation::satfinite, 65520.0, 65504.0},
    {Dtype::fp16, Saturation::satfinite, -kInf, -65504.0},
    {Dtype::fp16, Saturation::nosat, 0x1p-25, 0.0},
    {Dtype::fp16, Saturation::nosat, above(0x1p-25), 0x1p-24},
    {Dtype::fp16, Saturation::nosat, -0x1p-25, -0.0},
    {Dtype::fp16, Saturation::nosat, 0x1.8p-24, 0x1p-23},
    // bf16: the largest finite is 0x1.fep127 (odd fraction).
    {Dtype::bf16, Saturation::nosat, 0x1.ffp127, kInf},
    {Dtype::bf16, Saturation::nosat, below(0x1.ffp127), 0x1.fep127},
    {Dtype::bf16, Saturation::satfinite, 0x1.ffp127, 0x1.fep127},
    {Dtype::bf16, Saturation::nosat, 0x1p-134, 0.0},
    {Dtype::bf16, Saturation::nosat, above(0x1p-134), 0x1p-133},
    // fp8_e4m3: 464 is the midpoint between 448 (fraction 110) and 480
    // (fraction 111, the NaN pattern), so it ties down to 448; anything
    // above overflows: NaN without saturation, 448 with it.
    {Dtype::fp8_e4m3, Saturation::nosat, 448.0, 448.0},
    {Dtype::fp8_e4m3, Saturation::nosat, 464.0, 448.0},
    {Dtype::fp8_e4m3, Saturation::nosat, above(464.0), kNaN},
    {Dtype::fp8_e4m3, Saturation::nosat, -above(464.0), kNaN},
    {Dtype::fp8_e4m3, Saturation::nosat, 480.0, kNaN},
    {Dtype::fp8_e4m3, Saturation::nosat, kInf, kNaN},
    {Dtype::fp8_e4m3, Saturation::nosat, -kInf, kNaN},
    {Dtype::fp8_e4m3, Saturation::satfinite, 464.0, 448.0},
    {Dtype::fp8_e4m3, Saturation::satfinite, above(464.0), 448.0},
    {Dtype::fp8_e4m3, Saturation::satfinite, -1e10, -448.0},
    {Dtype::fp8_e4m3, Saturation::satfinite, kInf, 448.0},
    {Dtype::fp8_e4m3, Saturation::satfinite, -kInf, -448.0},
    {Dtype::fp8_e4m3, Saturation::satfinite, kNaN, kNaN},
    {Dtype::fp8_e4m3, Saturation::nosat, 0x1p-10, 0.0},
    {Dtype::fp8_e4m3, Saturation::nosat, above(0x1p-10), 0x1p-9},
    // fp8_e5m2: 57344 + 4096 is the midpoint to 2^16 (57344's fraction 11 is odd).
    {Dtype::fp8_e5m2, Saturation::nosat, 57344.0, 57344.0},
    {Dtype::fp8_e5m2, Saturation::nosat, below(61440.0), 57344.0},
    {Dtype::fp8_e5m2, Saturation::nosat, 61440.0, kInf},
    {Dtype::fp8_e5m2, Saturation::nosat, -61440.0, -kInf},
    {Dtype::fp8_e5m2, Saturation::satfinite, 61440.0, 57344.0},
    {Dtype::fp8_e5m2, Saturation::satfinite, kInf, 57344.0},
    {Dtype::fp8_e5m2, Saturation::satfinite, -kInf, -57344.0},
    {Dtype::fp8_e5m2, Saturation::nosat, kNaN, kNaN},
    {Dtype::fp8_e5m2, Saturation::nosat, 0x1p-17, 0.0},
    {Dtype::fp8_e5m2, Saturation::nosat, above(0x1p-17), 0x1p-16},
    // fp32, through the same rule.
    {Dtype::fp32, Saturation::nosat, 0x1.ffffffp127, kInf},
    {Dtype::fp32, Saturation::nosat, below(0x1.ffffffp127), kMaxF},
    {Dtype::fp32, Saturation::satfinite, 0x1.ffffffp127, kMaxF},
    {Dtype::fp32, Saturation::satfinite, -kInf, -kMaxF},
    {Dtype::fp32, Saturation::nosat, 0x1p-150, 0.0},
    {Dtype::fp32, Saturation::nosat, above(0x1p-150), 0x1p-149},
    {Dtype::fp32, Saturation::nosat, -0x1p-150, -0.0},
    // fp64 is the identity.
    {Dtype::fp64, Saturation::nosat, 0x1.fffffffffffffp1023, 0x1.fffffffffffffp1023},
    {Dtype::fp64, Saturation::satfinite, -0.0, -0.0},
};

TEST(OverflowAndUnderflow, HardCasesRoundAsTabled) {
  for (const Row& r : kRows) {
    const double got = round_to_dtype(r.input, r.dtype, r.sat);
    EXPECT_TRUE(same_value(got, r.want)) << to_string(r.dtype) << " " << to_string(r.sat) << ": "
                                         << show(r.input) << " -> " << show(got) << ", want "
                                         << show(r.want);
  }
}

// The table against the MPFR model, so that a wrong row cannot hide.
TEST(OverflowAndUnderflow, TableAgreesWithMpfr) {
  const MpfrFormat models[] = {MpfrFormat::of<Fp32Format>(), MpfrFormat::of<Fp16Format>(),
                               MpfrFormat::of<Bf16Format>(), MpfrFormat::of<Fp8E4M3Format>(),
                               MpfrFormat::of<Fp8E5M2Format>()};
  const Dtype dtypes[] = {Dtype::fp32, Dtype::fp16, Dtype::bf16, Dtype::fp8_e4m3, Dtype::fp8_e5m2};
  for (const Row& r : kRows)
    for (int i = 0; i < 5; ++i) {
      if (dtypes[i] != r.dtype) continue;
      EXPECT_TRUE(same_value(models[i].round(r.input, r.sat), r.want))
          << to_string(r.dtype) << " " << show(r.input);
    }
}

}  // namespace
}  // namespace ulpscope::test
