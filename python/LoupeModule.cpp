// LoupeModule: the `loupe._loupe` Python extension (pybind11) — a workbench session driving the
// same Engine as the REPL, with :run's values as NumPy arrays and :groups and :profile as rows,
// and the graph values, build and graph runtime under Python's nnvm API (loupe.nnvm). The Relay
// half (loupe.relay, tvm.transform) is RelayBindings.cpp.
#include "Bridge.h"
#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Op.h"
#include "core/Printer.h"
#include "core/Text.h"
#include "passes/Pass.h"
#include "repl/Engine.h"
#include "repl/Workbench.h"
#include "report/Report.h"
#include "view/GraphSvg.h"

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <sstream>

namespace py = pybind11;
using namespace loupe;
using python::arrayOf;
using python::guarded;
using python::raise;
using python::tensorOf;

namespace {

// The Python exception every failure raises (loupe.Error), made when the module loads.
PyObject *errorType = nullptr;

// The first line of what a failed input printed, without the REPL's "error: " in front.
std::string firstLine(std::string text) {
  if (size_t nl = text.find('\n'); nl != std::string::npos)
    text.resize(nl);
  if (text.starts_with("error: "))
    text = text.substr(7);
  return text;
}

// One Graph.apply call of a build in progress (BuildOptions::graphApply): Python's
// nnvm.graph.Graph.apply is called with its passes, and the original apply, asked for the same
// passes, runs them as the build would (its context, GraphFuseCompile's compilation). A stack,
// since a user's apply may start another build.
struct ApplyFrame {
  std::vector<std::string> passes;
  const std::function<Graph(const Graph &)> *run;
  bool used = false;
};
thread_local std::vector<ApplyFrame *> applyFrames;

// The compiled side of a built deploy graph (NNVM's `lib`): the `module` attribute moved out.
struct Module {
  GraphAttr attr;
};

// NNVM's graph runtime over a deploy graph and its module.
class Runtime {
public:
  Runtime(Graph g, const Module &lib) : numOutputs_(g.outputs().size()) {
    g.attrs["module"] = lib.attr;
    rt_ = guarded([&] { return std::make_unique<backend::GraphRuntime>(g); });
  }
  void setInput(const std::string &name, const py::array &a) {
    guarded([&] { rt_->setInput(name, tensorOf(name, a)); });
  }
  void run() {
    try {
      py::gil_scoped_release release; // taken back before the error is raised
      rt_->run();
    } catch (const Error &e) {
      raise(e.what());
    }
  }
  /// Output `index` of the last run (only that one crosses into NumPy).
  py::array output(int64_t index) const {
    if (index < 0 || static_cast<size_t>(index) >= numOutputs_)
      raise("get_output(" + std::to_string(index) + "): the graph has " +
            plural(numOutputs_, "output"));
    return arrayOf(guarded([&] { return rt_->outputs(); })[static_cast<size_t>(index)]);
  }
  size_t numOutputs() const { return numOutputs_; }

private:
  size_t numOutputs_;
  std::unique_ptr<backend::GraphRuntime> rt_;
};

/// One workbench: the engine and the calls the Python `loupe.Session` makes.
class Session {
public:
  Session() { report::addViewCommands(engine_); }

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
    RunValues r;
    try {
      py::gil_scoped_release release;
      r = Workbench(engine_).run(given, seed, check);
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

  /// :layerwise's values: a dict per value both steps compute (node, op, output, sqnr_db,
  /// max_abs, max_rel, dequantized), in the second step's graph order.
  py::list layerwise(size_t a, size_t b, const py::dict &inputs, unsigned seed) {
    std::map<std::string, Tensor> given;
    for (const auto &[k, v] : inputs) {
      std::string name = py::str(k);
      given[name] = tensorOf(name, py::array::ensure(v));
    }
    if (a >= engine_.history().size() || b >= engine_.history().size())
      raise(cat("no step ", std::max(a, b), "; the session has ",
                plural(engine_.history().size(), "step")));
    LayerwiseView v;
    try {
      py::gil_scoped_release release;
      v = Workbench(engine_).layerwise(a, b, {}, seed, given);
    } catch (const Error &e) {
      raise(e.what());
    }
    py::list rows;
    for (const LayerComparison &c : v.comparisons)
      rows.append(py::dict(py::arg("node") = c.name, py::arg("op") = c.op,
                           py::arg("output") = c.output, py::arg("sqnr_db") = c.sqnr,
                           py::arg("max_abs") = c.maxAbs, py::arg("max_rel") = c.maxRel,
                           py::arg("dequantized") = c.dequantized));
    return rows;
  }

  /// :groups as a dict: nodes (node, root, master), groups (root, members, pattern, master,
  /// function), and for a built step the opt level and rules it was partitioned with.
  py::dict groups() {
    GroupsView v = guarded([&] { return Workbench(engine_).groups(); });
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
                           py::arg("ms") = t.ms, py::arg("min_ms") = t.minMs,
                           py::arg("max_ms") = t.maxMs, py::arg("gflops") = t.gflops,
                           py::arg("percent_peak") = t.percentPeak));
    return rows;
  }

