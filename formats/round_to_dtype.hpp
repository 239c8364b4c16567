#pragma once
// Run-time dispatch over the formats: round a double into a format (once,
// correctly) and ask for the ulp of a value there. The compile-time versions
// are in binary_format.hpp and small_float.hpp.
#include "formats/dtype.hpp"

namespace ulpscope {

// RN_F(x) for a double x, as a double (every format's values are doubles).
// For fp64 it is x itself.
double round_to_dtype(double x, Dtype d, Saturation sat = Saturation::nosat);

// Whether a double is a value of the format (NaN and infinities included where
// the format has them).
bool is_representable(double x, Dtype d);

// docs/spec.md, "Metrics": ulp_F(x) = 2^(max(e, emin) - p + 1) with e = floor(log2|x|);
// ulp_F(0) is the smallest subnormal. NaN for NaN and infinities.
double ulp_in(double x, Dtype d);

}  // namespace ulpscope
