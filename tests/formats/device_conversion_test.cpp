// On the GPU: encode<F> and decode<F> compiled for the device give the
// host's bits, and NVIDIA's device conversions (cvt.rn.f16.f32,
// cvt.rn.bf16.f32, and on sm_89+ the hardware cvt.rn.satfinite.e4m3x2.f32 /
// e5m2x2 and the fp8 -> f16 widening behind cuda_fp8.h) agree with encode<F>
// on every input of conversion_inputs.hpp and decode every pattern to the
// same value. NaN as in cuda_host_conversion_test.cpp: "both NaN". Skipped
// where there is no GPU.
#include <gtest/gtest.h>

#include "conversion_inputs.hpp"
#include "device_conversions.hpp"
#include "formats/binary_format.hpp"
#include "mismatches.hpp"
#include "pattern_kind.hpp"

namespace ulpscope::test {
namespace {

template <class F>
void expect_device_agreement() {
  const std::vector<double> inputs = inputs_for<F>();
  const DeviceConversions d = convert_on_device<F>(inputs);
  ASSERT_EQ(d.error, "");
  ASSERT_EQ(d.ours.size(), 2 * inputs.size());
  ASSERT_EQ(d.theirs.size(), 4 * inputs.size());
  Mismatches bad;
  const char* names[4] = {"from float nosat", "from float satfinite", "from double nosat", "from double satfinite"};
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const double xd = inputs[i];
    const double xf = static_cast<double>(static_cast<float>(xd));
    for (int s = 0; s < 2; ++s) {
      const Saturation sat = s == 0 ? Saturation::nosat : Saturation::satfinite;
      if (d.ours[2 * i + s] != encode<F>(xd, sat))
        bad.add(fmt::format("device encode({}, {}) = {}, host {}", show(xd), to_string(sat),
                            show_bits(d.ours[2 * i + s]), show_bits(encode<F>(xd, sat))));
    }
    for (int k = 0; k < 4; ++k) {
      const bool sat = k % 2 == 1 && F::bits == 8;
      const double in = k < 2 ? xf : xd;
      const std::uint32_t want = encode<F>(in, sat ? Saturation::satfinite : Saturation::nosat);
      const std::uint32_t got = d.theirs[4 * i + k];
      const bool agree = kind_of<F>(want) == Kind::nan ? kind_of<F>(got) == Kind::nan : got == want;
      if (!agree)
        bad.add(fmt::format("NVIDIA on the device, {}: {} -> {}, encode {}", names[k], show(in), show_bits(got),
                            show_bits(want)));
    }
  }
  for (std::uint32_t b = 0; b < (1u << F::bits); ++b) {
    if (!same_value(d.ours_decode[b], decode<F>(b)))
      bad.add(fmt::format("device decode({}) = {}", show_bits(b), show(d.ours_decode[b])));
    if (!same_value(d.their_decode[b], decode<F>(b)))
      bad.add(fmt::format("NVIDIA device widening of {} = {}, decode {}", show_bits(b), show(d.their_decode[b]),
                          show(decode<F>(b))));
  }
  EXPECT_NO_MISMATCHES(bad);
}

class OnTheGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(OnTheGpu, Fp16) { expect_device_agreement<Fp16Format>(); }
TEST_F(OnTheGpu, Bf16) { expect_device_agreement<Bf16Format>(); }
TEST_F(OnTheGpu, Fp8E4M3) { expect_device_agreement<Fp8E4M3Format>(); }
TEST_F(OnTheGpu, Fp8E5M2) { expect_device_agreement<Fp8E5M2Format>(); }

}  // namespace
}  // namespace ulpscope::test
