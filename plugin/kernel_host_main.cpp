// ulpscope-kernel-host LIBRARY [--device]: serves one plug-in library's
// functions to accuracy_report over the socket on descriptor 3
// (plugin/kernel_host_protocol.hpp), so that whatever a function does (a
// crash, exit(), a hang, a CUDA error) ends or spoils this process only. Not
// for running by hand.
#include <dlfcn.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "accuracy/user_kernel.hpp"
#include "formats/typed_array.hpp"
#include "kernels/gpu_backend.hpp"
#include "plugin/kernel_host_protocol.hpp"
#include "plugin/ulpscope_plugin.h"

#ifdef ULPSCOPE_KERNEL_HOST_CUDA
#include <cuda_runtime.h>
#endif

namespace ulpscope::kernel_host {
namespace {

void set_error(char (&error)[kErrorBytes], const std::string& why) {
  std::snprintf(error, sizeof error, "%s", why.c_str());
}

struct Server {
  const ulpscope_plugin_v1* plugin = nullptr;
  std::unique_ptr<GpuBackend> gpu;
  std::string no_gpu;
  unsigned char* region = nullptr;
  std::size_t region_bytes = 0;
  bool uploaded = false;
  Request uploaded_as;  // the shape of the arrays on the device

  const void* at(std::uint64_t offset, std::uint64_t bytes) const {
    return bytes == 0 ? nullptr : region + offset;
  }

  ulpscope_call call_of(const Request& r) const {
    ulpscope_call c{};
    c.op = r.op;
    c.axis = r.axis;
    c.in_dtype = r.in_dtype;
    c.out_dtype = r.out_dtype;
    c.rows = r.rows;
    c.cols = r.cols;
    c.x = at(r.x_offset, r.x_bytes);
    c.y = at(r.y_offset, r.y_bytes);
    c.gamma = at(r.gamma_offset, r.gamma_bytes);
    c.beta = at(r.beta_offset, r.beta_bytes);
    c.eps = r.eps;
    c.out = region + r.out_offset;
    c.config = ulpscope_launch_config{r.blocks, r.threads};
    return c;
  }
  // The same call on the device: the uploaded arrays and a device `out`.
  ulpscope_call device_call_of(const Request& r, const GpuBackend::UploadedArrays& a, void* out) const {
    ulpscope_call c = call_of(r);
    c.x = a.x;
    c.y = a.y;
    c.gamma = a.gamma;
    c.beta = a.beta;
    c.out = out;
    return c;
  }

  bool guard_intact(const unsigned char* guard) const {
    return std::all_of(guard, guard + kGuardBytes, [](unsigned char b) { return b == kGuard; });
  }

  // A host function on the shared memory itself.
  void run_host(const Request& r, ulpscope_host_fn f, Reply& reply) {
    ulpscope_call c = call_of(r);
    auto* out = static_cast<unsigned char*>(c.out);
    std::memset(out, r.fill, r.out_bytes);
    std::memset(out + r.out_bytes, kGuard, kGuardBytes);
    reply.status = f(&c, reply.error, sizeof reply.error);
    if (!guard_intact(out + r.out_bytes)) {
      reply.outcome = Outcome::failed;
      set_error(reply.error, fmt::format("wrote past its output ({} bytes)", r.out_bytes));
    }
  }

