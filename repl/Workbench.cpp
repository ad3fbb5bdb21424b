// Workbench: the typed session API's calls — each the value its command prints, computed here
// once for the REPL, Python, the viewer and the report.
#include "repl/Workbench.h"

#include "backend/Build.h"
#include "backend/DynamicBuild.h"
#include "backend/GraphExecutor.h"
#include "core/Error.h"
#include "core/Npy.h"
#include "passes/Fusion.h"
#include "passes/Provenance.h"
#include "repl/GraphLang.h"
#include "repl/commands/Commands.h"
#include "repl/commands/RunInputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

const std::set<std::string> &graphAttrTypes() {
  static const std::set<std::string> types = {
      "str", "int", "size_t", "list_int", "list_str", "list_shape", "list_layout", "dict_str_int"};
  return types;
}

Graph Workbench::symbolGraph(const std::string &expr, int column) {
  Value v = e_.evaluator_.evalArgument(expr, column, ":graph EXPR (one expression)");
  if (v.kind != Value::Kind::Symbol)
    fail(":graph needs a symbol, got ", kindName(v));
  return Graph(v.sym.outputs);
}

Graph Workbench::gradientGraph(const std::string &ys, const std::string &xs, int ysColumn,
                               int xsColumn) {
  const char *usage = ":grad OUT wrt IN …";
  Value yv = e_.evaluator_.evalArgument(ys, ysColumn, usage);
  Value xv = e_.evaluator_.evalArgument(xs, xsColumn, usage);
  Expr at{}; // no position: these errors are about the graph, not the command text
  return e_.evaluator_.gradientOf(yv, xv, at);
}

GraphAttr Workbench::parseGraphAttr(const std::string &value, const std::string &type) {
  if (!graphAttrTypes().count(type))
    fail("unknown attribute type '", type, "'; one of ",
         joinNames({graphAttrTypes().begin(), graphAttrTypes().end()}));
  auto parse = [&]() -> Value {
    try {
      return e_.evaluator_.evalArgument(value, 1, "not one value");
    } catch (const Error &err) {
      fail(":setattr: cannot read '", value, "' as ", type, ": ", err.what());
    }
  };
  auto ints = [&](const Value &v, const char *what) {
    std::vector<int64_t> out;
    if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
      fail(":setattr: ", type, " needs a list of ", what);
    for (const auto &i : v.items) {
      if (i.kind != Value::Kind::Int)
        fail(":setattr: ", type, " needs a list of ", what, ", got ", kindName(i));
      out.push_back(i.i);
    }
    return out;
  };
  GraphAttr attr;
  if (type == "str") {
    std::string s = value;
    if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
      s = s.substr(1, s.size() - 2);
    attr = GraphAttr::string(s);
  } else if (type == "int" || type == "size_t") {
    Value v = parse();
    if (v.kind != Value::Kind::Int)
      fail(":setattr: ", type, " needs an integer, got ", kindName(v));
    attr = type == "int" ? GraphAttr::integer(v.i) : GraphAttr::sizeT(v.i);
  } else if (type == "list_int") {
    attr = GraphAttr::listInt(ints(parse(), "integers"));
  } else if (type == "list_shape") {
    Value v = parse();
    if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
      fail(":setattr: list_shape needs a list of shapes");
    std::vector<Shape> shapes;
    for (const auto &i : v.items)
      shapes.push_back(ints(i, "integers"));
    attr = GraphAttr::listShape(shapes);
  } else if (type == "list_str" || type == "list_layout") {
    Value v = parse();
    std::vector<std::string> strs;
    if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
      fail(":setattr: ", type, " needs a list of strings");
    for (const auto &i : v.items) {
      if (i.kind != Value::Kind::Str)
        fail(":setattr: ", type, " needs a list of strings, got ", kindName(i));
      strs.push_back(i.s);
    }
    attr = type == "list_str" ? GraphAttr::listStr(strs) : GraphAttr::listLayout(strs);
  } else { // dict_str_int, written as pairs: [("gpu", 1), ("cpu", 0)]
    Value v = parse();
    attr.type = GraphAttr::Type::DictStrInt;
    if (v.kind != Value::Kind::List && v.kind != Value::Kind::Tuple)
      fail(":setattr: dict_str_int needs a list of (name, number) pairs");
    for (const auto &p : v.items) {
      if (p.items.size() != 2 || p.items[0].kind != Value::Kind::Str ||
          p.items[1].kind != Value::Kind::Int)
        fail(":setattr: dict_str_int needs a list of (name, number) pairs");
      attr.dict[p.items[0].s] = p.items[1].i;
    }
  }
  return attr;
}

