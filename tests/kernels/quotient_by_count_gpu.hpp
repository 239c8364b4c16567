#pragma once
// The exhaustive check of quotient_by_count.hpp on the device (kept out of the
// GoogleTest translation unit: nvcc compiles it in a few seconds alone).
#include <cstdint>
#include <string>

namespace ulpscope::test {

struct QuotientMismatches {
  unsigned long long table = 0;     // entries of the table that are not RN(1/n)
  unsigned long long quotient = 0;  // quotients unlike the division, in bits
};

// Every n of the table against every significand of d with the given sign bit
// and biased exponent field (sign_exponent << 23 | significand). False with
// the CUDA error in *error when a call fails.
bool count_quotient_mismatches(std::uint32_t sign_exponent, QuotientMismatches* out, std::string* error);

}  // namespace ulpscope::test
