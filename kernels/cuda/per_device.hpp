#pragma once
// A value per CUDA device, made once by the caller's `make(device)` on the
// device's first use and kept for the process: a device's shape, whether it
// has programmatic dependent launch, a kernel's shared-memory opt-in, a
// scratch memory pool. The first kCachedDevices devices are kept; beyond
// them `make` runs at every call. Threads may ask at once: `make` runs once
// a device, under a lock, and a value once made is read without it. Host
// only, and no CUDA call of its own (the caller passes the device).
#include <atomic>
#include <mutex>

namespace ulpscope {

inline constexpr int kCachedDevices = 64;

template <class T>
class PerDevice {
 public:
  template <class Make>
  T get(int device, Make make) {
    if (device < 0 || device >= kCachedDevices) return make(device);
    if (known_[device].load(std::memory_order_acquire)) return values_[device];
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!known_[device].load(std::memory_order_relaxed)) {
      values_[device] = make(device);  // a throw leaves the device unknown, to be made again
      known_[device].store(true, std::memory_order_release);
    }
    return values_[device];
  }

 private:
  std::mutex mutex_;
  std::atomic<bool> known_[kCachedDevices] = {};
  T values_[kCachedDevices] = {};
};

}  // namespace ulpscope
