#pragma once
// The one GpuBackend of a GPU test program, opened on first use, and the skip
// of a test when there is none (GTEST_SKIP with the reason).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kernels/gpu_backend.hpp"

namespace ulpscope::test {

inline GpuBackend* test_gpu(std::string* why) {
  static std::string reason;
  static std::unique_ptr<GpuBackend> g = GpuBackend::open(&reason);
  *why = reason;
  return g.get();
}

}  // namespace ulpscope::test

// Declares g, the backend, or skips the test.
#define REQUIRE_GPU()                                              \
  std::string why_no_gpu;                                          \
  ::ulpscope::GpuBackend* const g = ::ulpscope::test::test_gpu(&why_no_gpu); \
  if (!g) GTEST_SKIP() << "no GPU: " << why_no_gpu;
