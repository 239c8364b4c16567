#include "kernels/launch_policy.hpp"

#include <algorithm>

#include "kernels/gallery/gallery_model.hpp"
#include "kernels/model.hpp"
#include "kernels/scan/scan_model.hpp"
#include "kernels/tree/tree_tuning.hpp"

namespace ulpscope {
namespace {

// Blocks that cover `vectors` vector loads with `threads` threads each doing
// `per_thread` of them, at most `cap`.
int blocks_for(std::int64_t vectors, int threads, int per_thread, int cap) {
  const std::int64_t b = (vectors + std::int64_t(threads) * per_thread - 1) / (std::int64_t(threads) * per_thread);
  return int(std::clamp<std::int64_t>(b, 1, cap));
}

}  // namespace

std::vector<LaunchConfig> launch_configs(const KernelSpec& spec, std::int64_t length, const DeviceShape& device) {
  if (is_scan(spec.op)) return scan::launch_configs(spec, length, device.sm_count);
  if (spec.shape == Shape::serial) return {LaunchConfig{1, 1}};
  if (is_gallery(spec.shape)) return gallery::launch_configs(spec, length, device);
  const std::int64_t vectors = std::max<std::int64_t>(length / vector_width(spec.in), 1);
  // The default: 256 threads, one vector per thread up to the tuned blocks
  // per SM (tree_tuning.hpp, default_blocks_per_sm), beyond that each thread
  // loops; then one block of 512 per SM. The other two grids are fixed counts
  // (not the device's), there so that every level of the order changes. The
  // CUDA kernels take at most 512 threads per block (tree_tuning.hpp).
  const int per_sm = default_blocks_per_sm(spec, device.registers_per_sm);
  return {LaunchConfig{blocks_for(vectors, 256, 1, device.sm_count * per_sm), 256},
          LaunchConfig{blocks_for(vectors, 128, 4, 397), 128},
          LaunchConfig{blocks_for(vectors, 512, 2, device.sm_count), 512},
          LaunchConfig{blocks_for(vectors, 64, 8, 2000), 64}};
}

}  // namespace ulpscope
