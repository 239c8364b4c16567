#pragma once
// A run's outputs as one 64-bit digest (docs/spec.md, "Metrics":
// reproducibility compares bit patterns), computable on the host or on the
// device in any order: the digest is the wrapping sum of one term per
// output, each a mix of the output's position and its bits. Two runs with
// the same bits at the same positions have the same digest; a change
// anywhere changes it except with probability about 2^-64 (each term is a
// SplitMix64 finaliser of a distinct input). A sum of terms, rather than a
// hash chained along the array, lets the GPU's threads and the host's cores
// each add their share, and lets a permuted run add its outputs at the
// positions they are put back to, without moving them.
#include <cstdint>
#include <cstring>

#include "formats/host_device.hpp"
#include "kernels/counter_rng.hpp"

namespace ulpscope {

// The bits that identify an output: every NaN is one key (a kernel's NaN
// payload is not a difference the report counts), every other value its
// own bits (+0 and -0 differ).
ULPSCOPE_HD inline std::uint64_t output_key(double v) {
  if (v != v) return 0x7FF8000000000000ull;
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

ULPSCOPE_HD constexpr std::uint64_t digest_term(std::uint64_t position, std::uint64_t key) {
  return mix64(mix64((position + 1) * kGoldenGamma) ^ key);
}

// The digest's starting value: the number of outputs is part of it.
ULPSCOPE_HD constexpr std::uint64_t digest_start(std::uint64_t count) { return mix64(count + kGoldenGamma); }

}  // namespace ulpscope
