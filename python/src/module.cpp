// The _ulpscope extension module: the C++ core under the ulpscope package
// (python/ulpscope/__init__.py is the interface users call).
#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.hpp"
#include "formats/named_enum.hpp"

namespace py = pybind11;

namespace ulpscope::python {

namespace {
template <class E, std::size_t N>
E named(const NameTable<E, N>& table, const std::string& name, const char* what) {
  if (const auto e = parse_in(table, name)) return *e;
  throw py::value_error(fmt::format("unknown {} '{}' (one of {})", what, name, names_of(table)));
}
}  // namespace

Op op_named(const std::string& name) { return named(kOpNames, name, "op"); }
Axis axis_named(const std::string& name) { return named(kAxisNames, name, "axis"); }
Saturation saturation_named(const std::string& name) {
  if (name == "satfinite") return Saturation::satfinite;
  if (name == "nosat") return Saturation::nosat;
  throw py::value_error(fmt::format("unknown saturation '{}' (satfinite or nosat)", name));
}

}  // namespace ulpscope::python

PYBIND11_MODULE(_ulpscope, m) {
  m.doc() = "ulpscope's C++ core (references, generators, the run matrix); use the ulpscope package";
  m.attr("__version__") = ULPSCOPE_VERSION;
  // The package refuses NumPy 2 under a pybind11 older than 2.12 (ulpscope/__init__.py).
  m.attr("_pybind11_version") = pybind11::make_tuple(PYBIND11_VERSION_MAJOR, PYBIND11_VERSION_MINOR);
  ulpscope::python::bind_reference(m);
  ulpscope::python::bind_generate(m);
  ulpscope::python::bind_evaluate(m);
  ulpscope::python::bind_exact(m);
  ulpscope::python::bind_dlpack(m);
}
