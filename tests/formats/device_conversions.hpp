#pragma once
// The GPU side of device_conversion_test.cpp, kept free of fmt and GoogleTest
// (nvcc's front end rejects fmt 9's consteval format strings).
#include <cstdint>
#include <string>
#include <vector>

namespace ulpscope::test {

struct DeviceConversions {
  std::string error;                   // a CUDA error, if any
  std::vector<std::uint32_t> ours;     // per input: encode<F> nosat, satfinite
  std::vector<std::uint32_t> theirs;   // per input: NVIDIA's from float nosat, satfinite; from double nosat, satfinite
  std::vector<double> ours_decode;     // per pattern: decode<F>
  std::vector<double> their_decode;    // per pattern: NVIDIA's widening
};

bool have_gpu();

// F is one of Fp16Format, Bf16Format, Fp8E4M3Format, Fp8E5M2Format
// (instantiated in device_conversions.cu). fp16 and bf16 have no satfinite
// conversion: their satfinite slots repeat the nosat result.
template <class F>
DeviceConversions convert_on_device(const std::vector<double>& inputs);

}  // namespace ulpscope::test
