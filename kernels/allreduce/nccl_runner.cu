// The NCCL all-reduce runner (nccl_runner.hpp; docs/nccl-allreduce.md): one
// process drives P GPUs, each method is timed with CUDA events beside the
// plain all-reduce of the same data, and every wait is bounded.
#include "kernels/allreduce/nccl_runner.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "kernels/allreduce/nccl/allreduce_kernels.hpp"
#include "kernels/allreduce/nccl/communicators.hpp"

namespace ulpscope::allreduce {
namespace {

const char* algorithm_name(Algorithm a) { return a == Algorithm::ring ? "Ring" : "Tree"; }
const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::simple: return "Simple";
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
  }
  return "Simple";
}
const char* method_name(Method m) {
  switch (m) {
    case Method::plain: return "plain";
    case Method::upcast: return "upcast";
    case Method::exact: return "exact";
  }
  return "plain";
}

std::string count_text(std::size_t n) {
  if (n && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::size_t(1) << k) != n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

std::size_t dtype_bytes(Dtype d) { return std::size_t(format_info(d).bits / 8); }

ncclDataType_t nccl_type(Dtype d) {
  switch (d) {
    case Dtype::fp32: return ncclFloat32;
    case Dtype::fp16: return ncclFloat16;
    case Dtype::bf16: return ncclBfloat16;
    default: break;
  }
  throw std::runtime_error("the NCCL all-reduce takes fp32, fp16 and bf16, not " + std::string(to_string(d)));
}

// Device memory of one GPU, freed on that GPU.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() { release(); }
  void allocate(int device, std::size_t bytes) {
    release();
    device_ = device;
    cuda_check(cudaSetDevice(device), "cudaSetDevice");
    cuda_check(cudaMalloc(&p_, bytes ? bytes : 1), "cudaMalloc");
    bytes_ = bytes;
  }
  void release() noexcept {
    if (!p_) return;
    cudaSetDevice(device_);
    cudaFree(p_);
    p_ = nullptr;
    bytes_ = 0;
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(p_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  int device_ = 0;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

struct RankBuffers {
  DeviceMemory in, out, wide, top, words, flags, count, indices, all_gathered, select_count, select_temp;
  cudaEvent_t start = nullptr, stop = nullptr;
};

class Runner {
 public:
  Runner(const NcclRequest& q, Communicators& comms) : q_(q), comms_(comms), ranks_(q.ranks), bytes_(dtype_bytes(q.dtype)) {}

  void allocate(std::vector<RankBuffers>& b) {
    b_ = &b;
    for (int r = 0; r < ranks_; ++r) {
      RankBuffers& rb = b[r];
      rb.in.allocate(r, q_.n * bytes_);
      rb.out.allocate(r, q_.n * bytes_);
      cuda_check(cudaMemcpy(rb.in.get(), (*q_.inputs)[r].data(), q_.n * bytes_, cudaMemcpyHostToDevice),
                 "uploading the inputs");
      if (q_.method == Method::upcast) rb.wide.allocate(r, q_.n * wide_bytes(q_.dtype));
      if (q_.method == Method::exact) {
        rb.top.allocate(r, q_.n);
        rb.words.allocate(r, q_.n * exact_word_bytes(q_.dtype));
        rb.flags.allocate(r, q_.n);
        rb.count.allocate(r, sizeof(unsigned));
        rb.select_count.allocate(r, sizeof(int));
        rb.select_temp.allocate(r, select_temp_bytes(q_.n));
      }
      cuda_check(cudaEventCreate(&rb.start), "cudaEventCreate");
      cuda_check(cudaEventCreate(&rb.stop), "cudaEventCreate");
    }
    cuda_check(cudaHostAlloc(reinterpret_cast<void**>(&host_counts_), sizeof(unsigned) * ranks_, cudaHostAllocPortable),
               "cudaHostAlloc");
  }
  ~Runner() {
    if (host_counts_) cudaFreeHost(host_counts_);
  }

  bool joins(int r) const { return r != q_.withhold_rank; }

  void plain() {
    const ncclRedOp_t op = q_.mean ? ncclAvg : ncclSum;
    ncclGroupStart();
    for (int r = 0; r < ranks_; ++r)
      if (joins(r))
        ncclAllReduce((*b_)[r].in.get(), (*b_)[r].out.get(), q_.n, nccl_type(q_.dtype), op, comms_.comm(r),
                      comms_.stream(r));
    comms_.enqueued(ncclGroupEnd(), "ncclAllReduce");
  }

  void upcast() {
    for (int r = 0; r < ranks_; ++r) {
      cuda_check(cudaSetDevice(r), "cudaSetDevice");
      widen(q_.dtype, (*b_)[r].in.get(), (*b_)[r].wide.get(), q_.n, comms_.stream(r));
    }
    const ncclDataType_t wide = q_.dtype == Dtype::fp32 ? ncclFloat64 : ncclFloat32;
    ncclGroupStart();
    for (int r = 0; r < ranks_; ++r)
      if (joins(r))
        ncclAllReduce((*b_)[r].wide.get(), (*b_)[r].wide.get(), q_.n, wide, ncclSum, comms_.comm(r), comms_.stream(r));
    comms_.enqueued(ncclGroupEnd(), "upcast: ncclAllReduce");
    for (int r = 0; r < ranks_; ++r) {
      cuda_check(cudaSetDevice(r), "cudaSetDevice");
      round_wide(q_.dtype, (*b_)[r].wide.get(), (*b_)[r].out.get(), q_.n, ranks_, q_.mean, comms_.stream(r));
    }
  }

  void exact() {
    std::vector<RankBuffers>& b = *b_;
    for (int r = 0; r < ranks_; ++r) {
      cuda_check(cudaSetDevice(r), "cudaSetDevice");
      exponent_bytes(q_.dtype, b[r].in.get(), b[r].top.get<std::uint8_t>(), q_.n, comms_.stream(r));
    }
    ncclGroupStart();
    for (int r = 0; r < ranks_; ++r)
      if (joins(r))
        ncclAllReduce(b[r].top.get(), b[r].top.get(), q_.n, ncclUint8, ncclMax, comms_.comm(r), comms_.stream(r));
    comms_.enqueued(ncclGroupEnd(), "exact: ncclAllReduce (max of the exponents)");
    for (int r = 0; r < ranks_; ++r) {
      cuda_check(cudaSetDevice(r), "cudaSetDevice");
      window_words(q_.dtype, b[r].in.get(), b[r].top.get<std::uint8_t>(), b[r].words.get(), q_.n, ranks_,
                   comms_.stream(r));
    }
    const ncclDataType_t word = exact_word_bytes(q_.dtype) == 4 ? ncclUint32 : ncclUint64;
    ncclGroupStart();
    for (int r = 0; r < ranks_; ++r)
      if (joins(r))
        ncclAllReduce(b[r].words.get(), b[r].words.get(), q_.n, word, ncclSum, comms_.comm(r), comms_.stream(r));
    comms_.enqueued(ncclGroupEnd(), "exact: ncclAllReduce (integers)");
    for (int r = 0; r < ranks_; ++r) {
      cuda_check(cudaSetDevice(r), "cudaSetDevice");
      finish_words(q_.dtype, b[r].words.get(), b[r].top.get<std::uint8_t>(), b[r].out.get(),
                   b[r].flags.get<std::uint8_t>(), b[r].count.get<unsigned>(), q_.n, ranks_, q_.mean,
                   comms_.stream(r));
      cuda_check(cudaMemcpyAsync(&host_counts_[r], b[r].count.get(), sizeof(unsigned), cudaMemcpyDeviceToHost,
                                 comms_.stream(r)),
                 "exact: reading the second round's count");
    }
    comms_.finish("exact: the integers' all-reduce");
    const std::size_t m = host_counts_[0];
    for (int r = 1; r < ranks_; ++r)
      if (host_counts_[r] != m)
        comms_.fail("exact", "the ranks disagree on the elements of the second round (" + std::to_string(m) +
                                 " on rank 0, " + std::to_string(host_counts_[r]) + " on rank " + std::to_string(r) +
                                 ")");
    second_round_elements_ = m;
    if (m == 0) return;
    // The second round: the flagged elements' raw values from every rank,
    // each rank's in its own slot of a zeroed P x m buffer, summed as bytes
    // (one nonzero term a byte: a copy) by an all-reduce, which every
    // algorithm runs (NCCL's Tree has no all-gather); then each rank sums
    // its m columns exactly.
    const std::size_t slot = m * bytes_;
    for (int r = 0; r < ranks_; ++r) {
      RankBuffers& rb = b[r];
      if (rb.indices.bytes() < m * sizeof(int)) {
        rb.indices.allocate(r, m * sizeof(int));
        rb.all_gathered.allocate(r, slot * ranks_);
      }
      cuda_check(cudaSetDevice(r), "cudaSetDevice");
      cuda_check(cudaMemsetAsync(rb.all_gathered.get(), 0, slot * ranks_, comms_.stream(r)), "cudaMemsetAsync");
      select_flagged(rb.select_temp.get(), rb.select_temp.bytes(), rb.flags.get<std::uint8_t>(), rb.indices.get<int>(),
                     rb.select_count.get<int>(), q_.n, comms_.stream(r));
      gather(q_.dtype, rb.in.get(), rb.indices.get<int>(), rb.all_gathered.get<std::uint8_t>() + slot * r, m,
             comms_.stream(r));
    }
    ncclGroupStart();
    for (int r = 0; r < ranks_; ++r)
      if (joins(r))
        ncclAllReduce(b[r].all_gathered.get(), b[r].all_gathered.get(), slot * ranks_, ncclUint8, ncclSum,
                      comms_.comm(r), comms_.stream(r));
    comms_.enqueued(ncclGroupEnd(), "exact: ncclAllReduce (second round)");
    for (int r = 0; r < ranks_; ++r) {
      cuda_check(cudaSetDevice(r), "cudaSetDevice");
      second_round(q_.dtype, b[r].all_gathered.get(), b[r].indices.get<int>(), b[r].out.get(), m, ranks_, q_.mean,
                   comms_.stream(r));
    }
  }

  void run_method(Method m) {
    switch (m) {
      case Method::plain: plain(); break;
      case Method::upcast: upcast(); break;
      case Method::exact: exact(); break;
    }
  }

  // One warm-up, then q.repetitions timed all-reduces: the median of the
  // slowest rank's event time each; after each of the first `runs` of them,
  // check (the outputs compared).
  template <class Check>
  double time(Method m, int runs, Check&& check) {
    run_method(m);
    comms_.finish("warm-up");
    std::vector<double> seconds;
    for (int i = 0; i < q_.repetitions; ++i) {
      for (int r = 0; r < ranks_; ++r) cuda_check(cudaEventRecord((*b_)[r].start, comms_.stream(r)), "cudaEventRecord");
      run_method(m);
      for (int r = 0; r < ranks_; ++r) cuda_check(cudaEventRecord((*b_)[r].stop, comms_.stream(r)), "cudaEventRecord");
      comms_.finish(method_name(m));
      double slowest = 0;
      for (int r = 0; r < ranks_; ++r) {
        float ms = 0;
        cuda_check(cudaEventElapsedTime(&ms, (*b_)[r].start, (*b_)[r].stop), "cudaEventElapsedTime");
        slowest = std::max(slowest, double(ms) * 1e-3);
      }
      seconds.push_back(slowest);
      if (i < runs) check();
    }
    std::sort(seconds.begin(), seconds.end());
    const std::size_t k = seconds.size();
    return k % 2 ? seconds[k / 2] : 0.5 * (seconds[k / 2 - 1] + seconds[k / 2]);
  }

  std::vector<std::uint8_t> output(int r) const {
    std::vector<std::uint8_t> h(q_.n * bytes_);
    cuda_check(cudaSetDevice(r), "cudaSetDevice");
    cuda_check(cudaMemcpy(h.data(), (*b_)[r].out.get(), h.size(), cudaMemcpyDeviceToHost), "reading the outputs");
    return h;
  }

  std::size_t second_round_elements() const { return second_round_elements_; }

 private:
  const NcclRequest& q_;
  Communicators& comms_;
  int ranks_;
  std::size_t bytes_;
  std::vector<RankBuffers>* b_ = nullptr;
  unsigned* host_counts_ = nullptr;
  std::size_t second_round_elements_ = 0;
};

std::string job_name(const NcclRequest& q) {
  std::ostringstream s;
  s << "NCCL " << method_name(q.method) << " all-reduce (" << algorithm_name(q.algorithm) << ", "
    << protocol_name(q.protocol) << ") of " << count_text(q.n) << " " << to_string(q.dtype) << " on " << q.ranks
    << " GPUs";
  return s.str();
}

void validate(const NcclRequest& q) {
  nccl_type(q.dtype);
  if (q.n == 0 || q.n >= (std::size_t(1) << 31))
    throw std::runtime_error("NCCL all-reduce: n must be in [1, 2^31) elements per rank, not " + std::to_string(q.n));
  const std::size_t bytes = q.n * dtype_bytes(q.dtype);
  if (!q.inputs || int(q.inputs->size()) != q.ranks ||
      std::any_of(q.inputs->begin(), q.inputs->end(), [&](const auto& v) { return v.size() != bytes; }))
    throw std::runtime_error("NCCL all-reduce: the inputs must be P = " + std::to_string(q.ranks) + " tensors of " +
                             std::to_string(bytes) + " bytes");
  if (q.runs < 1 || q.repetitions < 1 || q.runs > q.repetitions)
    throw std::runtime_error("NCCL all-reduce: runs must be in [1, repetitions]");
  if (!(q.timeout_s > 0)) throw std::runtime_error("NCCL all-reduce: the timeout must be positive");
  if (q.method == Method::exact && q.ranks > exact_max_ranks(q.dtype))
    throw std::runtime_error("NCCL exact all-reduce of " + std::string(to_string(q.dtype)) + " takes at most " +
                             std::to_string(exact_max_ranks(q.dtype)) + " ranks (its count of values outside the "
                             "window), not " + std::to_string(q.ranks));
  if (const std::string why = nccl_unavailable(q.ranks); !why.empty()) throw std::runtime_error(why);
}

}  // namespace

std::string nccl_unavailable(int ranks) {
  prepare_nccl_environment();
  if (ranks < 1) return "the NCCL all-reduce needs P >= 1 ranks, not " + std::to_string(ranks);
  int devices = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&devices); e != cudaSuccess)
    return std::string("no CUDA device for the NCCL all-reduce: ") + cudaGetErrorString(e);
  if (devices < ranks)
    return "P = " + std::to_string(ranks) + " ranks need " + std::to_string(ranks) + " GPUs; " +
           std::to_string(devices) + " present";
  int version = 0;
  if (const ncclResult_t r = ncclGetVersion(&version); r != ncclSuccess)
    return std::string("NCCL is not usable: ") + ncclGetErrorString(r);
  return "";
}

