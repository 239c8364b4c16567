#include "kernels/cuda/timing.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"

namespace ulpscope {

namespace {

// Owns a set of events; destroyed even when a launch throws.
class EventSet {
 public:
  explicit EventSet(int n) : events_(std::size_t(n), nullptr) {
    for (auto& e : events_) cuda_check(cudaEventCreate(&e), "cudaEventCreate");
  }
  ~EventSet() {
    for (auto e : events_)
      if (e != nullptr) cudaEventDestroy(e);
  }
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;
  cudaEvent_t operator[](int i) const { return events_[std::size_t(i)]; }

 private:
  std::vector<cudaEvent_t> events_;
};

}  // namespace

double EventTimes::median() const {
  if (ms.empty()) return 0;
  std::vector<double> s = ms;
  std::sort(s.begin(), s.end());
  const std::size_t m = s.size() / 2;
  return s.size() % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}
double EventTimes::min() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }
double EventTimes::max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }

EventTimes time_launches(cudaStream_t stream, int warmup, int reps,
                         const std::function<void(int)>& launch, const std::string& what) {
  if (warmup < 0 || reps < 1)
    throw GpuError("timing " + what + ": needs warmup >= 0 and at least one timed run");
  EventSet events(2 * reps);
  for (int i = 0; i < warmup; ++i) {
    launch(i);
    check_launch(what + " (warm-up launch)");
  }
  // The warm-up has to finish before the first timed launch, or its tail
  // would be counted in the first interval.
  cuda_check(cudaStreamSynchronize(stream), what + " (warm-up)");
  for (int r = 0; r < reps; ++r) {
    cuda_check(cudaEventRecord(events[2 * r], stream), "cudaEventRecord");
    launch(warmup + r);
    check_launch(what);
    cuda_check(cudaEventRecord(events[2 * r + 1], stream), "cudaEventRecord");
  }
  cuda_check(cudaStreamSynchronize(stream), what + " (timed runs)");
  EventTimes t;
  t.ms.reserve(std::size_t(reps));
  for (int r = 0; r < reps; ++r) {
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, events[2 * r], events[2 * r + 1]), "cudaEventElapsedTime");
    t.ms.push_back(double(ms));
  }
  return t;
}

int rotating_copies(std::size_t bytes, std::size_t l2_bytes, int max_copies) {
  if (bytes == 0) return 1;
  const std::size_t want = 2 * l2_bytes;
  const std::size_t copies = (want + bytes - 1) / bytes;
  return int(std::clamp<std::size_t>(copies, 1, std::size_t(max_copies)));
}

}  // namespace ulpscope
