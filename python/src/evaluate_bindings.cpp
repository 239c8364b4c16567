// ulpscope.evaluate: a Python callable as a user kernel (accuracy/user_kernel.hpp)
// through the run matrix (accuracy/evaluate_kernel.hpp), exactly as
// accuracy_report --kernel-lib measures a plug-in's kernels, and the cells as
// the JSON report (reports/json_report.hpp) that the gate and the HTML report read.
//
// The matrix calls kernels from its worker threads: evaluate releases the GIL
// while the matrix runs, and each call of the callable takes it again
// (PyGILState, which works from threads Python did not start). The callable is
// held through a shared_ptr so that copies of the UserKernel made without the
// GIL never touch its reference count.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy/evaluate_kernel.hpp"
#include "arrays.hpp"
#include "bindings.hpp"
#include "kernels/accumulator.hpp"
#include "kernels/shape.hpp"
#include "reports/html_report.hpp"
#include "reports/json_report.hpp"
#include "ulpscope_git_commit.hpp"  // generated at build time: ULPSCOPE_GIT_COMMIT

namespace py = pybind11;

namespace ulpscope::python {

namespace {

// Set when the callable raised KeyboardInterrupt or SystemExit: the remaining
// calls fail at once and evaluate re-raises it.
struct Interruption {
  std::atomic<bool> raised{false};
};

// The GIL for a thread of the matrix's pool, through CPython's own
// PyGILState API, which is made for threads Python did not start (Python/C
// API, "Non-Python created threads") and keeps no state of pybind11's.
class PythonThread {
 public:
  PythonThread() : state_(PyGILState_Ensure()) {}
  ~PythonThread() { PyGILState_Release(state_); }
  PythonThread(const PythonThread&) = delete;
  PythonThread& operator=(const PythonThread&) = delete;

 private:
  PyGILState_STATE state_;
};

// The Python adapter (ulpscope/_evaluate.py) is called as
//   call(x, y, gamma, beta, rows, cols, axis, eps) -> values (float64, output_count of them)
// with the inputs as bit-pattern arrays (arrays.hpp's bits_of).
std::function<void(const KernelArgs&)> host_call(std::shared_ptr<py::object> call, Saturation sat,
                                                 std::shared_ptr<Interruption> interruption) {
  return [call = std::move(call), sat, interruption = std::move(interruption)](const KernelArgs& a) {
    if (interruption->raised) throw std::runtime_error("not run: the evaluation was interrupted");
    const std::size_t n = std::size_t(a.rows * a.cols), cols = std::size_t(a.cols);
    const std::size_t count = std::size_t(output_count(a.op, a.axis, a.rows, a.cols));
    const PythonThread gil;
    std::string failure;
    try {
      auto optional = [](const void* p, std::size_t k, Dtype d) {
        return p ? py::object(bits_of(p, k, d)) : py::object(py::none());
      };
      py::object result = (*call)(bits_of(a.x, n, a.in_dtype), optional(a.y, n, a.in_dtype),
                                  optional(a.gamma, cols, a.in_dtype), optional(a.beta, cols, a.in_dtype), a.rows,
                                  a.cols, std::string(to_string(a.axis)), a.eps);
      const auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(result);
      if (!values) throw py::value_error("the adapter returned no array of numbers");
      if (std::size_t(values.size()) != count)
        throw py::value_error(fmt::format("returned {} values, {} expected", values.size(), count));
      encode_values(values.data(), count, a.out_dtype, sat, a.out);
      return;
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) interruption->raised = true;
      failure = e.what();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    // First line only: a cell's status is one line.
    throw std::runtime_error(failure.substr(0, failure.find('\n')));
  };
}

template <class E, std::size_t N>
std::vector<E> parse_all(const NameTable<E, N>& table, const std::vector<std::string>& names, const char* what) {
  std::vector<E> out;
  for (const std::string& name : names) {
    const auto e = parse_in(table, name);
    if (!e) throw py::value_error(fmt::format("unknown {} '{}' (one of {})", what, name, names_of(table)));
    out.push_back(*e);
  }
  return out;
}

std::string now_iso8601() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(t));
}

