#pragma once
// The parts of the _ulpscope extension module, one per file, and the names
// they share.
#include <pybind11/pybind11.h>

#include <string>

#include "formats/dtype.hpp"
#include "kernels/op.hpp"
#include "kernels/reduction.hpp"

namespace ulpscope::python {

void bind_reference(pybind11::module_& m);
void bind_generate(pybind11::module_& m);
void bind_evaluate(pybind11::module_& m);
void bind_exact(pybind11::module_& m);
void bind_dlpack(pybind11::module_& m);

// Names as the command line spells them; py::value_error naming the accepted
// ones otherwise.
Op op_named(const std::string& name);
Axis axis_named(const std::string& name);
Saturation saturation_named(const std::string& name);

}  // namespace ulpscope::python
