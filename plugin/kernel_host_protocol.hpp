#pragma once
// What accuracy_report (plugin/kernel_host.hpp) and ulpscope-kernel-host
// (plugin/kernel_host_main.cpp) say to each other. They are one build of one
// project on one machine: the messages are plain structs in host byte order,
// one per SOCK_SEQPACKET record, each starting with kMagic. The arrays do not
// travel through the socket: they lie in a memfd both map, whose descriptor
// travels with the request that first names it (SCM_RIGHTS).
#include <cstddef>
#include <cstdint>

namespace ulpscope::kernel_host {

constexpr std::uint32_t kMagic = 0x756c7048;  // "Hplu": this build's messages
constexpr int kSocketFd = 3;                  // the child's end of the socket pair
constexpr std::size_t kErrorBytes = 512;
// After out, in the shared memory (host calls) or on the device: a region
// filled with kGuard that a call must leave as it is.
constexpr std::size_t kGuardBytes = 4096;
constexpr unsigned char kGuard = 0xA5;
// The offsets of the arrays in the shared memory are multiples of this.
constexpr std::size_t kAlign = 256;

// Sent once by the child after it loaded the library (and opened the GPU).
struct Hello {
  std::uint32_t magic = kMagic;
  std::int32_t ok = 0;  // 0: error says why the library cannot be served
  std::int32_t has_gpu = 0;
  char error[kErrorBytes] = {};  // ok: why there is no GPU, if there is none
};

enum class Function : std::int32_t { run_device = 0, run_host = 1, model = 2 };
enum class Task : std::int32_t { run = 0, time = 1 };

struct Request {
  std::uint32_t magic = kMagic;
  Task task = Task::run;
  Function function = Function::run_device;
  std::uint32_t kernel = 0;  // index into the plug-in's kernels
  std::int32_t op = 0, axis = 0, in_dtype = 0, out_dtype = 0;
  std::int64_t rows = 1, cols = 0;
  double eps = 1e-6;
  std::int32_t blocks = 0, threads = 0;
  // Byte offsets of the arrays in the shared memory, and their sizes; an
  // absent array has 0 bytes.
  std::uint64_t x_offset = 0, y_offset = 0, gamma_offset = 0, beta_offset = 0, out_offset = 0;
  std::uint64_t x_bytes = 0, y_bytes = 0, gamma_bytes = 0, beta_bytes = 0, out_bytes = 0;
  std::uint64_t region_bytes = 0;  // the shared memory's size
  std::int32_t new_region = 0;     // a memfd comes with this request: map it instead
  std::int32_t inputs_changed = 0; // x, y, gamma or beta differ from the last request's
  std::int32_t fill = 0xFF;        // out is filled with this byte before the call
  std::int32_t warmup = 0, reps = 0, reads_y = 0;  // Task::time
};

enum class Outcome : std::int32_t {
  returned = 0,  // the function returned status (error: its reason)
  failed = 1     // the call could not be made or checked: error says why
};

struct Reply {
  std::uint32_t magic = kMagic;
  Outcome outcome = Outcome::returned;
  std::int32_t status = 0;
  std::int32_t ends = 0;  // the child exits after this reply (its CUDA context is unusable)
  char error[kErrorBytes] = {};
  // Task::time: GpuBackend::Timing's fields.
  double median_ms = 0, min_ms = 0, max_ms = 0, gbps = 0;
  std::int32_t timed_runs = 0, copies = 1, exceeds_l2 = 0;
  std::uint64_t bytes_per_run = 0;
};

// One message of `size` bytes, with descriptor fd when fd >= 0. false when
// the peer is gone (never SIGPIPE).
bool send_message(int socket, const void* data, std::size_t size, int fd = -1);
// One message of exactly `size` bytes, and the descriptor sent with it in
// *fd (-1 when none) when fd is not null. false when the peer is gone or the
// message is not one of this build's.
bool receive_message(int socket, void* data, std::size_t size, int* fd = nullptr);

}  // namespace ulpscope::kernel_host