// kernels: dicts {name, accumulator, op, dtype, out_dtype, axes, deterministic,
// reentrant, call}; returns the report as JSON text.
std::string evaluate(const py::list& kernel_dicts, const std::vector<std::string>& distributions,
                     const std::vector<std::int64_t>& sizes, const std::vector<std::uint64_t>& seeds,
                     std::int64_t row_cols, int runs, int permutations, double eps, const std::string& saturation,
                     const std::vector<std::string>& accumulators, const std::vector<std::string>& shapes,
                     const std::string& command_line) {
  EvaluateOptions o;
  for (const std::string& text : distributions) {
    std::string why;
    const auto spec = parse_distribution(text, &why);
    if (!spec) throw py::value_error(why);
    o.distributions.push_back(*spec);
  }
  for (std::int64_t n : sizes)
    if (n < 1) throw py::value_error(fmt::format("size {}: sizes must be at least 1", n));
  if (runs < 1 || permutations < 0 || row_cols < 1)
    throw py::value_error("runs and row_cols must be at least 1, permutations at least 0");
  o.sizes = sizes;
  o.seeds = seeds;
  o.row_cols = row_cols;
  o.runs = runs;
  o.permutations = permutations;
  o.eps = eps;
  o.saturation = saturation_named(saturation);
  o.backend = EvaluationBackend::cpu;
  o.accumulators = parse_all(kAccumulatorNames, accumulators, "accumulator");
  o.shapes = parse_all(kShapeNames, shapes, "shape");
  if (o.accumulators.empty() != o.shapes.empty())
    throw py::value_error("built-in kernels for comparison need both accumulators and shapes");

  auto interruption = std::make_shared<Interruption>();
  std::vector<UserKernel> kernels;
  for (const py::handle h : kernel_dicts) {
    const auto d = h.cast<py::dict>();
    UserKernel u;
    u.name = d["name"].cast<std::string>();
    u.accumulator = d["accumulator"].cast<std::string>();
    u.op = op_named(d["op"].cast<std::string>());
    u.in = input_dtype_named(d["dtype"].cast<std::string>());
    u.out = dtype_named(d["out_dtype"].cast<std::string>());
    for (const auto& a : d["axes"].cast<std::vector<std::string>>()) u.axes.push_back(axis_named(a));
    u.deterministic = d["deterministic"].cast<bool>();
    u.reentrant = d["reentrant"].cast<bool>();
    u.library = "python";
    u.run_host = host_call(std::make_shared<py::object>(d["call"]), o.saturation, interruption);
    if (const std::string why = describe_problem(u); !why.empty())
      throw py::value_error(fmt::format("kernel '{}': {}", u.name, why));
    kernels.push_back(std::move(u));
  }

  // One kernel name may measure several input formats (a framework's op
  // takes them all): the matrix is run per format, since a run's kernels
  // have distinct names, and the cells are joined into one report.
  const auto t0 = std::chrono::steady_clock::now();
  auto run = [&] {
    std::vector<std::vector<UserKernel>> batches;
    for (const UserKernel& u : kernels) {
      auto batch = std::find_if(batches.begin(), batches.end(), [&](const std::vector<UserKernel>& b) {
        return std::none_of(b.begin(), b.end(), [&](const UserKernel& k) { return k.name == u.name; });
      });
      if (batch == batches.end()) batch = batches.insert(batches.end(), std::vector<UserKernel>{});
      batch->push_back(u);
    }
    Evaluation all;
    for (const auto& batch : batches) {
      Evaluation e = evaluate_kernels(batch, o);
      all.backend = e.backend;
      all.device = e.device;
      for (Cell& c : e.cells) all.cells.push_back(std::move(c));
      for (auto& u : e.unavailable)
        if (std::find(all.unavailable.begin(), all.unavailable.end(), u) == all.unavailable.end())
          all.unavailable.push_back(std::move(u));
    }
    all.settings = evaluation_settings(kernels, o);
    return all;
  };
  // The matrix runs on its own thread while this one, Python's main thread,
  // watches for Ctrl-C (only the main thread sees signals): on one, the
  // remaining calls fail at once and KeyboardInterrupt is raised here.
  std::unique_ptr<py::error_already_set> signal;
  Evaluation all;
  {
    py::gil_scoped_release unlocked;
    std::future<Evaluation> running = std::async(std::launch::async, run);
    while (running.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire gil;
      if (!signal && PyErr_CheckSignals() != 0) {
        signal = std::make_unique<py::error_already_set>();
        interruption->raised = true;
      }
    }
    all = running.get();
  }
  if (signal) throw *signal;
  if (interruption->raised) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  Report r = evaluation_report(all, command_line);
  r.header.version = ULPSCOPE_VERSION;
  r.header.git_commit = ULPSCOPE_GIT_COMMIT;
  r.header.build_flags = ULPSCOPE_BUILD_FLAGS;
  r.header.started_at = now_iso8601();
  r.header.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ostringstream json;
  write_json(r, json);
  return json.str();
}

}  // namespace

void bind_evaluate(py::module_& m) {
  m.def("_evaluate", &evaluate, py::arg("kernels"), py::arg("distributions"), py::arg("sizes"), py::arg("seeds"),
        py::arg("row_cols"), py::arg("runs"), py::arg("permutations"), py::arg("eps"), py::arg("saturation"),
        py::arg("accumulators"), py::arg("shapes"), py::arg("command_line"));
  m.def(
      "_report_html",
      [](const std::string& json_text) {
        std::istringstream in(json_text);
        const Report r = read_report(in, "<evaluation>");
        std::ostringstream html;
        write_html(r, html);
        return html.str();
      },
      py::arg("json"), "the JSON report as accuracy_report --format html writes it");
  m.def("_default_distributions", [] {
    std::vector<std::string> names;
    for (const DistributionSpec& d : default_matrix(false).distributions) names.push_back(d.name());
    return names;
  });
}

}  // namespace ulpscope::python
