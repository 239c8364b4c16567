// The fp16 scan kernels (scan_formats.cuh).
#include "formats/small_float.hpp"
#include "kernels/scan/scan_formats.cuh"

namespace ulpscope::scan {
ULPSCOPE_SCAN_DEFINE(fp16, Fp16Format, Fp16, Fp16)
}  // namespace ulpscope::scan