Graph Workbench::apply(const Graph &g, const std::vector<std::string> &passes,
                       std::vector<std::string> *remarks) {
  PassContext ctx = e_.passContext_;
  ctx.remarks = remarks;
  return applyPasses(g, passes, ctx);
}

GroupsView Workbench::groups() {
  // On a built step: the partition its build made, which its deploy graph's functions are.
  const FusedModule *built = builtPartition(e_.requireGraph());
  const Graph &g = built ? *built->partition : e_.requireGraph();
  GroupsView v;
  if (built) {
    v.built = true;
    v.optLevel = built->partitionOptLevel;
    v.rules = built->fusionRules;
  }
  for (const char *k : {"group_root", "group_master", "pattern"})
    validateGraphAttr(g, k);
  std::vector<FusedGroup> groups = fusedGroups(g);
  const IndexedGraph &idx = g.index();
  const GraphAttr &roots = *g.attr("group_root"), &masters = *g.attr("group_master");
  v.roots = roots.pyRepr();
  v.masters = masters.pyRepr();
  auto nameOf = [&](int64_t id) {
    return id >= 0 ? idx.nodes[id].node->name : std::string("None");
  };
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    v.nodes.push_back(
        {idx.nodes[nid].node->name, nameOf(roots.ints[nid]), nameOf(masters.ints[nid])});
  // Names as GraphFuseCompile would give them now, without using them up.
  FunctionNames names = e_.functionNames_;
  std::string target =
      g.attr("target") ? g.attr("target")->str : e_.passContext_.get("target", "llvm");
  for (const FusedGroup &grp : groups) {
    GroupsView::Group row;
    for (uint32_t m : grp.members)
      row.members.push_back(idx.nodes[m].node->name);
    // A built step's group is the deploy node named like its root: say the function it calls.
    if (int call = built ? kernelOfRoot(e_.requireGraph(), idx.nodes[grp.root].node->name) : -1;
        call >= 0)
      row.function = e_.requireGraph().index().nodes[call].node->parsed.getStr("func_name");
    if (row.function.empty())
      row.function = names.assign(kernelKey(g, grp, target), readableName(idx, grp));
    row.root = idx.nodes[grp.root].node->name;
    row.pattern = patternName(grp.pattern);
    row.master = nameOf(grp.master);
    v.groups.push_back(std::move(row));
  }
  return v;
}

Graph Workbench::build(const Graph &g, backend::BuildOptions o, const std::string &target) {
  if (backend::builtLibrary(g))
    fail("build: the graph is already a built deploy graph");
  checkTarget(target);
  PassContext ctx = e_.passContext_;
  ctx.config["target"] = target;
  o.cache = e_.kernelCache_;
  o.tuning = e_.tuningLocation();
  return backend::build(g, std::move(o), ctx);
}

RunValues Workbench::run(const std::map<std::string, Tensor> &given, unsigned seed, bool check) {
  // A dynamic build runs the variant of the given tensors' sizes (made the current step).
  if (backend::dynamicBuild(e_.requireGraph())) {
    std::map<std::string, Shape> shapes;
    for (const auto &[name, t] : given)
      shapes[name] = t.shape;
    Commands::useVariant(e_, shapes, {});
  }
  const Graph &g = e_.requireGraph();
  Commands::requireBuilt(g);
  RunWords w;
  w.seed = seed;
  std::map<std::string, Tensor> in = runInputs(e_, g, w);
  const StoredTensors &params = backend::builtLibrary(g)->params;
  for (const auto &[name, t] : given) {
    auto it = in.find(name);
    auto p = params.find(name);
    if (it == in.end() && p == params.end())
      fail("run: the graph has no input '", name, "'", Commands::dataInputsText(e_, g));
    const Shape &want = it != in.end() ? it->second.shape : p->second.shape();
    if (t.shape != want)
      fail("run: input '", name, "' has shape ", shapeToTuple(t.shape), " but the graph takes ",
           shapeToTuple(want));
    in[name] = converted(t, it != in.end() ? it->second.dtype : p->second.dtype());
  }
  RunValues r;
  for (const Commands::Port &p : Commands::graphOutputs(e_, g))
    r.names.push_back(p.name);
  r.outputs = backend::runDeployGraph(g, in).outputs;
  if (check) {
    r.reference = referenceRun(g, in);
    // The interpreter runs the deploy graph's functions, whose outputs may be flattened.
    for (size_t k = 0; k < r.reference.size(); ++k)
      r.reference[k].shape = r.outputs[k].shape;
  }
  return r;
}

