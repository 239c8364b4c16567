// The fp32 scan kernels (scan_formats.cuh).
#include "formats/small_float.hpp"
#include "kernels/scan/scan_formats.cuh"

namespace ulpscope::scan {
ULPSCOPE_SCAN_DEFINE(fp32, Fp32Format, float, float)
}  // namespace ulpscope::scan