NcclResult run_nccl_allreduce(const NcclRequest& q) {
  validate(q);
  NcclResult result;
  ncclGetVersion(&result.nccl_version);
  Communicators comms(q.ranks, algorithm_name(q.algorithm), protocol_name(q.protocol), q.channels, q.timeout_s,
                      job_name(q));
  std::vector<RankBuffers> buffers(q.ranks);
  Runner runner(q, comms);
  try {
    runner.allocate(buffers);
    if (q.method != Method::plain) result.plain_seconds = runner.time(Method::plain, 0, [] {});
    std::vector<std::vector<std::uint8_t>> distinct;
    result.ranks_agree = true;
    result.seconds = runner.time(q.method, q.runs, [&] {
      std::vector<std::uint8_t> first = runner.output(0);
      for (int r = 1; r < q.ranks; ++r) result.ranks_agree = result.ranks_agree && runner.output(r) == first;
      if (std::find(distinct.begin(), distinct.end(), first) == distinct.end()) distinct.push_back(std::move(first));
    });
    if (q.method == Method::plain) result.plain_seconds = result.seconds;
    result.distinct_runs = int(distinct.size());
    result.output = std::move(distinct.front());
    // The first run's output stands for the method's (any later distinct one is counted in distinct_runs).
    result.second_round_elements = runner.second_round_elements();
    const double bytes = double(q.n) * double(dtype_bytes(q.dtype));
    result.bus_bandwidth = q.ranks > 1 ? 2.0 * (q.ranks - 1) / q.ranks * bytes / result.seconds : 0.0;
  } catch (...) {
    comms.abort();  // before the buffers go: a collective left waiting must not hold cudaFree
    for (RankBuffers& rb : buffers) {
      if (rb.start) cudaEventDestroy(rb.start);
      if (rb.stop) cudaEventDestroy(rb.stop);
    }
    throw;
  }
  for (int r = 0; r < q.ranks; ++r) {
    cudaSetDevice(r);
    cudaEventDestroy(buffers[r].start);
    cudaEventDestroy(buffers[r].stop);
  }
  result.nccl_log = comms.log();
  return result;
}

}  // namespace ulpscope::allreduce
