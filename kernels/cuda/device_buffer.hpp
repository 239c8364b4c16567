#pragma once
// Device memory owned by a value (cudaMalloc / cudaFree). An allocation that
// does not fit throws GpuError "out of memory: needs X GiB for <what> (Y GiB
// free of Z GiB)", so a caller can skip that size with its reason.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"

namespace ulpscope {

inline std::string gib(std::size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1ull << 30));
  return buf;
}

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, const std::string& what) { allocate(bytes, what); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <class T>
  T* as() const { return static_cast<T*>(data_); }
  std::size_t bytes() const { return bytes_; }

  // At least `bytes` (the contents are not kept when it grows).
  void reserve(std::size_t bytes, const std::string& what) {
    if (bytes <= bytes_ && data_ != nullptr) return;
    release();
    allocate(bytes, what);
  }

 private:
  void allocate(std::size_t bytes, const std::string& what) {
    if (bytes == 0) bytes = 1;  // a valid pointer even for empty arrays
    const cudaError_t e = cudaMalloc(&data_, bytes);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it so later calls are not blamed
      data_ = nullptr;
      std::size_t free_b = 0, total_b = 0;
      std::string where;
      if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
        where = " (" + gib(free_b) + " free of " + gib(total_b) + ")";
      throw GpuError("out of memory: needs " + gib(bytes) + " for " + what + where);
    }
    cuda_check(e, "cudaMalloc for " + what);
    bytes_ = bytes;
  }
  void release() {
    if (data_ != nullptr) cudaFree(data_);  // no error to report from a destructor
    data_ = nullptr;
    bytes_ = 0;
  }

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace ulpscope
