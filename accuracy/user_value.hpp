#pragma once
// A result that another tool gave (--check), read into an output format and
// scored against a reference (docs/spec.md, "Metrics": values you got
// elsewhere). formats/round_trip_decimal.hpp writes values back in decimal.
#include <stdexcept>
#include <string>
#include <string_view>

#include "accuracy/cell.hpp"
#include "formats/dtype.hpp"
#include "kernels/op.hpp"
#include "reference/op_reference.hpp"

namespace ulpscope {

struct UserValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A decimal ("4444", "4.448e3", "-0.1", "4444."), a hex-float ("0x1.16p+12"),
// "inf", "-inf" or "nan" (any case), rounded once to the nearest value of
// `out` (ties to even, from the text's exact value). *exact says whether
// the text was already a value of `out`. Throws UserValueError, one line,
// for anything else, for a finite value beyond the format's largest finite
// value and for an infinity the format does not have.
double read_user_value(std::string_view text, Dtype out, bool* exact = nullptr);

// The value scored against the problem's reference, as the cells are:
// ulp_error and correctly_rounded of docs/spec.md, "Metrics".
UserValueCheck check_user_value(std::string label, std::string given, Op op, Dtype out, Saturation sat,
                                const Reference& reference);

}  // namespace ulpscope
