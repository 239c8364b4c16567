#include "accuracy/matrix_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "kernels/gpu_backend.hpp"
#include "kernels/model.hpp"

namespace ulpscope::matrix {

std::vector<std::pair<Op, Axis>> problems_of(const MatrixSettings& s, std::int64_t n, bool has_y, NotRun* not_run) {
  std::vector<std::pair<Op, Axis>> out;
  for (Op op : s.ops) {
    for (Axis axis : is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s.axes) {
      const auto skip = [&](std::string why) {
        std::pair<std::string, std::string> entry{fmt::format("{} n={} axis={}", to_string(op), n, to_string(axis)),
                                                  std::move(why)};
        if (not_run && std::find(not_run->begin(), not_run->end(), entry) == not_run->end())
          not_run->push_back(std::move(entry));
      };
      if (takes_second_input(op) && !has_y) {
        skip("needs a second input y; an --input file gives x only");
        continue;
      }
      const std::int64_t cols = std::min<std::int64_t>(s.row_cols, std::max<std::int64_t>(n, 1));
      if (axis != Axis::all && n % cols != 0) {
        skip(fmt::format("not a whole number of rows of {}", cols));
        continue;
      }
      out.emplace_back(op, axis);
    }
  }
  return out;
}

void list_shape_gaps(const MatrixSettings& s, bool gpu, NotRun& not_run) {
  for (Op op : s.ops)
    for (Axis axis : is_elementwise_output(op) ? std::vector<Axis>{Axis::inner} : s.axes)
      for (Shape shape : s.shapes) {
        if (gpu ? bool(GpuBackend::shape_unavailable(shape)) : !has_cpu_model(shape)) continue;
        for (Dtype d : s.dtypes) {
          std::optional<std::string> why;
          bool any = false;
          for (Accumulator acc : s.accumulators) {
            const KernelSpec spec{op, d, s.out_dtype.value_or(default_out_dtype(d)), acc, shape, s.saturation};
            const std::optional<std::string> reason = unavailable_on(spec, axis, gpu);
            if (!reason) {
              any = true;
              break;
            }
            if (!why) why = reason;
          }
          if (any || !why) continue;
          std::pair<std::string, std::string> entry{
              fmt::format("{} {} axis={} shape={}", to_string(op), to_string(d), to_string(axis), to_string(shape)),
              *why};
          if (std::find(not_run.begin(), not_run.end(), entry) == not_run.end()) not_run.push_back(std::move(entry));
        }
      }
}

}  // namespace ulpscope::matrix
