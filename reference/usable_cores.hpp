#pragma once
// How many cores this process may run on: the CPUs of its affinity mask
// (taskset, a container's cpuset), which std::thread::hardware_concurrency
// ignores: it counts the machine's. Work pools sized by it do not
// oversubscribe a process confined to a few cores.
#include <algorithm>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace ulpscope {

inline unsigned usable_cores() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ulpscope