namespace {

// The values a reference run reads: each variable's from `inputs`, else the bound param's
// (both held by reference: they must outlive the source).
ValueSource inputsThenParams(const std::map<std::string, Tensor> &inputs,
                             const StoredTensors &params) {
  return [&inputs, &params](const std::string &name) -> std::optional<Tensor> {
    if (auto it = inputs.find(name); it != inputs.end())
      return it->second;
    if (auto p = params.find(name); p != params.end())
      return p->second.load();
    return std::nullopt;
  };
}

// A value for every variable of `graphs` that is not a bound param, made once (so that graphs
// read the same values): as `how` says (NAME → random, zeros, ones, a number or a .npy file),
// random by default, from the variable's `shape` and `dtype` attributes.
std::map<std::string, Tensor>
madeInputs(const std::vector<const Graph *> &graphs, const StoredTensors &params,
           const std::map<std::string, std::string> &how, std::mt19937 &rng, const char *command,
           std::vector<std::string> *notes, const std::map<std::string, Tensor> &given = {}) {
  std::map<std::string, Tensor> inputs;
  std::set<std::string> seen;
  for (const Graph *g : graphs) {
    const IndexedGraph &idx = g->index();
    for (uint32_t nid : idx.argNodes) {
      const Node &n = *idx.nodes[nid].node;
      if (params.count(n.name) || !seen.insert(n.name).second)
        continue;
      const std::string *shape = findAttr(n.attrs, "shape");
      if (!shape)
        fail(command, ": input '", n.name, "' has no shape; give it as ", n.name, "=FILE.npy");
      int dtype = declaredDType(n).value_or(kFloat32);
      if (auto g = given.find(n.name); g != given.end()) {
        if (g->second.shape != parseShape(*shape))
          fail(command, ": input '", n.name, "' has shape ", shapeToTuple(g->second.shape),
               " but the graph takes ", shapeToTuple(parseShape(*shape)));
        inputs[n.name] = converted(g->second, dtype);
        continue;
      }
      auto it = how.find(n.name);
      inputs[n.name] = fillTensor(it == how.end() ? "random" : it->second, parseShape(*shape),
                                  dtype, rng, "input '" + n.name + "'", nullptr, notes, n.name);
    }
  }
  for (const auto &[name, t] : given)
    if (!seen.count(name))
      fail(command, ": ", graphs.size() > 1 ? "neither step has an" : "the graph has no",
           " input '", name, "'");
  for (const auto &[name, h] : how)
    if (!seen.count(name))
      fail(command, ": ", graphs.size() > 1 ? "neither step has an" : "the graph has no",
           " input '", name, "'");
  return inputs;
}

} // namespace

LayerwiseView Workbench::layerwise(size_t a, size_t b,
                                   const std::map<std::string, std::string> &how, unsigned seed,
                                   const std::map<std::string, Tensor> &given) {
  LayerwiseView v;
  v.stepA = a;
  v.stepB = b;
  const Graph &ga = e_.history().at(a).graph, &gb = e_.history().at(b).graph;
  for (size_t s : {a, b})
    if (backend::builtLibrary(e_.history()[s].graph))
      fail("layerwise: step ", s,
           " is built; compare the graphs a build starts from (the steps before :build)");
  const StoredTensors &params = e_.modelParams();
  std::mt19937 rng(seed);
  std::map<std::string, Tensor> inputs =
      madeInputs({&ga, &gb}, params, how, rng, "layerwise", &v.notes, given);
  v.comparisons = compareLayers(ga, gb, inputsThenParams(inputs, params));
  v.against = "step " + std::to_string(a);
  e_.history_[b].layerwise = v.comparisons;
  e_.history_[b].layerwiseAgainst = v.against;
  return v;
}

