// RelayBindings: the C++ half of loupe.relay and tvm.transform — Relay's passes as views of the
// workbench's (the names, levels and required lists of relay-spec §1), passes written in Python,
// Sequential, PassContext with Python instruments, and graphs to and from Relay's expressions.
#include "Bridge.h"

#include "core/DType.h"
#include "core/Op.h"
#include "core/RelayText.h"
#include "core/Text.h"
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <memory>

namespace py = pybind11;

namespace loupe::python {

namespace {

/// A pass as Relay's Python API holds one: its PassInfo (what runs), the options written after
/// its name (FuseOps(fuse_opt_level=0)), and for a Sequential the passes its entries point at.
struct RelayPass {
  PassInfo info;
  std::map<std::string, std::string> options;
  std::vector<std::shared_ptr<RelayPass>> children;
};

/// A PassContext (relay-spec §1.5) whose instruments are Python objects.
struct RelayContext {
  PassContext ctx;
};

// A graph as Relay's type checker leaves it: Relay's types are shapes and dtypes together, so a
// graph InferType has typed (dtype) also gets its shapes (the workbench's InferType is NNVM's,
// dtypes only).
Graph relayTyped(const Graph &g) {
  if (!g.attr("dtype") || g.attr("shape"))
    return g;
  return applyPasses(g, {"InferShape"}); // private, uninstrumented: part of Relay's InferType
}

// Relay's InferType: full types, the workbench's InferShape and InferType as one pass.
const PassInfo &relayInferType() {
  static const PassInfo p{.name = "InferType",
                          .summary = "Relay's type inference: shapes and dtypes",
                          .optLevel = 0,
                          .changesGraph = false,
                          .run = [](const Graph &g, const PassContext &) {
                            return applyPasses(g, {"InferShape", "InferType"});
                          }};
  return p;
}

// A pass a Relay `required` list names: InferType is Relay's, others the registry's.
const PassInfo &resolveRelay(const std::string &name) {
  return name == "InferType" ? relayInferType() : requirePass(name);
}

// Relay's view of a registered pass: Relay's InferType stands for InferShape + InferType in its
// required list, it reads a typed graph as typed, and FuseOps — a FunctionPass in Relay —
// re-types the module before returning, as FoldConstant and EliminateCommonSubexpr already do.
std::shared_ptr<RelayPass> relayPass(const std::string &name,
                                     const std::map<std::string, std::string> &options) {
  auto p = std::make_shared<RelayPass>();
  if (name == "InferType") {
    p->info = relayInferType();
  } else {
    const PassInfo &orig = requirePass(name);
    for (const auto &[k, v] : options)
      if (std::find(orig.options.begin(), orig.options.end(), k) == orig.options.end())
        fail(name, " has no option '", k, "'",
             orig.options.empty() ? "" : "; options: " + joinNames(orig.options));
    p->info = orig;
    p->info.required.clear();
    for (const std::string &r : orig.required)
      if (r != "InferShape")
        p->info.required.push_back(r);
    p->info.needs.clear(); // checked once the graph is typed
    bool tail = name == "FuseOps";
    p->info.run = [orig, tail](const Graph &g, const PassContext &ctx) {
      Graph typed = relayTyped(g);
      for (const std::string &need : orig.needs)
        if (!typed.attr(need) && (need == "shape" || need == "dtype"))
          fail(orig.name, ": the module is not typed; run relay.transform.InferType() first");
      checkNeeds(typed, orig);
      Graph out = orig.run(typed, ctx);
      return tail ? runPass(out, relayInferType(), ctx) : out;
    };
  }
  p->options = options;
  return p;
}

// A pass written in Python: `fn(graph)` returns the new graph. A function pass (Relay's
// FunctionPass) re-types the module before returning, inside its own run, so instruments see
// that InferType nested in it (relay-spec §1.3).
std::shared_ptr<RelayPass> pythonPass(const std::string &name, int optLevel,
                                      const std::vector<std::string> &required,
                                      const py::function &fn, bool functionPass) {
  auto p = std::make_shared<RelayPass>();
  p->info = {.name = name,
             .summary = "a pass written in Python",
             .optLevel = optLevel,
             .changesGraph = true,
             .run =
                 [fn, functionPass](const Graph &g, const PassContext &ctx) {
                   py::object out = fn(g);
                   if (!py::isinstance<Graph>(out))
                     fail("a Python pass returned ",
                          std::string(py::str(py::type::of(out).attr("__name__"))),
                          ", not a graph");
                   Graph result = out.cast<Graph>();
                   return functionPass ? runPass(result, relayInferType(), ctx) : result;
                 },
             .required = required};
  return p;
}

std::shared_ptr<RelayPass> sequential(const std::vector<std::shared_ptr<RelayPass>> &passes,
                                      const std::string &name, int optLevel,
                                      const std::vector<std::string> &required) {
  auto p = std::make_shared<RelayPass>();
  p->children = passes;
  std::vector<PipelineEntry> entries;
  for (const auto &c : p->children)
    entries.push_back({&c->info, c->options});
  p->info = sequentialPass(std::move(entries), name, optLevel, required, resolveRelay);
  return p;
}

// Pass::operator()(mod, ctx): the pass with its options, under the context; never checks the
// level or disabled_pass (relay-spec §1.2).
Graph runRelayPass(const RelayPass &p, const Graph &g, const RelayContext &c) {
  PassContext ctx = c.ctx;
  for (const auto &[k, v] : p.options)
    ctx.config[k] = v;
  return relayTyped(runPass(g, p.info, ctx));
}

/// An instrument written in Python: `hook` has should_run, run_before_pass and run_after_pass
/// taking (graph, name, opt_level, required); loupe.tvm.transform adapts the user's instrument.
class PythonInstrument : public PassInstrument {
public:
  PythonInstrument(py::object hook, std::string name)
      : hook_(std::move(hook)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  bool shouldRun(const Graph &g, const PassInfo &p) override {
    return hook_.attr("should_run")(g, p.name, p.optLevel, p.required).cast<bool>();
  }
  void beforePass(const Graph &g, const PassInfo &p) override {
    hook_.attr("run_before_pass")(g, p.name, p.optLevel, p.required);
  }
  void afterPass(const Graph &, const Graph &after, const PassInfo &p) override {
    hook_.attr("run_after_pass")(after, p.name, p.optLevel, p.required);
  }

private:
  py::object hook_;
  std::string name_;
};

RelayContext makeContext(int optLevel, const std::vector<std::string> &required,
                         const std::vector<std::string> &disabled, const py::list &hooks,
                         const std::map<std::string, std::string> &config) {
  RelayContext c;
  c.ctx.optLevel = optLevel;
  c.ctx.requiredPass = {required.begin(), required.end()};
  c.ctx.disabledPass = {disabled.begin(), disabled.end()};
  for (const auto &h : hooks)
    c.ctx.instruments.push_back(std::make_shared<PythonInstrument>(
        py::reinterpret_borrow<py::object>(h), py::str(h.attr("name"))));
  c.ctx.config = config;
  return c;
}

// A graph's nodes as Relay's expressions are made of, in the graph's order (inputs first):
// ("var", name, shape or None, dtype), ("const", name, values), or ("call", name, NNVM op,
// Relay op, [(node, output)], [(key, value)] as written, scalar or None, scalar first).
py::list relayNodes(const Graph &g) {
  const IndexedGraph &idx = g.index();
  py::list out;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable()) {
      DeclaredType t = declaredType(n);
      py::object shape = t.shape ? py::cast(std::vector<int64_t>(*t.shape)) : py::none();
      out.append(py::make_tuple("var", n.name, shape, t.dtype));
      continue;
    }
    if (n.op->name == "const") {
      out.append(py::make_tuple("const", n.name, arrayOf(evaluateNode(idx.nodes[nid].node))));
      continue;
    }
    py::list inputs;
    for (const auto &e : idx.nodes[nid].inputs)
      inputs.append(py::make_tuple(e.nodeId, e.index));
    std::string relayOp = n.op->name;
    py::object scalar = py::none();
    bool first = false;
    if (auto s = relayScalarOps().find(n.op->name); s != relayScalarOps().end()) {
      relayOp = s->second.first;
      scalar = py::float_(std::stod(n.parsed.raw("scalar")));
      first = s->second.second;
    } else if (auto r = relayOpNames().find(n.op->name); r != relayOpNames().end()) {
      relayOp = r->second;
    } else if (n.op->name == "conv2d" || n.op->name == "dense") {
      relayOp = "nn." + n.op->name;
    }
    out.append(py::make_tuple("call", n.name, n.op->name, relayOp, inputs,
                              static_cast<const AttrDict::Base &>(n.attrs), scalar, first));
  }
  return out;
}

// A graph from such a table: ("var", name, shape or None, dtype), ("const", name, array) or
// ("call", name, NNVM op, [(node, output)], [(key, value)]); `outputs` are (node, output).
Graph relayGraph(const py::list &nodes, const std::vector<std::pair<size_t, uint32_t>> &outputs) {
  std::vector<NodePtr> made;
  for (const auto &item : nodes) {
    auto t = item.cast<py::tuple>();
    std::string kind = t[0].cast<std::string>(), name = t[1].cast<std::string>();
    if (kind == "var") {
      AttrDict attrs;
      if (!t[2].is_none())
        attrs.emplace_back("shape", shapeToTuple(t[2].cast<std::vector<int64_t>>()));
      std::string dtype = t[3].cast<std::string>();
      std::optional<int> code = dtypeFromName(dtype);
      if (!code)
        fail("relay.var ", name, ": unknown dtype '", dtype, "'");
      attrs.emplace_back("dtype", std::to_string(*code));
      made.push_back(makeVariable(name, attrs));
    } else if (kind == "const") {
      made.push_back(constantNode(tensorOf(name, t[2].cast<py::array>()), name));
    } else {
      const OpDef *op = OpRegistry::get().find(t[2].cast<std::string>());
      if (!op)
        fail("relay: no op ", t[2].cast<std::string>());
      std::vector<NodeEntry> inputs;
      for (const auto &[node, index] : t[3].cast<std::vector<std::pair<size_t, uint32_t>>>())
        inputs.push_back({made.at(node), index, 0});
      made.push_back(
          makeOpNode(*op, name, AttrDict(t[4].cast<AttrDict::Base>()), std::move(inputs)));
    }
  }
  std::vector<NodeEntry> heads;
  for (const auto &[node, index] : outputs)
    heads.push_back({made.at(node), index, 0});
  return Graph(std::move(heads));
}

} // namespace