  /// The current step's graph (an error before the first).
  Graph currentGraph() {
    return guarded([&] { return engine_.requireGraph(); });
  }

  /// The current step's picture, as the viewer draws it (a loaded model's initializers count
  /// as params).
  std::string currentSvg() {
    return guarded([&] { return gui::graphSvg(engine_.requireGraph(), engine_.modelParams()); });
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

  // Python's nnvm API (loupe.nnvm): graph values, not history steps.

  /// The graph of a symbol expression (nnvm.graph.create).
  Graph symbolGraph(const std::string &expr) {
    return guarded([&] { return Workbench(engine_).symbolGraph(expr); });
  }
  /// get_gradient_graph(ys, xs): expressions of the graph language.
  Graph gradientGraph(const std::string &ys, const std::string &xs) {
    return guarded([&] { return Workbench(engine_).gradientGraph(ys, xs); });
  }
  /// The original Graph.apply: inside a build, the build's own call for these passes; otherwise
  /// the passes under the session's context.
  Graph apply(const Graph &g, const std::vector<std::string> &passes) {
    if (!applyFrames.empty() && !applyFrames.back()->used && applyFrames.back()->passes == passes) {
      applyFrames.back()->used = true;
      return guarded([&] { return (*applyFrames.back()->run)(g); });
    }
    return guarded([&] { return Workbench(engine_).apply(g, passes); });
  }
  /// Graph._set_json_attr: `g` with the attribute, its value read as the REPL's :setattr does.
  Graph setAttr(Graph g, const std::string &key, const std::string &value,
                const std::string &type) {
    return guarded([&] {
      // A str is the text itself (the REPL's :setattr strips quotes typed around it).
      g.attrs[key] =
          type == "str" ? GraphAttr::string(value) : Workbench(engine_).parseGraphAttr(value, type);
      validateGraphAttr(g, key);
      return g;
    });
  }
  /// nnvm.compiler.build: the deploy graph (its module moved out), the module, and the params
  /// it reads. `applyFn(graph, passes)` is Graph.apply as the user's Python sees it;
  /// `loweredFn(name, loops)` hears each function's loops.
  py::tuple build(const Graph &g, const std::string &target, int optLevel,
                  const std::map<std::string, std::vector<int64_t>> &shapes,
                  const std::map<std::string, std::string> &dtypes, const std::string &defaultDType,
                  const py::dict &params, const py::function &applyFn,
                  const py::function &loweredFn) {
    backend::BuildOptions o;
    o.optLevel = optLevel;
    for (const auto &[name, s] : shapes)
      o.shapes[name] = s.empty() ? Shape::scalar() : Shape(s); // () is a scalar's
    auto code = [](const std::string &name, const std::string &what) {
      std::optional<int> dt = dtypeFromName(name);
      if (!dt)
        raise("build: unknown dtype '" + name + "' for " + what);
      return *dt;
    };
    for (const auto &[name, dt] : dtypes)
      o.dtypes[name] = code(dt, "input '" + name + "'");
    o.defaultDType = code(defaultDType, "the inputs");
    for (const auto &[k, v] : params) {
      std::string name = py::str(k);
      o.params[name] = tensorOf(name, py::array::ensure(v));
    }
    o.graphApply = [&](const Graph &in, const std::vector<std::string> &passes,
                       const std::function<Graph(const Graph &)> &run) {
      ApplyFrame frame{passes, &run};
      applyFrames.push_back(&frame);
      struct Pop {
        ~Pop() { applyFrames.pop_back(); }
      } pop;
      py::object out = applyFn(in, passes);
      if (!py::isinstance<Graph>(out))
        fail("build: Graph.apply(", joinNames(passes), ") returned ",
             std::string(py::str(py::type::of(out).attr("__name__"))), ", not a Graph");
      return out.cast<Graph>();
    };
    o.lowered = [&](const std::string &name, const std::string &loops) { loweredFn(name, loops); };
    Graph deploy = guarded([&] { return Workbench(engine_).build(g, std::move(o), target); });
    auto lib = backend::builtLibrary(deploy);
    py::dict out;
    for (const auto &[name, t] : lib->params)
      out[py::str(name)] = arrayOf(t.load());
    Module m{*deploy.attr("module")};
    deploy.attrs.erase("module"); // moved out, as NNVM's build did
    return py::make_tuple(deploy, m, out);
  }

private:
  static py::object none(const std::string &name) {
    return name == "None" ? py::object(py::none()) : py::object(py::str(name));
  }

  Engine engine_;
};

} // namespace

