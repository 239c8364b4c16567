// kernels/cuda/per_device.hpp without a GPU: a value is made once per device
// however many threads ask at once, devices keep their own values, devices
// past the cache are made at every call, and a throwing make leaves the
// device to be made again.
#include "kernels/cuda/per_device.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ulpscope {
namespace {

TEST(PerDevice, MakesEachDeviceOnceUnderManyThreads) {
  PerDevice<int> cache;
  std::atomic<int> made[4] = {};
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&] {
      for (int round = 0; round < 1000; ++round)
        for (int d = 0; d < 4; ++d)
          EXPECT_EQ(cache.get(d, [&](int device) {
            made[device].fetch_add(1);
            return 100 + device;
          }), 100 + d);
    });
  for (auto& th : pool) th.join();
  for (int d = 0; d < 4; ++d) EXPECT_EQ(made[d].load(), 1) << "device " << d;
}

TEST(PerDevice, DevicesPastTheCacheAreMadeAtEveryCall) {
  PerDevice<int> cache;
  int made = 0;
  auto make = [&](int device) {
    ++made;
    return device;
  };
  EXPECT_EQ(cache.get(kCachedDevices, make), kCachedDevices);
  EXPECT_EQ(cache.get(kCachedDevices, make), kCachedDevices);
  EXPECT_EQ(cache.get(-1, make), -1);
  EXPECT_EQ(made, 3);
  EXPECT_EQ(cache.get(kCachedDevices - 1, make), kCachedDevices - 1);
  EXPECT_EQ(cache.get(kCachedDevices - 1, make), kCachedDevices - 1);
  EXPECT_EQ(made, 4);
}

TEST(PerDevice, AThrowingMakeIsTriedAgain) {
  PerDevice<int> cache;
  EXPECT_THROW(cache.get(2, [](int) -> int { throw std::runtime_error("no device"); }), std::runtime_error);
  EXPECT_EQ(cache.get(2, [](int) { return 7; }), 7);
  EXPECT_EQ(cache.get(2, [](int) { return 8; }), 7);
}

}  // namespace
}  // namespace ulpscope
