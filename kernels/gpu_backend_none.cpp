// GpuBackend in a build without CUDA: open() says why, and every shape but
// the CPU ones is listed as unavailable with that reason.
#include "kernels/gpu_backend.hpp"

namespace ulpscope {

namespace {
constexpr const char* kNoCuda =
    "this build has no CUDA (no CUDA compiler was found, or ULPSCOPE_ENABLE_CUDA=OFF)";
[[noreturn]] void no_cuda() { throw GpuError(kNoCuda); }
}  // namespace

struct GpuBackend::Impl {};

GpuBackend::GpuBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuBackend::~GpuBackend() = default;

std::unique_ptr<GpuBackend> GpuBackend::open(std::string* why_not) {
  if (why_not != nullptr) *why_not = kNoCuda;
  return nullptr;
}

// open() never returns a backend here, so these are never reached through one.
const DeviceInfo& GpuBackend::info() const { no_cuda(); }
std::size_t GpuBackend::free_memory_bytes() const { no_cuda(); }
void GpuBackend::upload(const ReductionProblem&) { no_cuda(); }
void GpuBackend::view_as(const ReductionProblem&) { no_cuda(); }
void GpuBackend::use_permutation(std::optional<std::uint64_t>) { no_cuda(); }
ReductionResult GpuBackend::run(const KernelSpec&, const LaunchConfig&) { no_cuda(); }
GpuBackend::DigestedRun GpuBackend::run_digested(const KernelSpec&, const LaunchConfig&,
                                                 const std::vector<std::int64_t>*, std::int64_t) {
  no_cuda();
}
GpuBackend::Timing GpuBackend::time(const KernelSpec&, const LaunchConfig&, int, int) { no_cuda(); }
GpuBackend::Timing GpuBackend::time_cub_sum_fp32(std::int64_t, int, int) { no_cuda(); }
GpuBackend::Timing GpuBackend::time_copy(std::size_t, int, int) { no_cuda(); }
std::vector<unsigned char> GpuBackend::run_launch(const Launch&, std::size_t, const std::string&) { no_cuda(); }
GpuBackend::Timing GpuBackend::time_launch(const Launch&, std::size_t, bool, int, int, const std::string&) {
  no_cuda();
}

std::optional<std::string> GpuBackend::shape_unavailable(Shape s) {
  if (s == Shape::serial) return std::string("serial is a CPU shape (one running value in index order)");
  return std::string(kNoCuda);
}

std::optional<std::string> GpuBackend::unavailable(const KernelSpec& s, Axis) { return shape_unavailable(s.shape); }

}  // namespace ulpscope
