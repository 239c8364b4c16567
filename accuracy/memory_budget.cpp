#include "accuracy/memory_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kernels/op.hpp"

namespace ulpscope {
namespace {

// What one Reference holds per output (the exact value, its decimal string,
// the rounded value), with the allocator's overhead: a generous figure.
constexpr double kReferenceBytes = 512;


std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / double(1ull << 30)); }

}  // namespace

MemoryNeed memory_need(const MatrixSettings& s, const std::optional<UserInput>& user_input, bool gpu,
                       unsigned threads) {
  MemoryNeed need;
  std::vector<std::pair<std::int64_t, Dtype>> problems;
  if (user_input) {
    problems.emplace_back(std::int64_t(user_input->values.size()), user_input->values.dtype());
  } else {
    for (std::int64_t n : s.sizes)
      for (Dtype d : s.dtypes) problems.emplace_back(n, d);
  }
  const bool norms =
      std::any_of(s.ops.begin(), s.ops.end(), [](Op op) { return is_elementwise_output(op) || is_scan(op); });
  // A whole-array scan scores every prefix (docs/spec.md, "Scans along the index").
  const bool whole_scans = std::any_of(s.ops.begin(), s.ops.end(), is_scan) &&
                           std::find(s.axes.begin(), s.axes.end(), Axis::all) != s.axes.end();
  const double held = std::max(1u, threads);  // cells in flight at once, at most
  for (const auto& [n_, d] : problems) {
    const double n = double(std::max<std::int64_t>(n_, 0));
    const double w = double(format_info(d).bits) / 8;
    const double arrays = n * w * (user_input ? 1 : 2);  // x, and y for the dot products
    double host = arrays;
    if (!user_input) host += 8 * n;      // the generator's values before rounding (accuracy/distribution.cpp)
    if (!gpu) host += arrays;            // the permuted copy
    if (w < 4) host += held * n * 4 * (user_input ? 1 : 2);  // the models' inputs widened to float
    // The outputs of the cells in flight: one per reduction, or one per element for the norms.
    const double outputs = norms ? n : n / double(std::max<std::int64_t>(1, std::min<std::int64_t>(s.row_cols, n_)));
    // Outputs are kept as values and unrounded values (16 bytes); of a large
    // norm only the scored rows (accuracy/matrix_input.hpp, kScoredElements).
    const double scored = whole_scans ? outputs : std::min(outputs, double(std::int64_t(1) << 22));
    // On the GPU, built-in kernels' outputs stay on the device (digested
    // there) but for the scored rows; a user's kernel brings its run back.
    if (gpu) host += outputs * 16 + held * scored * 16 * 2;  // the run in hand; scored parts and model runs
    else host += held * outputs * 16 * 2;                        // each thread's model run and what it keeps
    host += scored * kReferenceBytes;
    // logsumexp's reference reads the input as doubles (its exponentials are
    // summed a block at a time: reference/op_reference.cpp).
    if (std::find(s.ops.begin(), s.ops.end(), Op::logsumexp) != s.ops.end()) host += n * 8;
    double device = 0;
    if (gpu) {
      device = 2 * arrays + outputs * 16;  // the upload, one permuted copy, the outputs
      if (s.throughput_n > 0 && n_ >= s.throughput_n) device += 2 * arrays;  // timed copies above L2
    }
    need.host_bytes = std::max(need.host_bytes, host);
    need.device_bytes = std::max(need.device_bytes, device);
  }
  if (gpu && s.throughput_n > 0) {
    const double t = double(s.throughput_n) * 4 * 2;  // the throughput input (x and y), at most 4 bytes each
    need.host_bytes = std::max(need.host_bytes, t + 8 * double(s.throughput_n));
    need.device_bytes = std::max(need.device_bytes, 3 * t);
  }
  return need;
}

std::optional<double> host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream in(line);
    std::string key;
    double kib = 0;
    if (in >> key >> kib && key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

void check_memory(const MemoryNeed& need, std::optional<double> host_free, std::optional<double> device_free,
                  const std::string& what) {
  if (host_free && need.host_bytes > *host_free)
    throw SizeError(fmt::format("{} needs about {} of host memory; {} is available", what, gib(need.host_bytes),
                                gib(*host_free)));
  if (device_free && need.device_bytes > *device_free)
    throw SizeError(fmt::format("{} needs about {} of GPU memory; {} is free", what, gib(need.device_bytes),
                                gib(*device_free)));
}

}  // namespace ulpscope
