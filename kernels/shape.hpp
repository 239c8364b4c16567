#pragma once
// docs/spec.md, "Kernel shapes": the order in which a kernel adds.
#include <cstdint>

#include "formats/named_enum.hpp"

namespace ulpscope {

enum class Shape : std::uint8_t {
  serial,             // one running value, index order (CPU only; Higham's recursive summation)
  tree,               // grid-stride per thread, warp shuffle, block reduce, deterministic second pass
  atomic,             // block partials combined by atomicAdd: order varies run to run
  cub,                // cub::DeviceReduce / DeviceSegmentedReduce (GPU only, no model)
  cub_deterministic,  // cub::DeviceReduce with gpu_to_gpu determinism (CCCL >= 3.1; GPU only)
  // The seed gallery (kernels/gallery/gallery_order.hpp): the classic kernels
  // of the tutorials in shared/seeds, whole-array sum and max only.
  v1_interleaved,      // interleaved addressing, divergent branches
  v2_sequential,       // sequential addressing
  v3_first_add,        // first add during load, half the blocks
  v4_unroll_last_warp, // the last warp unrolled on volatile shared memory
  v5_complete_unroll,  // block size a template parameter, every level unrolled
  v5_shuffle,          // warp shuffles instead of the last shared-memory levels
  v6_multi_add,        // many adds per thread (grid-stride cascade)
  atomic_element,      // one global atomic per element
  atomic_shared,       // shared-memory atomics, then one global atomic per block
  cg_reduce,           // cooperative_groups cg::reduce
  cluster,             // thread-block cluster, distributed shared memory (sm_90)
  two_stage,           // Triton-style: BLOCK_SIZE chunks to partials, one block finishes
  // The scans (cumsum; kernels/scan/scan_order.hpp). serial and cub scan too.
  warp,              // one block walks the tiles; Kogge-Stone warp shuffles, then across warps
  block,             // one block walks the tiles; Brent-Kung (work-efficient) in shared memory
  reduce_then_scan,  // three phases: block sums, a scan of them, a rescan with the carry
  lookback,          // single pass, decoupled look-back over a fixed window of 512 tiles
};

inline constexpr NameTable<Shape, 5> kShapeNames = {{{Shape::serial, "serial"},
                                                     {Shape::tree, "tree"},
                                                     {Shape::atomic, "atomic"},
                                                     {Shape::cub, "cub"},
                                                     {Shape::cub_deterministic, "cub_deterministic"}}};

// The gallery has its own table, so that iterating kShapeNames (the default
// matrix, --shape) does not pull a dozen teaching kernels into every run;
// `accuracy_report --gallery` runs them.
inline constexpr NameTable<Shape, 12> kGalleryShapeNames = {{{Shape::v1_interleaved, "v1_interleaved"},
                                                             {Shape::v2_sequential, "v2_sequential"},
                                                             {Shape::v3_first_add, "v3_first_add"},
                                                             {Shape::v4_unroll_last_warp, "v4_unroll_last_warp"},
                                                             {Shape::v5_complete_unroll, "v5_complete_unroll"},
                                                             {Shape::v5_shuffle, "v5_shuffle"},
                                                             {Shape::v6_multi_add, "v6_multi_add"},
                                                             {Shape::atomic_element, "atomic_element"},
                                                             {Shape::atomic_shared, "atomic_shared"},
                                                             {Shape::cg_reduce, "cg_reduce"},
                                                             {Shape::cluster, "cluster"},
                                                             {Shape::two_stage, "two_stage"}}};

constexpr bool is_gallery(Shape s) { return s >= Shape::v1_interleaved && s <= Shape::two_stage; }

// The scans' own shapes, a table of their own as the gallery's (the default
// matrix of reductions does not iterate them); serial and cub scan as well.
inline constexpr NameTable<Shape, 4> kScanShapeNames = {{{Shape::warp, "warp"},
                                                         {Shape::block, "block"},
                                                         {Shape::reduce_then_scan, "reduce_then_scan"},
                                                         {Shape::lookback, "lookback"}}};
constexpr bool is_scan_shape(Shape s) { return s >= Shape::warp && s <= Shape::lookback; }

// A shape by name, from either table (a baseline or --shape may name a
// gallery kernel).
constexpr std::optional<Shape> parse_shape(std::string_view name) {
  if (auto s = parse_in(kShapeNames, name)) return s;
  if (auto s = parse_in(kScanShapeNames, name)) return s;
  return parse_in(kGalleryShapeNames, name);
}

constexpr std::string_view to_string(Shape s) {
  if (is_scan_shape(s)) return name_in(kScanShapeNames, s);
  return is_gallery(s) ? name_in(kGalleryShapeNames, s) : name_in(kShapeNames, s);
}

// NVIDIA's code has its own order and no model (docs/spec.md, "Kernel shapes").
constexpr bool has_cpu_model(Shape s) { return s != Shape::cub && s != Shape::cub_deterministic; }
constexpr bool runs_on_gpu(Shape s) { return s != Shape::serial; }
// Atomics arrive in an order that varies run to run.
constexpr bool is_deterministic_order(Shape s) {
  return s != Shape::atomic && s != Shape::atomic_element && s != Shape::atomic_shared;
}

}  // namespace ulpscope
