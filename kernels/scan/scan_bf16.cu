// The bf16 scan kernels (scan_formats.cuh).
#include "formats/small_float.hpp"
#include "kernels/scan/scan_formats.cuh"

namespace ulpscope::scan {
ULPSCOPE_SCAN_DEFINE(bf16, Bf16Format, Bf16, Bf16)
}  // namespace ulpscope::scan