[[noreturn]] void python::raise(const std::string &message) {
  PyErr_SetString(errorType, message.c_str());
  throw py::error_already_set();
}

// An array's values as a Tensor of its dtype (a copy: the workbench holds values as doubles).
Tensor python::tensorOf(const std::string &name, const py::array &a) {
  std::string kind = py::str(a.dtype());
  std::optional<int> dt = dtypeFromName(kind);
  if (!dt)
    raise("run: input '" + name + "' has NumPy dtype " + kind + ", which the workbench has not");
  auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!values)
    raise("run: input '" + name + "' cannot be read as numbers");
  Tensor t(values.ndim() == 0 ? Shape::scalar()
                              : Shape(values.shape(), values.shape() + values.ndim()),
           *dt);
  std::copy(values.data(), values.data() + values.size(), t.data.begin());
  return t;
}

// A Tensor as a NumPy array of its dtype; bfloat16, which NumPy has not, as the float32 values
// it exactly is (as .npy files are written).
py::array python::arrayOf(const Tensor &t) {
  int dtype = widenedDType(t.dtype);
  py::array a(py::dtype(std::string(dtypeName(dtype))),
              std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
  auto *p = static_cast<char *>(a.mutable_data());
  int64_t bytes = dtypeBytes(dtype);
  for (size_t i = 0; i < t.data.size(); ++i)
    storeElement(p + static_cast<int64_t>(i) * bytes, dtype, t.data[i]);
  return a;
}

PYBIND11_MODULE(_loupe, m) {
  m.doc() = "Loupe's workbench engine (use the loupe package, not this module)";
  errorType = PyErr_NewException("loupe.Error", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(errorType);
  m.attr("built_for_python") = LOUPE_BUILT_FOR_PYTHON;
  py::class_<Graph>(m, "_Graph")
      .def(py::init<>())
      .def("ir", [](const Graph &g) { return printGraphIR(g); })
      .def(
          "attr",
          [](const Graph &g, const std::string &key) -> py::object {
            const GraphAttr *a = g.attr(key);
            return a ? py::object(py::str(a->pyRepr())) : py::object(py::none());
          },
          py::arg("key"))
      .def("svg", [](const Graph &g) { return guarded([&] { return gui::graphSvg(g); }); });
  py::class_<Module>(m, "_Module");
  m.def("op_names", [] {
    registerAllPasses(); // and every op (idempotent), as an engine does when made
    return OpRegistry::get().names();
  });
  m.def("dtype_code", [](const std::string &name) { return dtypeFromName(name); });
  py::class_<Runtime>(m, "_Runtime")
      .def(py::init<Graph, const Module &>())
      .def("set_input", &Runtime::setInput)
      .def("run", &Runtime::run)
      .def("output", &Runtime::output)
      .def("num_outputs", &Runtime::numOutputs);
  py::class_<Session>(m, "_Session")
      .def(py::init<>())
      .def("symbol_graph", &Session::symbolGraph)
      .def("gradient_graph", &Session::gradientGraph)
      .def("apply", &Session::apply)
      .def("set_attr", &Session::setAttr)
      .def("build", &Session::build)
      .def("command", &Session::command, py::arg("input"))
      .def("run_values", &Session::runValues, py::arg("inputs"), py::arg("seed"), py::arg("check"))
      .def("groups", &Session::groups)
      .def("layerwise", &Session::layerwise, py::arg("a"), py::arg("b"), py::arg("inputs"),
           py::arg("seed"))
      .def("profile_rows", &Session::profileRows)
      .def("steps", &Session::steps)
      .def("current_graph", &Session::currentGraph)
      .def("current_svg", &Session::currentSvg);
  python::bindRelay(m);
}
