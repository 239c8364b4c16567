// ulpscope.exact on CUDA tensors: kernels/exact.hpp's reduce on device
// pointers and the caller's stream, read by ulpscope/exact.py from the tensor
// (no libtorch link). Without CUDA the module says so (_has_cuda = False) and
// ulpscope.exact computes on the host through the references.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "arrays.hpp"
#include "bindings.hpp"
#include "formats/named_enum.hpp"

#if ULPSCOPE_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "kernels/exact.hpp"
#endif

namespace py = pybind11;

namespace ulpscope::python {

#if ULPSCOPE_HAVE_CUDA
namespace {
exact::Reduction reduction_named(const std::string& name) {
  static constexpr NameTable<exact::Reduction, 6> kNames = {{{exact::Reduction::sum, "sum"},
                                                             {exact::Reduction::mean, "mean"},
                                                             {exact::Reduction::dot, "dot"},
                                                             {exact::Reduction::sumsq, "sumsq"},
                                                             {exact::Reduction::norm2, "norm2"},
                                                             {exact::Reduction::mean_var, "mean_var"}}};
  if (const auto r = parse_in(kNames, name)) return *r;
  throw py::value_error("ulpscope.exact has no '" + name + "' (one of " + names_of(kNames) + ")");
}
}  // namespace
#endif

void bind_exact(py::module_& m) {
#if ULPSCOPE_HAVE_CUDA
  m.attr("_has_cuda") = true;
  m.def(
      "_exact_reduce",
      [](const std::string& op, std::uintptr_t x, std::uintptr_t y, const std::string& in, std::int64_t rows,
         std::int64_t cols, std::uintptr_t out, const std::string& out_dtype, std::uintptr_t stream) {
        const exact::Arguments a{reduction_named(op),
                                 reinterpret_cast<const void*>(x),
                                 reinterpret_cast<const void*>(y),
                                 input_dtype_named(in),
                                 rows,
                                 cols,
                                 reinterpret_cast<void*>(out),
                                 dtype_named(out_dtype)};
        try {
          exact::reduce(a, reinterpret_cast<cudaStream_t>(stream));
        } catch (const std::invalid_argument& e) {
          throw py::value_error(e.what());
        }
      },
      py::arg("op"), py::arg("x"), py::arg("y"), py::arg("dtype"), py::arg("rows"), py::arg("cols"), py::arg("out"),
      py::arg("out_dtype"), py::arg("stream"));
#else
  m.attr("_has_cuda") = false;
#endif
}

}  // namespace ulpscope::python
