// Which kernels exist (kernels/combinations.hpp), decided once: the CPU run's
// reason is the models' own, and a GPU run keeps a model's reason before the
// GPU's own ones (its shapes, its build), as run_matrix's "not run" list shows.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "kernels/accumulator.hpp"
#include "kernels/combinations.hpp"
#include "kernels/gpu_backend.hpp"
#include "kernels/op.hpp"
#include "kernels/shape.hpp"

namespace ulpscope {
namespace {

template <class Table, class F>
void for_each_name(const Table& table, F&& f) {
  for (const auto& entry : table) f(entry.first);
}

TEST(Combinations, DecidedOnceForTheCpuAndTheGpu) {
  int exist = 0, gpu_only = 0;
  for (Dtype in : kInputDtypes)
    for_each_name(kOpNames, [&](Op op) {
      for_each_name(kAccumulatorNames, [&](Accumulator acc) {
        auto check = [&](Shape shape) {
          for (Axis axis : {Axis::all, Axis::inner, Axis::outer}) {
            const KernelSpec spec{op, in, default_out_dtype(in), acc, shape, Saturation::nosat};
            const std::optional<std::string> model = unsupported(spec, axis);
            EXPECT_EQ(unavailable_on(spec, axis, false), model);
            const std::optional<std::string> gpu = unavailable_on(spec, axis, true);
            if (has_cpu_model(shape) && model) {
              EXPECT_EQ(gpu, model);
            }
            if (GpuBackend::shape_unavailable(shape)) {
              EXPECT_TRUE(gpu.has_value());
            }
            if (!has_cpu_model(shape)) {
              EXPECT_TRUE(model.has_value()) << "a shape without a model has no CPU run";
              if (!gpu) ++gpu_only;
            }
            if (!model) ++exist;
          }
        };
        for_each_name(kShapeNames, check);
        for_each_name(kGalleryShapeNames, check);
      });
    });
  EXPECT_GT(exist, 300);
  if (!GpuBackend::shape_unavailable(Shape::cub)) {
    EXPECT_GT(gpu_only, 0);
  }
}

}  // namespace
}  // namespace ulpscope
