// The fp8_e4m3 scan kernels (scan_formats.cuh).
#include "formats/small_float.hpp"
#include "kernels/scan/scan_formats.cuh"

namespace ulpscope::scan {
ULPSCOPE_SCAN_DEFINE(fp8_e4m3, Fp8E4M3Format, Fp8E4M3, float)
}  // namespace ulpscope::scan