  // The arrays on the device, copied from the shared memory when they
  // changed (the host copies are released once uploaded).
  void upload(const Request& r) {
    const bool same_shape = uploaded && r.axis == uploaded_as.axis && r.rows == uploaded_as.rows &&
                            r.cols == uploaded_as.cols && r.in_dtype == uploaded_as.in_dtype &&
                            r.eps == uploaded_as.eps && r.y_bytes == uploaded_as.y_bytes &&
                            r.gamma_bytes == uploaded_as.gamma_bytes && r.beta_bytes == uploaded_as.beta_bytes;
    if (same_shape && !r.inputs_changed) return;
    uploaded = false;
    const Dtype d = Dtype(r.in_dtype);
    auto array = [&](std::uint64_t offset, std::uint64_t bytes, bool always = false) -> std::optional<TypedArray> {
      if (bytes == 0 && !always) return std::nullopt;
      TypedArray a(d, std::size_t(bytes / element_bytes(d)));
      if (bytes > 0) std::memcpy(const_cast<void*>(a.raw()), region + offset, bytes);
      return a;
    };
    const auto x = array(r.x_offset, r.x_bytes, true);  // an empty input too
    const auto y = array(r.y_offset, r.y_bytes);
    const auto gamma = array(r.gamma_offset, r.gamma_bytes);
    const auto beta = array(r.beta_offset, r.beta_bytes);
    ReductionProblem p;
    p.op = Op(r.op);
    p.axis = Axis(r.axis);
    p.rows = r.rows;
    p.cols = r.cols;
    p.x = x ? &*x : nullptr;
    p.y = y ? &*y : nullptr;
    p.gamma = gamma ? &*gamma : nullptr;
    p.beta = beta ? &*beta : nullptr;
    p.eps = r.eps;
    gpu->upload(p);
    uploaded = true;
    uploaded_as = r;
  }

  void run_device(const Request& r, const ulpscope_kernel_v1& k, Reply& reply) {
    const std::string what = "run_device";  // accuracy_report names the kernel
    upload(r);
    if (r.task == Task::time) {
      reply.status = 0;
      auto launch = [&](const GpuBackend::UploadedArrays& a, void* out, void* stream) {
        ulpscope_call c = device_call_of(r, a, out);
        if (reply.status == 0) reply.status = k.run_device(&c, stream, reply.error, sizeof reply.error);
      };
      const GpuBackend::Timing t = gpu->time_launch(launch, r.out_bytes, r.reads_y != 0, r.warmup, r.reps, what);
      reply.median_ms = t.median_ms;
      reply.min_ms = t.min_ms;
      reply.max_ms = t.max_ms;
      reply.gbps = t.gbps;
      reply.timed_runs = t.timed_runs;
      reply.copies = t.copies;
      reply.exceeds_l2 = t.exceeds_l2;
      reply.bytes_per_run = t.bytes_per_run;
      return;
    }
    // out, then the guard, in one device buffer: filled before the call,
    // both brought back after it.
    auto launch = [&](const GpuBackend::UploadedArrays& a, void* out, void* stream) {
#ifdef ULPSCOPE_KERNEL_HOST_CUDA
      auto* s = static_cast<cudaStream_t>(stream);
      if (cudaMemsetAsync(out, r.fill, r.out_bytes, s) != cudaSuccess ||
          cudaMemsetAsync(static_cast<char*>(out) + r.out_bytes, kGuard, kGuardBytes, s) != cudaSuccess)
        throw GpuError("filling the output before " + what);
#endif
      ulpscope_call c = device_call_of(r, a, out);
      reply.status = k.run_device(&c, stream, reply.error, sizeof reply.error);
    };
    const std::vector<unsigned char> got = gpu->run_launch(launch, r.out_bytes + kGuardBytes, what);
    std::memcpy(region + r.out_offset, got.data(), r.out_bytes);
    if (!guard_intact(got.data() + r.out_bytes)) {
      reply.outcome = Outcome::failed;
      set_error(reply.error, fmt::format("wrote past its output on the device ({} bytes)", r.out_bytes));
    }
  }

