#include "formats/dtype.hpp"

#include <cmath>
#include <limits>

#include "formats/binary_format.hpp"

namespace ulpscope {
namespace {

template <class F>
constexpr FormatInfo info_of(std::string_view name) {
  return FormatInfo{name,
                    F::bits,
                    F::precision,
                    F::emin,
                    F::emax,
                    F::has_infinity,
                    F::max_finite(),
                    F::min_normal(),
                    F::min_subnormal()};
}

const std::array<FormatInfo, 6> kInfos = {
    FormatInfo{"fp64", 64, 53, -1022, 1023, true, std::numeric_limits<double>::max(),
               std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min()},
    FormatInfo{"fp32", 32, 24, -126, 127, true, double(std::numeric_limits<float>::max()),
               double(std::numeric_limits<float>::min()),
               double(std::numeric_limits<float>::denorm_min())},
    info_of<Fp16Format>("fp16"),
    info_of<Bf16Format>("bf16"),
    info_of<Fp8E4M3Format>("fp8_e4m3"),
    info_of<Fp8E5M2Format>("fp8_e5m2"),
};

}  // namespace

const FormatInfo& format_info(Dtype d) { return kInfos[static_cast<std::size_t>(d)]; }

std::string_view to_string(Dtype d) { return format_info(d).name; }

std::string_view to_string(Saturation s) {
  return s == Saturation::satfinite ? "satfinite" : "nosat";
}

std::optional<Dtype> parse_dtype(std::string_view name) {
  for (std::size_t i = 0; i < kInfos.size(); ++i)
    if (kInfos[i].name == name) return static_cast<Dtype>(i);
  return std::nullopt;
}

}  // namespace ulpscope
