// The kernel as an ulpscope plug-in (C ABI, <ulpscope/plugin/ulpscope_plugin.h>):
// accuracy_report --kernel-lib librmsnorm_plugin.so measures it, and gates it
// against a baseline. Needs nothing of ulpscope but that header.
#include <ulpscope/plugin/ulpscope_plugin.h>

#include <cstdio>

#include "rmsnorm.hpp"

namespace {

bool is_rmsnorm_bf16(const ulpscope_call* c, char* error, std::size_t error_size) {
  if (c->op == ULPSCOPE_RMSNORM && c->in_dtype == ULPSCOPE_BF16 && c->out_dtype == ULPSCOPE_BF16) return true;
  std::snprintf(error, error_size, "rmsnorm bf16 -> bf16 only");
  return false;
}

int run_host(const ulpscope_call* c, char* error, std::size_t error_size) {
  if (!is_rmsnorm_bf16(c, error, error_size)) return 1;
  rmsnorm::rmsnorm_bf16_host(static_cast<const std::uint16_t*>(c->x), static_cast<const std::uint16_t*>(c->gamma),
                             static_cast<std::uint16_t*>(c->out), c->rows, c->cols, c->eps);
  return 0;
}

#ifdef RMSNORM_HAVE_CUDA
int run_device(const ulpscope_call* c, void* stream, char* error, std::size_t error_size) {
  if (!is_rmsnorm_bf16(c, error, error_size)) return 1;
  const int status = rmsnorm::rmsnorm_bf16_cuda(
      static_cast<const std::uint16_t*>(c->x), static_cast<const std::uint16_t*>(c->gamma),
      static_cast<std::uint16_t*>(c->out), c->rows, c->cols, c->eps, c->config.threads, stream);
  if (status != 0) std::snprintf(error, error_size, "launch failed: cudaError_t %d", status);
  return status;
}
constexpr ulpscope_device_fn kDevice = run_device;
#else
constexpr ulpscope_device_fn kDevice = nullptr;
#endif

// Threads per row: the order of the GPU's partials depends on it.
const ulpscope_launch_config kConfigs[] = {{0, 256}, {0, 128}, {0, 1024}};

const ulpscope_kernel_v1 kKernels[] = {{
    "rmsnorm_example",
    nullptr,  // the accumulator column: "custom" (the strategy is a build choice, and the gate compares builds)
    ULPSCOPE_RMSNORM,
    ULPSCOPE_BF16,
    ULPSCOPE_BF16,
    ULPSCOPE_AXIS_BIT(ULPSCOPE_AXIS_INNER),
    0,
    run_host,
    kDevice,
    nullptr,  // no bit-exact model of the GPU form: its tree adds in another order
    kConfigs,
    3,
}};

const ulpscope_plugin_v1 kPlugin = {ULPSCOPE_PLUGIN_ABI_VERSION, "examples/user-kernel", 1, kKernels};

}  // namespace

ULPSCOPE_PLUGIN_EXPORT const ulpscope_plugin_v1* ulpscope_get_plugin(void) { return &kPlugin; }
