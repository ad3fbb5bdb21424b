// GraphCommands: the commands of building, viewing and saving graphs — :graph, :grad, :ir, :nodes,
// :attr, :setattr, :open, :vars, :ops, :dot, :save.
#include "backend/Build.h"
#include "core/Dot.h"
#include "core/Error.h"
#include "core/Json.h"
#include "core/Printer.h"
#include "core/RelayText.h"
#include "passes/QuantSteps.h"
#include "repl/GraphLang.h"
#include "repl/TextFile.h"
#include "repl/Workbench.h"
#include "repl/commands/Commands.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// The graph topic's command handlers (making, inspecting and saving graphs): a member of Commands,
/// so they reach the engine as Commands does.
struct Commands::GraphTopic {
  static void graph(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void grad(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void ir(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void relay(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void nodes(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void attr(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void setAttr(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void open(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void ops(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void dot(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void save(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void vars(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void inputs(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void outputs(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

void Commands::GraphTopic::graph(Engine &e, const Args &a, const std::string &rest,
                                 std::ostream &out) {
  if (a.empty())
    fail("usage: :graph EXPR (a symbol name such as z, or Group([a, b]))");
  Graph g = Workbench(e).symbolGraph(rest, e.restColumn_);
  e.pushStep(g, "graph " + rest, 0, true);
  out << "step " << e.cursor_ << ": graph " << rest << " (" << graphSize(g.index()) << ")\n";
}

void Commands::GraphTopic::grad(Engine &e, const Args &, const std::string &rest,
                                std::ostream &out) {
  size_t wrt = rest.find(" wrt ");
  if (wrt == std::string::npos)
    fail("usage: :grad OUT wrt IN … (for example :grad z wrt x)");
  std::string ys = rest.substr(0, wrt), xs = rest.substr(wrt + 5);
  // IN is a space-separated list of names: evaluate it as a list.
  std::string list;
  for (const auto &w : splitArgs(xs))
    list += (list.empty() ? "" : ", ") + w;
  Graph g = Workbench(e).gradientGraph(ys, "[" + list + "]", e.restColumn_,
                                       e.restColumn_ + static_cast<int>(wrt) + 4);
  e.pushStep(g, "grad " + rest, 0, true);
  out << "step " << e.cursor_ << ": grad " << rest << " (" << graphSize(g.index()) << ")\n";
}

void Commands::GraphTopic::ir(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  const Graph &g = e.requireGraph();
  // `quantization` (unless the graph has an attribute of that name): each quantized node's steps
  // as a comment on its line.
  Args keys;
  bool quantization = false;
  for (const auto &k : a)
    if (k == "quantization" && !g.attr(k))
      quantization = true;
    else if (!g.attr(k))
      missingAttr(g, k);
    else
      keys.push_back(k);
  std::function<std::string(uint32_t)> comment;
  if (quantization)
    comment = [&](uint32_t nid) {
      std::string text;
      for (const std::string &l : quantizationLines(g, nid, e.modelParams()))
        text += (text.empty() ? "" : "; ") + l;
      return text;
    };
  std::string ir = printGraphIR(g, keys, comment);
  out << ir << (ir.back() == '\n' ? "" : "\n");
}

void Commands::GraphTopic::relay(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":relay");
  out << printRelay(e.requireGraph());
}

void Commands::GraphTopic::nodes(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 1, ":nodes [N]");
  const IndexedGraph &idx = e.requireGraph().index();
  if (a.empty()) {
    out << pyPformat(nodesToPy(idx)) << "\n";
    return;
  }
  int n = -1;
  try {
    n = std::stoi(a[0]);
  } catch (...) {
    n = idx.findByName(a[0]);
    if (n < 0)
      fail("no node named '", a[0], "'");
  }
  if (n < 0 || n >= static_cast<int>(idx.numNodes()))
    fail("node ", a[0], " is out of range (the graph has ", idx.numNodes(), " nodes)");
  out << pyRepr(nodeToPy(idx, n)) << "\n";
  // A quantized node: what its integer steps stand for.
  for (const std::string &l :
       quantizationLines(e.requireGraph(), static_cast<uint32_t>(n), e.modelParams()))
    out << "  " << l << "\n";
}

void Commands::GraphTopic::attr(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 2, ":attr KEY [N]");
  const Graph &g = e.requireGraph();
  const GraphAttr *v = g.attr(a[0]);
  if (!v)
    missingAttr(g, a[0]);
  if (a.size() == 1) {
    out << v->pyRepr() << "\n";
    return;
  }
  GraphAttr one = *v;
  size_t n = 0;
  try {
    n = std::stoul(a[1]);
  } catch (...) {
    fail("index must be a non-negative number, got '", a[1], "'");
  }
  switch (v->type) {
  case GraphAttr::Type::ListInt:
    if (n >= v->ints.size())
      fail("index ", n, " is out of range (", v->ints.size(), " values)");
    out << v->ints[n] << "\n";
    return;
  case GraphAttr::Type::ListShape:
    if (n >= v->shapes.size())
      fail("index ", n, " is out of range (", v->shapes.size(), " values)");
    out << shapeToList(v->shapes[n]) << "\n";
    return;
  case GraphAttr::Type::ListStr:
  case GraphAttr::Type::ListLayout:
    if (n >= v->strs.size())
      fail("index ", n, " is out of range (", v->strs.size(), " values)");
    out << pyStrRepr(v->strs[n]) << "\n";
    return;
  default:
    fail("attribute '", a[0], "' is not a list");
  }
}

void Commands::GraphTopic::setAttr(Engine &e, const Args &a, const std::string &rest,
                                   std::ostream &out) {
  if (a.size() < 2)
    fail("usage: :setattr KEY VALUE [TYPE] (for example :setattr target llvm str)");
  const Graph before = e.requireGraph(); // a copy: pushStep may move the history
  std::string key = a[0], type = "str";
  std::string value = rest.substr(rest.find(key) + key.size());
  size_t sp = value.find_last_not_of(" \t");
  value = sp == std::string::npos ? "" : value.substr(0, sp + 1);
  size_t lastSpace = value.find_last_of(" \t");
  if (lastSpace != std::string::npos && graphAttrTypes().count(value.substr(lastSpace + 1))) {
    type = value.substr(lastSpace + 1);
    value = value.substr(0, lastSpace);
  }
  size_t first = value.find_first_not_of(" \t");
  if (first == std::string::npos) // ":setattr targetllvm str": the value is missing
    fail("usage: :setattr KEY VALUE [TYPE]: no value for '", key, "'");
  value = value.substr(first);
  value = value.substr(0, value.find_last_not_of(" \t") + 1);
  GraphAttr attr = Workbench(e).parseGraphAttr(value, type);
  Graph g = before;
  g.attrs[key] = attr;
  validateGraphAttr(g, key);
  e.pushStep(g, "setattr " + key, 0, false);
  out << "step " << e.cursor_ << ": setattr " << key << " = " << attr.pyRepr() << " ("
      << attr.typeName() << ")\n";
}

void Commands::GraphTopic::open(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 2, ":open KEY [NAME]");
  const Graph &g = e.requireGraph();
  const GraphAttr *attr = g.attr(a[0]);
  if (!attr)
    missingAttr(g, a[0]);
  Graph opened;
  if (a[0] == "module") {
    if (a.size() != 2)
      fail("usage: :open module FUNCTION; functions: ", joinNames(functionOrder(g)));
    opened = findFunction(g, a[1]).body;
  } else if (attr->type == GraphAttr::Type::Opaque && a[0] == "precompute_graph") {
    needArgs(a, 1, 1, ":open precompute_graph");
    opened = *std::static_pointer_cast<const Graph>(attr->opaque);
  } else {
    fail("attribute '", a[0], "' does not hold a graph (open precompute_graph or module)");
  }
  std::string label = "open " + a[0] + (a.size() == 2 ? " " + a[1] : "");
  e.pushStep(opened, label, 0, true);
  out << "step " << e.cursor_ << ": " << label << " (" << graphSize(opened.index()) << ")\n";
}

void Commands::GraphTopic::vars(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":vars");
  for (const auto &[k, v] : e.evaluator_.variables())
    out << pad(k, 16) << pyRepr(v) << "\n";
  // A graph from a file or the zoo defines no symbols; say what it did define.
  if (e.evaluator_.variables().empty()) {
    const Step *s = e.current();
    if (!s) {
      out << "no symbols yet (define one: x = Variable(\"x\"))\n";
      return;
    }
    size_t data = 0, params = 0;
    for (const Port &p : graphInputs(e, s->graph))
      (p.param ? params : data) += 1;
    out << "no symbols: step " << e.cursor_ << " (" << s->label << ") has "
        << plural(data, "data input") << " and " << plural(params, "param")
        << "; :inputs lists them, :outputs its outputs\n";
  }
}

namespace {

// A bound param's shape and dtype (what the port listings need of it; not its values).
struct ParamType {
  Shape shape;
  int dtype = kFloat32;
};

// The graph with shapes and dtypes inferred where it has none, from the shapes of its bound
// params and the given input dtypes; the graph itself when inference fails (the caller prints "?").
Graph withTypes(const Graph &g, const std::map<std::string, ParamType> &params,
                const std::map<std::string, int> &dtypes) {
  if (g.attr("shape") && g.attr("dtype"))
    return g;
  std::map<std::string, Shape> shapes;
  for (const auto &[n, t] : params)
    shapes[n] = t.shape;
  try {
    Graph t = backend::withShapeInputs(g, shapes);
    std::vector<int64_t> dts;
    for (uint32_t nid : t.index().argNodes) {
      auto it = dtypes.find(t.index().nodes[nid].node->name);
      dts.push_back(it == dtypes.end() ? kFloat32 : it->second); // :build's default
    }
    t.attrs["dtype_inputs"] = GraphAttr::listInt(dts);
    return applyPasses(t, {"InferShape", "InferType"}, PassContext{});
  } catch (const Error &) {
    return g;
  }
}

// A port's shape and dtype from entry `eid` of a typed graph, where known.
void describeEntry(const Graph &t, uint32_t eid, Commands::Port &p) {
  if (const GraphAttr *sh = t.attr("shape");
      sh && eid < sh->shapes.size() && shapeDescribed(sh->shapes[eid]))
    p.shape = shapeToTuple(sh->shapes[eid]);
  if (const GraphAttr *dt = t.attr("dtype"); dt && eid < dt->ints.size() && dt->ints[eid] >= 0)
    p.dtype = dtypeName(static_cast<int>(dt->ints[eid]));
  if (const GraphAttr *l = t.attr("layout"); l && eid < l->strs.size() && !l->strs[eid].empty())
    p.layout = l->strs[eid];
}

// The types of the params bound to graph `g`'s variables: the build's, else the last :model's
// or :load's.
std::map<std::string, ParamType> boundParams(const Graph &g, const StoredTensors &model) {
  std::map<std::string, ParamType> bound;
  if (auto lib = backend::builtLibrary(g)) {
    for (const auto &[name, t] : lib->params)
      bound[name] = {t.shape(), t.dtype()};
    return bound;
  }
  const IndexedGraph &idx = g.index();
  for (uint32_t nid : idx.argNodes)
    if (auto it = model.find(idx.nodes[nid].node->name); it != model.end())
      bound[it->first] = {it->second.shape(), it->second.dtype()};
  return bound;
}

} // namespace

std::vector<Commands::Port> Commands::graphInputs(const Engine &e, const Graph &g) {
  std::map<std::string, ParamType> params = boundParams(g, e.modelParams_);
  Graph t = withTypes(g, params, e.modelDTypes_);
  const IndexedGraph &idx = t.index();
  std::vector<Port> ports;
  for (uint32_t nid : idx.argNodes) {
    Port p;
    const Node &v = *idx.nodes[nid].node;
    p.name = v.name;
    describeEntry(t, idx.entryId(nid, 0), p);
    if (auto it = params.find(v.name); it != params.end()) {
      p.param = true;
      p.shape = shapeToTuple(it->second.shape);
      p.dtype = dtypeName(it->second.dtype);
    }
    for (const auto &[key, val] : v.attrs)
      if (key == "__layout__" && p.layout == "-")
        p.layout = val;
    ports.push_back(p);
  }
  return ports;
}

std::vector<Commands::Port> Commands::graphOutputs(const Engine &e, const Graph &g) {
  Graph t = withTypes(g, boundParams(g, e.modelParams_), e.modelDTypes_);
  const IndexedGraph &idx = t.index();
  auto lib = backend::builtLibrary(g);
  std::vector<Port> ports;
  for (const auto &h : idx.heads) {
    Port p;
    const Node &n = *idx.nodes[h.nodeId].node;
    p.name = n.name + (n.numOutputs() > 1 ? "." + std::to_string(h.index) : "");
    // A built graph's outputs keep the names they had before the build.
    if (lib && lib->outputNames.size() == idx.heads.size())
      p.name = lib->outputNames[ports.size()];
    describeEntry(t, idx.entryId(h), p);
    ports.push_back(p);
  }
  return ports;
}

std::string Commands::dataInputsText(const Engine &e, const Graph &g) {
  std::vector<std::string> data;
  for (const Port &p : graphInputs(e, g))
    if (!p.param)
      data.push_back(p.name + (p.shape == "?" ? "" : " " + p.shape));
  return data.empty() ? "; the graph has no data inputs"
                      : "; its data inputs: " + joinNames(data) + " (:inputs lists all)";
}

namespace {

void printPorts(const std::vector<Commands::Port> &ports, std::ostream &out) {
  size_t w = 6, sw = 20; // a symbolic shape, `(batch, sequence, 32)`, may be longer
  for (const auto &p : ports) {
    w = std::max(w, p.name.size() + 2);
    sw = std::max(sw, p.shape.size() + 2);
  }
  out << pad("name", w) << pad("shape", sw) << pad("dtype", 10) << "layout\n";
  for (const auto &p : ports)
    out << pad(p.name, w) << pad(p.shape, sw) << pad(p.dtype, 10) << p.layout << "\n";
}

} // namespace

void Commands::GraphTopic::inputs(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 0, 0, ":inputs");
  std::vector<Port> all = graphInputs(e, e.requireGraph()), data, params;
  for (const Port &p : all)
    (p.param ? params : data).push_back(p);
  out << plural(data.size(), "data input") << ":\n";
  if (!data.empty())
    printPorts(data, out);
  out << plural(params.size(), "param") << " (bound; :run and :profile use their values):\n";
  if (!params.empty())
    printPorts(params, out);
}

void Commands::GraphTopic::outputs(Engine &e, const Args &a, const std::string &,
                                   std::ostream &out) {
  needArgs(a, 0, 0, ":outputs");
  std::vector<Port> ports = graphOutputs(e, e.requireGraph());
  out << plural(ports.size(), "output") << ":\n";
  printPorts(ports, out);
}

void Commands::GraphTopic::ops(Engine &, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 1, ":ops [NAME|TEXT]");
  if (a.size() == 1)
    if (const OpDef *op = OpRegistry::get().find(a[0])) {
      printOpDetails(*op, out);
      return;
    }
  size_t shown = 0;
  for (const OpDef *op : OpRegistry::get().all()) {
    if (a.size() == 1 && op->name.find(a[0]) == std::string::npos)
      continue;
    ++shown;
    out << pad(op->name, 20) << pad(patternName(op->pattern), 16) << op->doc
        << (op->aliases.empty() ? "" : " (alias " + joinNames(op->aliases) + ")") << "\n";
  }
  if (shown == 0)
    fail("no op matches '", a[0], "'", didYouMean(a[0], OpRegistry::get().names()));
}

void Commands::GraphTopic::dot(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 2, ":dot FILE [placed]");
  bool placed = a.size() == 2;
  if (placed && a[1] != "placed")
    fail(":dot: unknown option '", a[1], "' (FILE, then 'placed' for the viewer's positions)");
  if (placed && !e.dotPlacer())
    fail(":dot placed: this front end has no viewer layout to take positions from");
  e.checkWrite(":dot", a[0]);
  const Graph &g = e.requireGraph();
  DotPlacement where;
  if (placed)
    where = e.dotPlacer()(g);
  std::string text = graphToDot(g, placed ? &where : nullptr);
  writeTextFile(a[0], text);
  out << "wrote step " << e.cursor_ << " to " << a[0] << " (" << graphSize(g.index())
      << (placed ? ", placed as the viewer draws it); render it with: neato -n2 -Tsvg "
                 : "); render it with: dot -Tsvg ")
      << a[0] << " -o graph.svg\n";
}

void Commands::GraphTopic::save(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 1, ":save FILE");
  e.checkWrite(":save", a[0]);
  std::vector<std::string> dropped;
  Graph g = withoutOpaqueAttrs(e.requireGraph(), dropped);
  std::string text = saveJSON(g);
  writeTextFile(a[0], text);
  out << "saved step " << e.cursor_ << " to " << a[0] << " (" << text.size() << " bytes)\n";
  if (!dropped.empty())
    out << "note: not saved: " << joinNames(dropped) << " (compiled objects have no JSON form)\n";
}

std::vector<Commands::Listed> Commands::graphCommands() {
  using T = GraphTopic;
  return {
      {"help", {"graph", "EXPR", "makes a symbol the current graph (nnvm.graph.create)", T::graph}},
      {"graph",
       {"grad", "OUT wrt IN …", "the gradient graph of OUT with respect to the inputs IN",
        T::grad}},
      {"grad",
       {"ir", "[KEY …] [quantization]",
        "prints the graph as PrintGraphIR does, optionally with attributes joined; quantization: "
        "each quantized node's scale and zero point (a requantize's multiplier and shift) as a "
        "comment",
        T::ir}},
      {"ir",
       {"relay", "",
        "prints the graph as a Relay module (seed 003's print(mod)); FuseOps groups as fn literals",
        T::relay}},
      {"relay",
       {"nodes", "[N]",
        "the node table (graph.index.nodes), or node N (a quantized one with its scale and zero "
        "point)",
        T::nodes}},
      {"nodes",
       {"attr", "KEY [N]", "a graph attribute as graph.json_attr(KEY) prints it, or its entry N",
        T::attr}},
      {"attr",
       {"setattr", "KEY VALUE [TYPE]",
        "sets a graph attribute as graph._set_json_attr does (TYPE: str, int, size_t, list_int, "
        "list_str, list_shape, list_layout, dict_str_int; default str)",
        T::setAttr}},
      {"setattr",
       {"open", "KEY [NAME]",
        "opens a graph held in an attribute as a new step: precompute_graph, or function NAME of "
        "module",
        T::open}},
      {"passes",
       {"ops", "[NAME|TEXT]", "lists the ops (with a filter), or describes one op", T::ops}},
      {"load",
       {"dot", "FILE [placed]",
        "writes the current graph as Graphviz DOT (fusion groups as clusters); placed: with the "
        "viewer's positions, for neato -n2",
        T::dot}},
      {"dot", {"save", "FILE", "saves the current graph as NNVM graph JSON", T::save}},
      {"quit",
       {"vars", "", "lists the symbols defined so far (or what a loaded graph defined)", T::vars}},
      {"vars",
       {"inputs", "",
        "the current graph's data inputs and bound params: name, shape, dtype, layout", T::inputs}},
      {"inputs",
       {"outputs", "", "the current graph's outputs: name, shape, dtype, layout", T::outputs}},
  };
}

} // namespace loupe
