// ulpscope.generate: accuracy/distribution.hpp's generators, the same bits as
// every other caller of them.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "accuracy/distribution.hpp"
#include "arrays.hpp"
#include "bindings.hpp"

namespace py = pybind11;

namespace ulpscope::python {

void bind_generate(py::module_& m) {
  m.def(
      "_generate",
      [](const std::string& distribution, std::int64_t n, const std::string& dtype, std::uint64_t seed,
         bool with_y) {
        std::string why;
        const std::optional<DistributionSpec> spec = parse_distribution(distribution, &why);
        if (!spec) throw py::value_error(why);
        const Dtype d = input_dtype_named(dtype);
        if (n < 0) throw py::value_error("n must be at least 0");
        GeneratedInput g;
        {
          py::gil_scoped_release unlocked;
          g = generate(*spec, d, n, seed, with_y);
        }
        py::dict out;
        out["x"] = bits_of(g.x);
        out["y"] = g.y ? py::object(bits_of(*g.y)) : py::object(py::none());
        out["note"] = g.note;
        out["achieved_condition"] = g.achieved_condition;
        out["achieved_dot_condition"] = g.achieved_dot_condition;
        out["name"] = spec->name();
        return out;
      },
      py::arg("distribution"), py::arg("n"), py::arg("dtype"), py::arg("seed"), py::arg("with_y"));
  m.def("_distributions", [] {
    std::vector<std::string> names;
    for (const auto& [d, name] : kDistributionNames) names.emplace_back(name);
    return names;
  });
}

}  // namespace ulpscope::python
