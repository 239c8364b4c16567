#include "accuracy/user_kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "formats/small_float.hpp"

namespace ulpscope {

std::int64_t output_count(Op op, Axis axis, std::int64_t rows, std::int64_t cols) {
  if (is_elementwise_output(op) || is_scan(op)) return rows * cols;
  const std::int64_t reductions = axis == Axis::all ? 1 : axis == Axis::outer ? cols : rows;
  return reductions * components(op);
}

std::size_t element_bytes(Dtype d) { return std::size_t(format_info(d).bits / 8); }

namespace {
template <class T>
void widen_each(const void* bytes, std::size_t count, std::vector<double>& out) {
  for (std::size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, static_cast<const unsigned char*>(bytes) + i * sizeof(T), sizeof(T));
    out[i] = to_double(v);
  }
}
}  // namespace

std::vector<double> decode_outputs(const void* bytes, Dtype d, std::size_t count) {
  std::vector<double> out(count);
  switch (d) {
    case Dtype::fp64:
      if (count) std::memcpy(out.data(), bytes, count * sizeof(double));
      break;
    case Dtype::fp32: widen_each<float>(bytes, count, out); break;
    case Dtype::fp16: widen_each<Fp16>(bytes, count, out); break;
    case Dtype::bf16: widen_each<Bf16>(bytes, count, out); break;
    case Dtype::fp8_e4m3: widen_each<Fp8E4M3>(bytes, count, out); break;
    case Dtype::fp8_e5m2: widen_each<Fp8E5M2>(bytes, count, out); break;
  }
  return out;
}

bool has_device_form(const UserKernel& k) { return k.run_device || k.isolated_device; }

std::vector<Axis> kernel_axes(const UserKernel& k) {
  if (!k.axes.empty()) return k.axes;
  return {is_elementwise_output(k.op) ? Axis::inner : Axis::all};
}

std::vector<LaunchConfig> kernel_configs(const UserKernel& k) {
  if (!k.configs.empty()) return k.configs;
  return {LaunchConfig{}};
}

std::string describe_problem(const UserKernel& k) {
  if (k.name.empty()) return "it has no name";
  if (k.name.find_first_of(" \t\n,") != std::string::npos) return "its name has a space or a comma";
  if (!k.run_host && !has_device_form(k) && !k.model) return "it has neither run_host nor run_device";
  if (k.in == Dtype::fp64) return "fp64 is an output format only";
  if (is_elementwise_output(k.op)) {
    for (Axis a : k.axes)
      if (a != Axis::inner) return fmt::format("{} normalises rows: its axes must be inner", to_string(k.op));
  }
  return {};
}

}  // namespace ulpscope
