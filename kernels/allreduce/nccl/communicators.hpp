#pragma once
// One process's NCCL communicators over P GPUs (nccl-tests' single-process
// mode), non-blocking, so that every wait has a deadline: a communicator set
// that does not finish in time is aborted (ncclCommAbort) and the caller gets
// one line instead of a hang.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <string>
#include <vector>

namespace ulpscope::allreduce {

// Sets NCCL_NVLS_ENABLE=0 (no NVLink multicast objects: they can take a
// shared host down) and, once a process, NCCL's INFO log of INIT, GRAPH and
// TUNING into a temporary file (NCCL reads NCCL_DEBUG* once per process).
// Called before any NCCL call.
void prepare_nccl_environment();
// The log file's path ("" where NCCL_DEBUG_FILE was not ours to set).
const std::string& nccl_log_path();

using Clock = std::chrono::steady_clock;

class Communicators {
 public:
  // Communicators on devices 0 .. ranks - 1, created with NCCL_ALGO and
  // NCCL_PROTO set to algo and proto, and, where channels > 0,
  // NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS to channels (restored after). Every wait (the
  // creation, each group's enqueueing, each finish) gets timeout_s; what: the
  // one-line name of the job for messages.
  Communicators(int ranks, const char* algo, const char* proto, int channels, double timeout_s, std::string what);
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  int ranks() const { return int(comms_.size()); }
  ncclComm_t comm(int r) const { return comms_[r]; }
  cudaStream_t stream(int r) const { return streams_[r]; }
  // NCCL's log lines written since the communicators were asked for.
  std::string log() const;

  // After a group of calls (its ncclGroupEnd's result): waits until every
  // communicator has taken its work, within the deadline.
  void enqueued(ncclResult_t group_end, const char* step);
  // Waits until every stream is idle, within the deadline.
  void finish(const char* step);
  // Aborts every communicator (after a timeout or an error; idempotent).
  void abort() noexcept;
  // Throws one line: "<what>: <step>: <why>".
  [[noreturn]] void fail(const char* step, const std::string& why);
  [[noreturn]] void timed_out(const char* step);

 private:
  void wait_ready(const char* step);
  void create(const char* algo, const char* proto, int channels);
  void destroy_streams() noexcept;
  Clock::time_point deadline() const;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
  double timeout_s_;
  std::string what_;
  long log_start_ = 0;
  bool aborted_ = false;
};

// Throws one line where a CUDA call failed.
void cuda_check(cudaError_t e, const char* step);

}  // namespace ulpscope::allreduce
