#include "kernels/allreduce/nccl/communicators.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace ulpscope::allreduce {
namespace {

std::string& log_path_storage() {
  static std::string path;
  return path;
}

// Sets a variable for the lifetime of the object, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

long file_size(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  return f ? long(f.tellg()) : 0;
}

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

void prepare_nccl_environment() {
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  static const bool logged = [] {
    // NCCL opens its debug file once, at its first call; a user's own
    // NCCL_DEBUG_FILE is left alone (the log is then theirs, not returned).
    if (std::getenv("NCCL_DEBUG_FILE")) return false;
    const char* tmp = std::getenv("TMPDIR");
    log_path_storage() = std::string(tmp && *tmp ? tmp : "/tmp") + "/ulpscope-nccl-" + std::to_string(getpid()) + ".log";
    std::remove(log_path_storage().c_str());
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT,GRAPH,TUNING", 1);
    setenv("NCCL_DEBUG_FILE", log_path_storage().c_str(), 1);
    return true;
  }();
  (void)logged;
}

const std::string& nccl_log_path() { return log_path_storage(); }

void cuda_check(cudaError_t e, const char* step) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(step) + ": " + cudaGetErrorString(e));
}

Clock::time_point Communicators::deadline() const {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
}

Communicators::Communicators(int ranks, const char* algo, const char* proto, int channels, double timeout_s,
                             std::string what)
    : comms_(ranks, nullptr), streams_(ranks, nullptr), timeout_s_(timeout_s), what_(std::move(what)) {
  try {
    create(algo, proto, channels);
  } catch (...) {
    abort();  // a constructor that throws runs no destructor
    destroy_streams();
    throw;
  }
}

void Communicators::create(const char* algo, const char* proto, int channels) {
  const int ranks = int(comms_.size());
  prepare_nccl_environment();
  if (!nccl_log_path().empty()) log_start_ = file_size(nccl_log_path());
  for (int r = 0; r < ranks; ++r) {
    cuda_check(cudaSetDevice(r), "cudaSetDevice");
    cuda_check(cudaStreamCreateWithFlags(&streams_[r], cudaStreamNonBlocking), "cudaStreamCreate");
  }
  // NCCL_ALGO and NCCL_PROTO are read while the communicators are built,
  // which a non-blocking init may finish after ncclGroupEnd returns: they
  // stay set until the communicators are ready.
  ScopedEnv algo_env("NCCL_ALGO", algo), proto_env("NCCL_PROTO", proto);
  // One channel count, so that a call is planned on all of them (the CPU
  // models recompute NCCL's split from it: docs/spec.md, "All-reduce across GPUs").
  const std::string pinned = std::to_string(channels);
  std::optional<ScopedEnv> min_channels, max_channels;
  if (channels > 0) {
    min_channels.emplace("NCCL_MIN_NCHANNELS", pinned.c_str());
    max_channels.emplace("NCCL_MAX_NCHANNELS", pinned.c_str());
  }
  ncclUniqueId id;
  ncclResult_t res = ncclGetUniqueId(&id);
  if (res != ncclSuccess) fail("ncclGetUniqueId", ncclGetErrorString(res));
  res = ncclGroupStart();
  for (int r = 0; r < ranks && res == ncclSuccess; ++r) {
    cuda_check(cudaSetDevice(r), "cudaSetDevice");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    res = ncclCommInitRankConfig(&comms_[r], ranks, id, r, &config);
    if (res == ncclInProgress) res = ncclSuccess;
  }
  const ncclResult_t end = ncclGroupEnd();
  if (res != ncclSuccess) {
    abort();
    fail("ncclCommInitRankConfig", ncclGetErrorString(res));
  }
  enqueued(end, "creating the communicators");
}

