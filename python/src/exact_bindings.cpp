// ulpscope.exact on device arrays: kernels/exact.hpp's reduce on device
// pointers and the caller's stream, called by ulpscope/exact.py with the
// pointers, shape and format it read from the array (no libtorch link), and
// the CUDA calls the package needs for device memory it did not allocate
// (which device a pointer is on, a copy to the host). Without CUDA the module
// says so (_has_cuda = False) and ulpscope.exact computes on the host through
// the references.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"

#if ULPSCOPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "kernels/exact.hpp"
#endif

namespace py = pybind11;

namespace ulpscope::python {

#if ULPSCOPE_HAVE_CUDA
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": CUDA error " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

// Makes `device` current for the scope (the kernels and the scratch pool
// follow the current device), restoring the caller's on the way out; no CUDA
// call when it already is, or when device < 0 (the current one).
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (device < 0) return;
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ == device) return;
    check(cudaSetDevice(device), "cudaSetDevice");
    restore_ = true;
  }
  ~DeviceScope() {
    if (restore_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

template <class E>
E checked_code(int code, int count, const char* what) {
  if (code < 0 || code >= count) throw py::value_error(std::string("ulpscope.exact: unknown ") + what + " code");
  return static_cast<E>(code);
}

}  // namespace
#endif

void bind_exact(py::module_& m) {
  // The codes _exact_launch takes, so that the Python layer passes integers
  // (no name parsing per call).
  py::dict ops, formats;
  const char* op_names[] = {"sum", "mean", "dot", "sumsq", "norm2", "mean_var"};
  for (int i = 0; i < 6; ++i) ops[op_names[i]] = i;
  for (Dtype d : kOutputDtypes) formats[py::str(std::string(to_string(d)))] = static_cast<int>(d);
  m.attr("_exact_op_codes") = ops;
  m.attr("_format_codes") = formats;
#if ULPSCOPE_HAVE_CUDA
  static_assert(static_cast<int>(exact::Reduction::mean_var) == 5, "op_names follows exact::Reduction");
  m.attr("_has_cuda") = true;
  m.def(
      "_exact_launch",
      [](int op, std::uintptr_t x, std::uintptr_t y, int in, std::int64_t rows, std::int64_t cols, std::uintptr_t out,
         int out_dtype, std::uintptr_t stream, int device) {
        const exact::Arguments a{checked_code<exact::Reduction>(op, 6, "op"),
                                 reinterpret_cast<const void*>(x),
                                 reinterpret_cast<const void*>(y),
                                 checked_code<Dtype>(in, int(kOutputDtypes.size()), "format"),
                                 rows,
                                 cols,
                                 reinterpret_cast<void*>(out),
                                 checked_code<Dtype>(out_dtype, int(kOutputDtypes.size()), "format")};
        const DeviceScope scope(device);
        try {
          exact::reduce(a, reinterpret_cast<cudaStream_t>(stream));
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("op"), py::arg("x"), py::arg("y"), py::arg("dtype"), py::arg("rows"), py::arg("cols"), py::arg("out"),
      py::arg("out_dtype"), py::arg("stream"), py::arg("device"),
      "Enqueue an exact reduction on device pointers (codes from _exact_op_codes, _format_codes); device -1: the "
      "current one.");
  m.def(
      "_pointer_device",
      [](std::uintptr_t ptr) {
        cudaPointerAttributes attr{};
        check(cudaPointerGetAttributes(&attr, reinterpret_cast<const void*>(ptr)), "cudaPointerGetAttributes");
        const bool on_device = attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
        return on_device ? attr.device : -1;
      },
      py::arg("ptr"), "The device whose memory ptr points into, or -1 for host memory.");
  m.def(
      "_copy_to_host",
      [](std::uintptr_t ptr, std::size_t bytes, std::uintptr_t stream, int device) {
        std::string host(bytes, '\0');
        {
          const DeviceScope scope(device);
          py::gil_scoped_release release;
          const auto s = reinterpret_cast<cudaStream_t>(stream);
          check(cudaMemcpyAsync(host.data(), reinterpret_cast<const void*>(ptr), bytes, cudaMemcpyDefault, s),
                "cudaMemcpyAsync (device array to the host)");
          check(cudaStreamSynchronize(s), "cudaStreamSynchronize (device array to the host)");
        }
        return py::bytes(host);
      },
      py::arg("ptr"), py::arg("bytes"), py::arg("stream"), py::arg("device"),
      "bytes of device memory, copied on stream once the stream's earlier work is done.");
#else
  m.attr("_has_cuda") = false;
#endif
}

}  // namespace ulpscope::python
