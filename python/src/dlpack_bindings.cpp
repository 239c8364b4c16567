// What a DLPack capsule describes (the memory, its device, shape, strides and
// element type), read without taking ownership: ulpscope/_device_arrays.py
// turns it into a device array it can reduce in place. The structs are
// DLPack's ABI (dlpack.h, v1.1: DLTensor, DLManagedTensor and, for a capsule
// named "dltensor_versioned", DLManagedTensorVersioned), declared here because
// Debian 12's libdlpack-dev (0.6) is not among the project's dependencies and
// predates the fp8 type codes.
#include <pybind11/pybind11.h>

#include <cstdint>

#include "bindings.hpp"

namespace py = pybind11;

namespace ulpscope::python {

namespace {

struct DLDevice {
  std::int32_t device_type;  // kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLFloat8_e4m3fn 10, kDLFloat8_e5m2 12
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  std::uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  std::uint64_t flags;
  DLTensor dl_tensor;
};

py::dict describe(const DLTensor& t) {
  if (t.ndim < 0) throw py::value_error("DLPack: negative ndim");
  py::tuple shape(t.ndim);
  py::object strides = py::none();
  for (int k = 0; k < t.ndim; ++k) shape[k] = t.shape[k];
  if (t.strides != nullptr) {
    py::tuple s(t.ndim);
    for (int k = 0; k < t.ndim; ++k) s[k] = t.strides[k];
    strides = s;
  }
  py::dict d;
  d["data"] = reinterpret_cast<std::uintptr_t>(t.data) + std::uintptr_t(t.byte_offset);
  d["device_type"] = t.device.device_type;
  d["device_id"] = t.device.device_id;
  d["shape"] = shape;
  d["strides"] = strides;
  d["code"] = int(t.dtype.code);
  d["bits"] = int(t.dtype.bits);
  d["lanes"] = int(t.dtype.lanes);
  return d;
}

}  // namespace

void bind_dlpack(py::module_& m) {
  // The capsule stays its producer's: not renamed "used_dltensor", so its
  // destructor frees the tensor when the capsule goes (DLPack, "Python
  // specification"); the caller keeps the array alive while it is read.
  m.def(
      "_dlpack_describe",
      [](const py::capsule& c) {
        const char* name = c.name();
        const std::string n = name ? name : "";
        if (n == "dltensor") return describe(static_cast<DLManagedTensor*>(c.get_pointer())->dl_tensor);
        if (n == "dltensor_versioned") {
          const auto* v = static_cast<DLManagedTensorVersioned*>(c.get_pointer());
          if (v->version.major != 1)
            throw py::value_error("DLPack: version " + std::to_string(v->version.major) + "." +
                                  std::to_string(v->version.minor) + " is not 1.x");
          return describe(v->dl_tensor);
        }
        throw py::value_error("not a DLPack capsule (its name is '" + n + "', not 'dltensor')");
      },
      py::arg("capsule"),
      "The memory a DLPack capsule describes: {data, device_type, device_id, shape, strides, code, bits, lanes}.");
}

}  // namespace ulpscope::python
