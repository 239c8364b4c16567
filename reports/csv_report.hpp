#pragma once
// The report as CSV (RFC 4180): one row per cell, the JSON cell's keys as
// columns (reference split into reference_rounded and reference_exact), empty
// where the JSON has null.
#include <iosfwd>

#include "accuracy/cell.hpp"

namespace ulpscope {

void write_csv(const Report& report, std::ostream& out);

}  // namespace ulpscope
