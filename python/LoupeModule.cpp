// LoupeModule: the `loupe._loupe` Python extension (pybind11) — a workbench session driving the
// same Engine as the REPL, with :run's values as NumPy arrays and :groups and :profile as rows.
#include "core/DType.h"
#include "core/Error.h"
#include "repl/Engine.h"
#include "repl/commands/Commands.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sstream>

namespace py = pybind11;
using namespace loupe;

namespace {

// The Python exception every failure raises (loupe.Error), made when the module loads.
PyObject *errorType = nullptr;

[[noreturn]] void raise(const std::string &message) {
  PyErr_SetString(errorType, message.c_str());
  throw py::error_already_set();
}

// The first line of what a failed input printed, without the REPL's "error: " in front.
std::string firstLine(std::string text) {
  if (size_t nl = text.find('\n'); nl != std::string::npos)
    text.resize(nl);
  if (text.starts_with("error: "))
    text = text.substr(7);
  return text;
}

// An array's values as a Tensor of its dtype (a copy: the workbench holds values as doubles).
Tensor tensorOf(const std::string &name, const py::array &a) {
  std::string kind = py::str(a.dtype());
  std::optional<int> dt = dtypeFromName(kind);
  if (!dt)
    raise("run: input '" + name + "' has NumPy dtype " + kind + ", which the workbench has not");
  auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!values)
    raise("run: input '" + name + "' cannot be read as numbers");
  Tensor t(Shape(values.shape(), values.shape() + values.ndim()), *dt);
  std::copy(values.data(), values.data() + values.size(), t.data.begin());
  return t;
}

// A Tensor as a NumPy array of its dtype.
py::array arrayOf(const Tensor &t) {
  py::array a(py::dtype(std::string(dtypeName(t.dtype))),
              std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
  auto *p = static_cast<char *>(a.mutable_data());
  int64_t bytes = dtypeBytes(t.dtype);
  for (size_t i = 0; i < t.data.size(); ++i)
    storeElement(p + static_cast<int64_t>(i) * bytes, t.dtype, t.data[i]);
  return a;
}

/// One workbench: the engine and the calls the Python `loupe.Session` makes.
class Session {
public:
  /// Runs one REPL input; its printed text, or loupe.Error with its one-line message.
  std::string command(const std::string &input) {
    std::ostringstream out, err;
    bool ok;
    {
      py::gil_scoped_release release; // a long :build or :tune leaves other threads running
      ok = engine_.execute(input, out, err);
    }
    if (!ok)
      raise(firstLine(err.str().empty() ? out.str() : err.str()));
    return out.str() + err.str();
  }

  /// :run's values: (output names, outputs, reference outputs — empty unless checked).
  py::tuple runValues(const py::dict &inputs, unsigned seed, bool check) {
    std::map<std::string, Tensor> given;
    for (const auto &[k, v] : inputs) {
      std::string name = py::str(k);
      given[name] = tensorOf(name, py::array::ensure(v));
    }
    Commands::RunValues r;
    try {
      py::gil_scoped_release release;
      r = Commands::runValues(engine_, given, seed, check);
    } catch (const Error &e) {
      raise(e.what());
    }
    py::list outs, refs;
    for (const Tensor &t : r.outputs)
      outs.append(arrayOf(t));
    for (const Tensor &t : r.reference)
      refs.append(arrayOf(t));
    return py::make_tuple(r.names, outs, refs);
  }

  /// :groups as a dict: nodes (node, root, master), groups (root, members, pattern, master,
  /// function), and for a built step the opt level and rules it was partitioned with.
  py::dict groups() {
    Commands::GroupsView v;
    try {
      v = Commands::groupsOf(engine_);
    } catch (const Error &e) {
      raise(e.what());
    }
    py::list nodes, groups;
    for (const auto &n : v.nodes)
      nodes.append(py::dict(py::arg("node") = n.node, py::arg("root") = n.root,
                            py::arg("master") = none(n.master)));
    for (const auto &g : v.groups)
      groups.append(py::dict(py::arg("root") = g.root, py::arg("members") = g.members,
                             py::arg("pattern") = g.pattern, py::arg("master") = none(g.master),
                             py::arg("function") = g.function));
    py::dict d(py::arg("nodes") = nodes, py::arg("groups") = groups);
    d["opt_level"] = v.built ? py::object(py::int_(v.optLevel)) : py::object(py::none());
    d["rules"] = v.built ? py::object(py::str(v.rules)) : py::object(py::none());
    return d;
  }

  /// The current step's last :profile: a row per kernel call in the order the graph calls them.
  py::list profileRows() {
    const Step *s = engine_.current();
    py::list rows;
    if (!s)
      return rows;
    const IndexedGraph &idx = s->graph.index();
    for (const auto &[nid, t] : s->profile)
      rows.append(py::dict(py::arg("node") = idx.nodes[nid].node->name,
                           py::arg("kernel") = idx.nodes[nid].node->parsed.getStr("func_name"),
                           py::arg("ms") = t.ms, py::arg("gflops") = t.gflops,
                           py::arg("percent_peak") = t.percentPeak));
    return rows;
  }

  /// Every step's label, oldest first, and which one is current.
  py::tuple steps() const {
    std::vector<std::string> labels;
    for (const Step &s : engine_.history())
      labels.push_back(s.label);
    return py::make_tuple(labels, engine_.history().empty()
                                      ? py::object(py::none())
                                      : py::object(py::int_(engine_.cursor())));
  }

private:
  static py::object none(const std::string &name) {
    return name == "None" ? py::object(py::none()) : py::object(py::str(name));
  }

  Engine engine_;
};

} // namespace

PYBIND11_MODULE(_loupe, m) {
  m.doc() = "Loupe's workbench engine (use the loupe package, not this module)";
  errorType = PyErr_NewException("loupe.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(errorType);
  py::class_<Session>(m, "_Session")
      .def(py::init<>())
      .def("command", &Session::command, py::arg("input"))
      .def("run_values", &Session::runValues, py::arg("inputs"), py::arg("seed"), py::arg("check"))
      .def("groups", &Session::groups)
      .def("profile_rows", &Session::profileRows)
      .def("steps", &Session::steps);
}