  Reply serve(const Request& r) {
    Reply reply;
    if (r.kernel >= plugin->kernel_count) {
      reply.outcome = Outcome::failed;
      set_error(reply.error, fmt::format("no kernel {} in the library", r.kernel));
      return reply;
    }
    const ulpscope_kernel_v1& k = plugin->kernels[r.kernel];
    if (r.function != Function::run_device) {
      const ulpscope_host_fn f = r.function == Function::model ? k.model : k.run_host;
      if (f == nullptr) {
        reply.outcome = Outcome::failed;
        set_error(reply.error, "the library has no such function");
      } else {
        run_host(r, f, reply);
      }
      return reply;
    }
    if (k.run_device == nullptr || !gpu) {
      reply.outcome = Outcome::failed;
      set_error(reply.error, k.run_device ? "no GPU in ulpscope-kernel-host: " + no_gpu : "no run_device");
      return reply;
    }
    try {
      run_device(r, k, reply);
    } catch (const std::exception& e) {
      // A CUDA error may leave the context unusable (cudaErrorIllegalAddress
      // is sticky): this process ends, the next call starts another.
      reply.outcome = Outcome::failed;
      reply.ends = 1;
      set_error(reply.error, std::string(e.what()) + " (ulpscope-kernel-host starts again for the next call)");
    }
    return reply;
  }
};

int serve(int argc, char** argv) {
  // Ends with accuracy_report, even when it is killed while a call hangs
  // here. Not PR_SET_PDEATHSIG: it fires when the thread that started this
  // process ends (prctl(2)), which may be long before accuracy_report does.
  const pid_t parent = ::getppid();
  std::thread([parent] {
    while (::getppid() == parent) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::_exit(1);
  }).detach();
  // What the plug-in prints must not reach accuracy_report's standard output
  // (a report may be written there).
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  Hello hello;
  Server server;
  if (argc < 2) {
    set_error(hello.error, "usage: ulpscope-kernel-host LIBRARY [--device]");
    send_message(kSocketFd, &hello, sizeof hello);
    return 2;
  }
  void* handle = ::dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  const auto get = handle ? reinterpret_cast<ulpscope_get_plugin_fn>(::dlsym(handle, ULPSCOPE_PLUGIN_ENTRY_POINT))
                          : nullptr;
  server.plugin = get ? get() : nullptr;
  if (handle == nullptr) {
    const char* why = ::dlerror();
    set_error(hello.error, why ? why : "dlopen failed");
  } else if (server.plugin == nullptr || server.plugin->abi_version != ULPSCOPE_PLUGIN_ABI_VERSION) {
    set_error(hello.error, "not a plug-in of this ABI version");
  } else {
    hello.ok = 1;
    if (argc > 2 && std::string(argv[2]) == "--device") {
      server.gpu = GpuBackend::open(&server.no_gpu);
      hello.has_gpu = server.gpu != nullptr;
      if (!server.gpu) set_error(hello.error, server.no_gpu);
    }
  }
  if (!send_message(kSocketFd, &hello, sizeof hello) || !hello.ok) return hello.ok ? 0 : 2;
  while (true) {
    Request request;
    int fd = -1;
    if (!receive_message(kSocketFd, &request, sizeof request, &fd)) return 0;  // accuracy_report is done
    if (fd >= 0) {
      if (server.region != nullptr) ::munmap(server.region, server.region_bytes);
      void* map = ::mmap(nullptr, request.region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      ::close(fd);
      server.region = map == MAP_FAILED ? nullptr : static_cast<unsigned char*>(map);
      server.region_bytes = map == MAP_FAILED ? 0 : request.region_bytes;
      server.uploaded = false;
    }
    Reply reply;
    if (server.region == nullptr || request.out_offset + request.out_bytes + kGuardBytes > server.region_bytes) {
      reply.outcome = Outcome::failed;
      set_error(reply.error, "ulpscope-kernel-host: the shared memory is missing or too small");
    } else {
      reply = server.serve(request);
    }
    if (!send_message(kSocketFd, &reply, sizeof reply)) return 0;
    if (reply.ends) return 0;
  }
}

}  // namespace
}  // namespace ulpscope::kernel_host

int main(int argc, char** argv) { return ulpscope::kernel_host::serve(argc, argv); }
