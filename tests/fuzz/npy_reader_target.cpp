#include <optional>
#include <stdexcept>

#include "accuracy/input_file.hpp"
#include "tests/fuzz/fuzz_targets.hpp"
#include "tests/fuzz/memory_file.hpp"
#include "tests/fuzz/refusal.hpp"

namespace ulpscope::fuzz {
namespace {

// What read_npy promises of what it returns (accuracy/input_file.hpp).
void check_loaded(const LoadedInput& in) {
  if (in.ndim != 1 && in.ndim != 2) throw std::logic_error("read_npy returned ndim " + std::to_string(in.ndim));
  if (in.rows < 0 || in.cols < 0 || std::uint64_t(in.rows) * std::uint64_t(in.cols) != in.values.size())
    throw std::logic_error("read_npy returned a shape that does not hold its values");
}

}  // namespace

bool npy_reader(Bytes data) {
  const std::string& path = memory_file_holding(data);
  bool read = false;
  for (const std::optional<Dtype> requested :
       {std::optional<Dtype>(), std::optional(Dtype::fp32), std::optional(Dtype::fp16), std::optional(Dtype::bf16),
        std::optional(Dtype::fp8_e4m3), std::optional(Dtype::fp8_e5m2), std::optional(Dtype::fp64)}) {
    try {
      const LoadedInput in = read_npy(path, requested);
      check_loaded(in);
      read = true;
      // The shape checks a run makes next, on what was read.
      for (const auto& [op, axis] : {std::pair(Op::sum, Axis::all), std::pair(Op::sum, Axis::inner),
                                     std::pair(Op::rmsnorm, Axis::all)}) {
        try {
          check_shape_fits(in, op, axis);
        } catch (const InputError& e) {
          expect_one_line(e);
        }
      }
    } catch (const InputError& e) {
      expect_one_line(e);
    }
  }
  return read;
}

}  // namespace ulpscope::fuzz
