// The NCCL runner where the build has no NCCL (or no CUDA): every request is
// refused with the reason CMake found (cmake/ulpscopeNccl.cmake).
#include <stdexcept>

#include "kernels/allreduce/nccl_runner.hpp"

namespace ulpscope::allreduce {

std::string nccl_unavailable(int) { return "built without NCCL: " ULPSCOPE_NCCL_WHY_NOT; }

NcclResult run_nccl_allreduce(const NcclRequest&) { throw std::runtime_error(nccl_unavailable(0)); }

}  // namespace ulpscope::allreduce
