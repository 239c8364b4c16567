#pragma once
// SPEC.md, "Kernel shapes": the order in which a kernel adds.
#include <cstdint>

#include "formats/named_enum.hpp"

namespace ulpscope {

enum class Shape : std::uint8_t {
  serial,             // one running value, index order (CPU only; Higham's recursive summation)
  tree,               // grid-stride per thread, warp shuffle, block reduce, deterministic second pass
  atomic,             // block partials combined by atomicAdd: order varies run to run
  cub,                // cub::DeviceReduce / DeviceSegmentedReduce (GPU only, no model)
  cub_deterministic,  // cub::DeviceReduce with gpu_to_gpu determinism (CCCL >= 3.1; GPU only)
};

inline constexpr NameTable<Shape, 5> kShapeNames = {{{Shape::serial, "serial"},
                                                     {Shape::tree, "tree"},
                                                     {Shape::atomic, "atomic"},
                                                     {Shape::cub, "cub"},
                                                     {Shape::cub_deterministic, "cub_deterministic"}}};

constexpr std::string_view to_string(Shape s) { return name_in(kShapeNames, s); }

// NVIDIA's code has its own order and no model (SPEC.md, "Kernel shapes").
constexpr bool has_cpu_model(Shape s) { return s != Shape::cub && s != Shape::cub_deterministic; }
constexpr bool runs_on_gpu(Shape s) { return s != Shape::serial; }
constexpr bool is_deterministic_order(Shape s) { return s != Shape::atomic; }

}  // namespace ulpscope
