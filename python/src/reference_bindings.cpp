// ulpscope.reference and the scoring of values against it: the references of
// accuracy/problem_reference.hpp (the ones the run matrix scores against, with
// its condition numbers) and the metrics of accuracy/metrics.hpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "accuracy/metrics.hpp"
#include "accuracy/problem_reference.hpp"
#include "accuracy/user_kernel.hpp"
#include "arrays.hpp"
#include "bindings.hpp"
#include "formats/hex_float.hpp"

namespace py = pybind11;

namespace ulpscope::python {

namespace {

// One correctly rounded reference value, with where it was rounded to.
struct PyReference {
  Reference r;
  Dtype out = Dtype::fp32;
  Saturation sat = Saturation::satfinite;
  std::optional<double> condition;

  py::dict score(double y) const {
    std::string note;
    const std::optional<double> ulps = ulp_error(y, r.exact, out, &note, sat);
    py::dict d;
    d["ulp_error"] = ulps ? py::object(py::float_(*ulps)) : py::object(py::none());
    d["correctly_rounded"] = correctly_rounded(y, r.rounded);
    d["note"] = note;
    return d;
  }
};

std::optional<TypedArray> optional_array(const py::object& o, const std::string& dtype) {
  if (o.is_none()) return std::nullopt;
  return typed_array_from(o.cast<py::buffer>(), input_dtype_named(dtype));
}

// The references of op on x, laid out as a kernel's outputs: [reduction][component]
// or [row][col] for the norms. x is [rows, cols] row-major (rows = 1 for a whole array).
std::vector<PyReference> references(const py::buffer& x, const std::string& dtype, const std::string& op_name,
                                    const std::string& out_name, const std::string& sat_name, double eps,
                                    const std::string& axis_name, std::int64_t rows, std::int64_t cols,
                                    const py::object& y, const std::string& y_dtype, const py::object& gamma,
                                    const std::string& gamma_dtype, const py::object& beta,
                                    const std::string& beta_dtype) {
  const Op op = op_named(op_name);
  const Dtype in = input_dtype_named(dtype);
  const Dtype out = dtype_named(out_name);
  const Saturation sat = saturation_named(sat_name);
  const Axis axis = axis_named(axis_name);
  const TypedArray xs = typed_array_from(x, in);
  if (rows < 0 || cols < 0 || std::size_t(rows * cols) != xs.size())
    throw py::value_error(fmt::format("shape [{}, {}] does not hold {} values", rows, cols, xs.size()));
  const std::optional<TypedArray> ys = optional_array(y, y_dtype), gs = optional_array(gamma, gamma_dtype),
                                  bs = optional_array(beta, beta_dtype);
  if (takes_second_input(op) && (!ys || ys->size() != xs.size()))
    throw py::value_error("dot needs y of the same shape as x");
  for (const auto* w : {&gs, &bs})
    if (*w && std::int64_t((*w)->size()) != cols)
      throw py::value_error(fmt::format("gamma and beta need one value per column ({})", cols));
  ReductionProblem p;
  p.op = op;
  p.axis = axis;
  p.rows = rows;
  p.cols = cols;
  p.x = &xs;
  p.y = ys ? &*ys : nullptr;
  p.gamma = gs ? &*gs : nullptr;
  p.beta = bs ? &*bs : nullptr;
  p.eps = eps;
  ProblemReference refs;
  {
    py::gil_scoped_release unlocked;
    refs = compute_problem_reference(p, out, sat);
  }
  std::vector<PyReference> result;
  result.reserve(refs.outputs.size());
  for (std::size_t i = 0; i < refs.outputs.size(); ++i)
    result.push_back(PyReference{std::move(refs.outputs[i]), out, sat, refs.condition(i)});
  return result;
}

// The value, rounded to the format: the bit patterns a kernel of that output
// format writes (uint16 for fp16 and bf16, uint8 for fp8, as NumPy arrays of
// float32/float64 for fp32/fp64).
py::array round_to_bits(py::array_t<double, py::array::c_style | py::array::forcecast> values,
                        const std::string& out_name, const std::string& sat_name) {
  const Dtype out = dtype_named(out_name);
  const Saturation sat = saturation_named(sat_name);
  const auto n = std::size_t(values.size());
  std::vector<unsigned char> bytes(n * element_bytes(out));
  encode_values(values.data(), n, out, sat, bytes.data());
  return bits_of(bytes.data(), n, out);
}

}  // namespace

void bind_reference(py::module_& m) {
  py::class_<PyReference>(m, "Reference",
                          "One correctly rounded reference value (reference/op_reference.hpp): the exact value "
                          "as a decimal and its rounding to the output format.")
      .def_property_readonly("rounded", [](const PyReference& p) { return p.r.rounded; },
                             "RN_out(exact) as a Python float (NaN and infinities as IEEE)")
      .def_property_readonly("hex", [](const PyReference& p) { return hex_float(p.r.rounded); },
                             "rounded as a hex-float, as the report writes it")
      .def_property_readonly("exact", [](const PyReference& p) { return decimal_of(p.r); },
                             "the exact value as a decimal string: 40 correctly rounded significant digits, or all of them when "
                             "fewer")
      .def_property_readonly(
          "exact_fraction",
          [](const PyReference& p) -> py::object {
            // The MPFR number m * 2^e itself (exact when exact_is_exact), as a Fraction.
            mpfr_srcptr v = p.r.exact.get();
            if (!mpfr_number_p(v)) return py::none();
            mpz_t m;
            mpz_init(m);
            const mpfr_exp_t e = mpfr_get_z_2exp(m, v);
            char* digits = mpz_get_str(nullptr, 16, m);
            const std::string hex = digits;
            void (*free_fn)(void*, std::size_t);
            mp_get_memory_functions(nullptr, nullptr, &free_fn);
            free_fn(digits, hex.size() + 1);
            mpz_clear(m);
            const py::object fraction = py::module_::import("fractions").attr("Fraction");
            const py::int_ mantissa = py::reinterpret_steal<py::int_>(PyLong_FromString(hex.c_str(), nullptr, 16));
            const py::object two = py::int_(2);
            if (e >= 0) return fraction(mantissa * two.attr("__pow__")(py::int_(long(e))));
            return fraction(mantissa, two.attr("__pow__")(py::int_(long(-e))));
          },
          "the exact value as a fractions.Fraction (for sums, dot products and sums of squares the exact "
          "value itself; else the value carried at working_precision); None for NaN and infinities")
      .def_property_readonly("exact_is_exact", [](const PyReference& p) { return p.r.exact_is_exact; },
                             "whether the value behind `exact` is exact (sums, dot products, sums of squares) rather than "
                             "certified at working_precision")
      .def_property_readonly("working_precision", [](const PyReference& p) { return long(p.r.working_precision); },
                             "the MPFR precision that certified the rounding (0 when none was needed)")
      .def_property_readonly("out_dtype", [](const PyReference& p) { return std::string(to_string(p.out)); })
      .def_property_readonly("condition", [](const PyReference& p) { return p.condition; },
                             "the condition number of the reduction (None where the op has none)")
      .def("ulp_error",
           [](const PyReference& p, double y) {
             return ulp_error(y, p.r.exact, p.out, nullptr, p.sat);
           },
           py::arg("value"),
           "|value - exact| / ulp_out(exact), docs/spec.md \"Metrics\"; None where undefined "
           "(a non-finite value for a finite reference, or the reverse)")
      .def("correctly_rounded", [](const PyReference& p, double y) { return correctly_rounded(y, p.r.rounded); },
           py::arg("value"), "whether value is RN_out(exact) bit for bit (-0 differs from +0)")
      .def("score", &PyReference::score, py::arg("value"),
           "{'ulp_error': float or None, 'correctly_rounded': bool, 'note': why ulp_error is None}")
      .def("__float__", [](const PyReference& p) { return p.r.rounded; })
      .def("__repr__", [](const PyReference& p) {
        return fmt::format("Reference(rounded={} ({}), exact={}{}, out_dtype={})", hex_float(p.r.rounded),
                           fmt::format("{:.17g}", p.r.rounded), decimal_of(p.r),
                           p.r.exact_is_exact ? "" : "...", to_string(p.out));
      });

  m.def("_references", &references, py::arg("x"), py::arg("dtype"), py::arg("op"), py::arg("out_dtype"),
        py::arg("saturation"), py::arg("eps"), py::arg("axis"), py::arg("rows"), py::arg("cols"), py::arg("y"),
        py::arg("y_dtype"), py::arg("gamma"), py::arg("gamma_dtype"), py::arg("beta"), py::arg("beta_dtype"));
  m.def("_round_to_bits", &round_to_bits, py::arg("values"), py::arg("out_dtype"), py::arg("saturation"));
  m.def(
      "_ulp_error_of_double",
      [](double y, double r, const std::string& out, const std::string& sat) {
        std::string note;
        const auto u = ulp_error(y, ExactReal::from_double(r), dtype_named(out), &note, saturation_named(sat));
        return py::make_tuple(u ? py::object(py::float_(*u)) : py::object(py::none()), note);
      },
      py::arg("value"), py::arg("reference"), py::arg("out_dtype"), py::arg("saturation"));
  m.def(
      "_decode",
      [](const py::buffer& bits, const std::string& dtype) {
        const Dtype d = dtype_named(dtype);
        const py::buffer_info info = bits.request();
        if (std::size_t(info.itemsize) != element_bytes(d))
          throw py::value_error(fmt::format("{} values are {}-byte items", to_string(d), element_bytes(d)));
        const std::vector<double> v = decode_outputs(info.ptr, d, std::size_t(info.size));
        return py::array_t<double>(py::ssize_t(v.size()), v.data());
      },
      py::arg("bits"), py::arg("dtype"), "bit patterns of a format (C-contiguous) widened exactly to float64");
  m.def("_default_out_dtype",
        [](const std::string& in) { return std::string(to_string(default_out_dtype(input_dtype_named(in)))); });
}

}  // namespace ulpscope::python