Communicators::~Communicators() {
  if (!aborted_) {
    // ncclCommFinalize flushes a communicator's work; non-blocking, so it is
    // waited for with a deadline too, and aborted where it does not finish.
    bool ok = true;
    for (ncclComm_t c : comms_)
      if (c) {
        const ncclResult_t r = ncclCommFinalize(c);
        ok = ok && (r == ncclSuccess || r == ncclInProgress);
      }
    const auto until = deadline();
    for (bool busy = ok; busy;) {
      busy = false;
      for (ncclComm_t c : comms_) {
        ncclResult_t e = ncclSuccess;
        if (c && ncclCommGetAsyncError(c, &e) == ncclSuccess && e == ncclInProgress) busy = true;
        else if (e != ncclSuccess) ok = false;
      }
      if (busy && Clock::now() > until) ok = busy = false;
      if (busy) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (ok) {
      for (ncclComm_t& c : comms_)
        if (c) {
          ncclCommDestroy(c);
          c = nullptr;
        }
    } else {
      abort();
    }
  }
  destroy_streams();
}

void Communicators::destroy_streams() noexcept {
  for (int r = 0; r < int(streams_.size()); ++r)
    if (streams_[r]) {
      cudaSetDevice(r);
      cudaStreamDestroy(streams_[r]);
      streams_[r] = nullptr;
    }
}

std::string Communicators::log() const {
  if (nccl_log_path().empty()) return "";
  std::ifstream f(nccl_log_path(), std::ios::binary);
  f.seekg(log_start_);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void Communicators::abort() noexcept {
  if (aborted_) return;
  aborted_ = true;
  for (ncclComm_t& c : comms_)
    if (c) {
      ncclCommAbort(c);
      c = nullptr;
    }
}

void Communicators::fail(const char* step, const std::string& why) {
  abort();
  throw std::runtime_error(what_ + ": " + step + ": " + one_line(why));
}

void Communicators::timed_out(const char* step) {
  abort();
  std::ostringstream s;
  s << what_ << " did not finish within " << timeout_s_ << " s (" << step << "; aborted)";
  throw std::runtime_error(s.str());
}

void Communicators::wait_ready(const char* step) {
  const auto until = deadline();
  for (;;) {
    bool busy = false;
    for (ncclComm_t c : comms_) {
      ncclResult_t e = ncclSuccess;
      const ncclResult_t q = ncclCommGetAsyncError(c, &e);
      if (q != ncclSuccess) fail(step, ncclGetErrorString(q));
      if (e == ncclInProgress) busy = true;
      else if (e != ncclSuccess) {
        const char* last = ncclGetLastError(c);
        fail(step, std::string(ncclGetErrorString(e)) + (last && *last ? std::string(": ") + last : ""));
      }
    }
    if (!busy) return;
    if (Clock::now() > until) timed_out(step);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void Communicators::enqueued(ncclResult_t group_end, const char* step) {
  if (group_end != ncclSuccess && group_end != ncclInProgress) {
    std::string why = ncclGetErrorString(group_end);
    for (ncclComm_t c : comms_) {
      const char* last = c ? ncclGetLastError(c) : nullptr;
      if (last && *last) {
        why += std::string(": ") + last;
        break;
      }
    }
    fail(step, why);
  }
  wait_ready(step);
}

void Communicators::finish(const char* step) {
  const auto until = deadline();
  for (;;) {
    bool busy = false;
    for (int r = 0; r < ranks(); ++r) {
      const cudaError_t q = cudaStreamQuery(streams_[r]);
      if (q == cudaErrorNotReady) busy = true;
      else if (q != cudaSuccess) fail(step, cudaGetErrorString(q));
    }
    // A failing rank shows as its communicator's error while the others wait.
    for (ncclComm_t c : comms_) {
      ncclResult_t e = ncclSuccess;
      if (ncclCommGetAsyncError(c, &e) == ncclSuccess && e != ncclSuccess && e != ncclInProgress)
        fail(step, ncclGetErrorString(e));
    }
    if (!busy) return;
    if (Clock::now() > until) timed_out(step);
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace ulpscope::allreduce
