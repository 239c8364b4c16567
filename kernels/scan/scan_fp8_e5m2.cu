// The fp8_e5m2 scan kernels (scan_formats.cuh).
#include "formats/small_float.hpp"
#include "kernels/scan/scan_formats.cuh"

namespace ulpscope::scan {
ULPSCOPE_SCAN_DEFINE(fp8_e5m2, Fp8E5M2Format, Fp8E5M2, float)
}  // namespace ulpscope::scan
