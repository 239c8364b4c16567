#pragma once
// Throughput per docs/spec.md ("Metrics"): CUDA events around each launch, untimed
// warm-up launches first, the median of the timed ones; inputs rotated among
// copies whose total exceeds L2 so that repeated runs do not measure the cache
// (METHOD: "rotate among several input sets"). CUDA code only.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ulpscope {

struct EventTimes {
  std::vector<double> ms;  // one per timed launch, in launch order
  double median() const;
  double min() const;
  double max() const;
};

// Calls launch(i) for i = 0 .. warmup + reps - 1, each enqueueing its work on
// `stream`; the last `reps` are each bracketed by two events. Every launch's
// error is checked (check_launch) and the stream is synchronised once at the
// end, its status checked too. Throws GpuError naming `what`.
EventTimes time_launches(cudaStream_t stream, int warmup, int reps,
                         const std::function<void(int)>& launch, const std::string& what);

// How many copies of an input of `bytes` to rotate among so that together they
// exceed L2 twice over (so each copy is evicted before it is read again),
// at most `max_copies`.
int rotating_copies(std::size_t bytes, std::size_t l2_bytes, int max_copies = 1024);

}  // namespace ulpscope