LayerwiseView Workbench::layerwiseAgainst(size_t b, const std::string &dir,
                                          const std::map<std::string, std::string> &how) {
  namespace fs = std::filesystem;
  LayerwiseView v;
  v.stepA = v.stepB = b;
  v.against = dir;
  const Graph &gb = e_.history().at(b).graph;
  if (backend::builtLibrary(gb))
    fail("layerwise: step ", b,
         " is built; compare the graph a build starts from (a step before :build)");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    fail("layerwise: ", dir, " is not a folder");
  auto fileOf = [&](const std::string &name) {
    return fs::path(dir) / (npyFileStem(name) + ".npy");
  };
  // The data inputs the other runtime ran, from the folder unless given.
  const StoredTensors &params = e_.modelParams();
  std::map<std::string, Tensor> given;
  std::set<std::string> inputFiles;
  for (uint32_t nid : gb.index().argNodes) {
    const std::string &name = gb.index().nodes[nid].node->name;
    if (params.count(name) || how.count(name))
      continue;
    fs::path f = fileOf(name);
    inputFiles.insert(f.filename().string());
    if (!fs::exists(f, ec))
      fail("layerwise: ", dir, " has no ", f.filename().string(), " for input '", name,
           "'; give it as ", name, "=FILE.npy");
    given[name] = readNpy(f.string());
  }
  std::mt19937 rng(0);
  std::map<std::string, Tensor> inputs =
      madeInputs({&gb}, params, how, rng, "layerwise", &v.notes, given);
  std::set<std::string> used;
  v.comparisons =
      compareWithReference(gb, inputsThenParams(inputs, params),
                           [&](const std::string &name, uint32_t k) -> std::optional<Tensor> {
                             fs::path f = fileOf(k ? name + ":" + std::to_string(k) : name);
                             if (!fs::exists(f, ec))
                               return std::nullopt;
                             used.insert(f.filename().string());
                             return readNpy(f.string());
                           });
  // Files that matched nothing: a renamed node or a hook on a module the graph does not have.
  std::vector<std::string> unmatched;
  for (const fs::directory_entry &f : fs::directory_iterator(dir, ec)) {
    std::string file = f.path().filename().string();
    if (f.path().extension() == ".npy" && !used.count(file) && !inputFiles.count(file))
      unmatched.push_back(file);
  }
  std::sort(unmatched.begin(), unmatched.end());
  if (!unmatched.empty()) {
    std::string list;
    for (size_t i = 0; i < unmatched.size() && i < 5; ++i)
      list += (i ? ", " : "") + unmatched[i];
    v.notes.push_back(
        std::to_string(unmatched.size()) +
        (unmatched.size() == 1 ? " file in " + dir + " names" : " files in " + dir + " name") +
        " no value of step " + std::to_string(b) + ": " + list +
        (unmatched.size() > 5 ? ", …" : ""));
  }
  e_.history_[b].layerwise = v.comparisons;
  e_.history_[b].layerwiseAgainst = v.against;
  return v;
}

Graph Workbench::quantize(const QuantizeOptions &options,
                          const std::map<std::string, std::string> &how,
                          const std::vector<std::map<std::string, std::string>> &perSample,
                          size_t samples, unsigned seed, QuantizeReport *report,
                          std::vector<std::string> *notes) {
  const Graph &g = e_.requireGraph();
  if (backend::builtLibrary(g))
    fail("quantize: the current step is built; quantize the graph a build starts from");
  const StoredTensors &params = e_.modelParams();
  std::mt19937 rng(seed);
  std::vector<std::map<std::string, Tensor>> calibration;
  for (size_t k = 0; k < samples; ++k) {
    std::map<std::string, std::string> made = k < perSample.size() ? perSample[k] : how;
    made.insert(how.begin(), how.end()); // the sample's own entries win
    calibration.push_back(madeInputs({&g}, params, made, rng, "quantize", k ? nullptr : notes));
  }
  const std::map<std::string, Tensor> weightsOnly; // calibration inputs come per sample
  return quantizeGraph(g, inputsThenParams(weightsOnly, params), calibration, options, report);
}

} // namespace loupe
