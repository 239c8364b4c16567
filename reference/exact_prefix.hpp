#pragma once
// The references of a scan (docs/spec.md, "Scans"): every inclusive prefix
// x_0 + ... + x_i exactly, each rounded once to the output format. The long
// fixed-point accumulator (exact_accumulator.hpp) takes x_i and is read out
// after each addition, so prefix i costs one addition and one read-out,
// never a new sum of i terms; a long array is cut into chunks scanned on
// their own threads, each from the exact sum of the chunks before it.
// Special values as for a sum: once a NaN (or +Inf with -Inf) has been
// added, every later prefix is NaN; a prefix of only -0 terms is -0.
#include <vector>

#include "formats/typed_array.hpp"
#include "reference/op_reference.hpp"

namespace ulpscope {

// One Reference per element of x: its exact prefix and its rounding (the
// decimal left to decimal_of).
std::vector<Reference> cumsum_reference(const TypedArray& x, OutputFormat out);

// RN_out of every prefix alone (no decimal strings): the same bits as
// cumsum_reference's `rounded`, for the exact scan's CPU model.
std::vector<double> cumsum_rounded(const TypedArray& x, OutputFormat out);

}  // namespace ulpscope