void bindRelay(py::module_ &m) {
  py::class_<RelayPass, std::shared_ptr<RelayPass>>(m, "_RelayPass")
      .def_property_readonly("name", [](const RelayPass &p) { return p.info.name; })
      .def_property_readonly("opt_level", [](const RelayPass &p) { return p.info.optLevel; })
      .def_property_readonly("required", [](const RelayPass &p) { return p.info.required; });
  py::class_<RelayContext>(m, "_RelayContext");
  m.def("relay_pass", [](const std::string &name, const std::map<std::string, std::string> &o) {
    registerAllPasses();
    return guarded([&] { return relayPass(name, o); });
  });
  m.def("python_pass", &pythonPass);
  m.def("sequential", &sequential);
  m.def("pass_context", &makeContext);
  m.def("run_pass", [](const RelayPass &p, const Graph &g, const RelayContext &c) {
    return guarded([&] { return runRelayPass(p, g, c); });
  });
  m.def("relay_text",
        [](const Graph &g) { return guarded([&] { return printRelay(relayTyped(g)); }); });
  m.def("relay_nodes", [](const Graph &g) { return guarded([&] { return relayNodes(g); }); });
  m.def("relay_graph",
        [](const py::list &nodes, const std::vector<std::pair<size_t, uint32_t>> &outputs) {
          return guarded([&] { return relayGraph(nodes, outputs); });
        });
  m.def("relay_tables", [] { return py::make_tuple(relayOpNames(), relayScalarOps()); });
  m.def("graph_heads", [](const Graph &g) {
    std::vector<std::pair<uint32_t, uint32_t>> heads;
    for (const auto &h : g.index().heads)
      heads.emplace_back(h.nodeId, h.index);
    return heads;
  });
  m.def("pass_names", [] {
    registerAllPasses();
    return PassRegistry::get().names();
  });
}

} // namespace loupe::python
