// Build: the nnvm.compiler.build pipeline over the pass runner, then lowering and compilation.
#include "backend/Build.h"
#include "backend/DynamicBuild.h"
#include "passes/Symbols.h"

#include "backend/Runtime.h"

#include "backend/PrecomputeCache.h"
#include "backend/llvm/HostTarget.h"
#include "backend/tune/ApplyBest.h"
#include "backend/tune/Records.h"
#include "backend/tune/Task.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Interpreter.h"
#include "core/Interrupt.h"
#include "core/Layout.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

namespace loupe::backend {

namespace {

// The hook through which each Graph.apply call of the original goes (BuildOptions::graphApply).
using GraphApplyFn = decltype(BuildOptions::graphApply);

// One Graph.apply call of the original: a single pass, or a list applied as one call (the
// trace prints it once, as ['InferShape', 'SimplifyInference']); `hook` sees it when set.
Graph apply(const Graph &g, const std::vector<std::string> &names, const PassContext &ctx,
            const GraphApplyFn &hook) {
  auto run = [&](const Graph &in) {
    if (names.size() == 1)
      return runPass(in, requirePass(names[0]), ctx);
    std::string label = "[";
    for (size_t i = 0; i < names.size(); ++i)
      label += (i ? ", '" : "'") + names[i] + "'";
    label += "]";
    PassInfo call{
        label,
        "one Graph.apply call",
        0,
        {},
        {},
        true,
        [names](const Graph &x, const PassContext &c) { return applyPasses(x, names, c); }};
    return runPass(in, call, ctx);
  };
  return hook ? hook(g, names, run) : run(g);
}

// graph.index on a new Graph object made NNVM run SaveJSON on a copy (seen in seed 000).
void index(const Graph &g, const PassContext &ctx, const GraphApplyFn &hook) {
  apply(g, {"SaveJSON"}, ctx, hook);
}

std::vector<std::string> inputNames(const Graph &g) {
  std::vector<std::string> v;
  const IndexedGraph &idx = g.index();
  for (uint32_t nid : idx.argNodes)
    v.push_back(idx.nodes[nid].node->name);
  return v;
}

// `g` with `dtype_inputs` for InferType: each input's dtype from `dtypes`, else `dflt`.
Graph withDTypeInputs(Graph g, const std::map<std::string, int> &dtypes, int dflt) {
  std::vector<int64_t> dts;
  for (const std::string &n : inputNames(g)) {
    auto it = dtypes.find(n);
    dts.push_back(it == dtypes.end() ? dflt : it->second);
  }
  g.attrs["dtype_inputs"] = GraphAttr::listInt(dts);
  return g;
}

Graph withLayoutInputs(Graph g, const std::map<std::string, std::string> &layouts) {
  std::vector<std::string> v;
  for (const std::string &n : inputNames(g)) {
    auto it = layouts.find(n);
    v.push_back(it == layouts.end() ? "__undef__" : it->second);
  }
  g.attrs["layout_inputs"] = GraphAttr::listLayout(v);
  return g;
}

// Every input's entry of a per-entry list attribute, by name.
template <typename T, typename F> std::map<std::string, T> perInput(const Graph &g, F get) {
  std::map<std::string, T> m;
  const IndexedGraph &idx = g.index();
  for (uint32_t nid : idx.argNodes)
    m[idx.nodes[nid].node->name] = get(idx.entryId(nid, 0));
  return m;
}

// The graph's outputs in the layouts they have below opt level 3: an output AlterOpLayout left
// blocked (NCHW16c) gets a `__layout_transform__` back to its primal layout (NCHW), so that
// opt level 3 gives the same shapes and numbers as the levels below it.
Graph plainOutputs(const Graph &g) {
  const GraphAttr *layout = g.attr("layout");
  if (!layout)
    return g;
  const IndexedGraph &idx = g.index();
  const OpDef &transform = *OpRegistry::get().find("__layout_transform__");
  std::vector<NodeEntry> heads = g.outputs();
  bool added = false;
  for (size_t k = 0; k < heads.size(); ++k) {
    const std::string &have = layout->strs[idx.entryId(idx.heads[k])];
    if (have == "__undef__" || primalLayout(have) == have)
      continue;
    std::string primal = primalLayout(have);
    NodePtr t = makeOpNode(transform, heads[k].node->name + "_" + primal,
                           {{"src_layout", have}, {"dst_layout", primal}}, {heads[k]});
    heads[k] = {t, 0, 0};
    added = true;
  }
  if (!added)
    return g;
  Graph out(heads, g.attrs);
  // Layouts of the new graph: the old entries keep theirs, the transforms give the primal one.
  std::map<const Node *, uint32_t> oldId;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    oldId[idx.nodes[nid].node.get()] = nid;
  const IndexedGraph &nidx = out.index();
  std::vector<std::string> layouts;
  for (uint32_t nid = 0; nid < nidx.numNodes(); ++nid) {
    const Node *n = nidx.nodes[nid].node.get();
    for (uint32_t o = 0; o < n->numOutputs(); ++o)
      layouts.push_back(oldId.count(n) ? layout->strs[idx.entryId(oldId.at(n), o)]
                                       : n->parsed.getStr("dst_layout"));
  }
  out.attrs["layout"] = GraphAttr::listLayout(layouts);
  return out;
}

// The point the tuning log says to build `f` at, when that is not the rule; otherwise nothing,
// and `why` says what the log held. A variant of a dynamic build whose task was never measured
// takes the point that won at the nearest size its function was tuned at (`family` names it).
// Each log is read once per build.
std::optional<TunedPoint> bestRecord(const LoweredFunction &f, const std::string &family,
                                     const BuildOptions &opts,
                                     std::map<std::string, TuningLog> &logs, std::string &why) {
  std::string target = targetDescription(f.schedule->cpu);
  std::filesystem::path file = opts.tuning;
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    file = TuningLog::fileFor(file, target);
  auto it = logs.find(file.string());
  if (it == logs.end())
    it = logs.emplace(file.string(), TuningLog::read(file, opts.warnings)).first;
  const Config rule = f.schedule->space.defaultConfig();
  PointChoice c = choosePoint(it->second, file.string(), taskKey(f), target, numThreads(), rule);
  if (c.unmeasured && !family.empty()) {
    PointChoice near =
        nearestPoint(it->second, file.string(), family, opts.sizes, target, numThreads());
    if (!near.unmeasured)
      c = near;
    if (c.point && *c.point == rule) {
      c.source = "the rule (" + c.source + "; that point is this size's rule)";
      c.point.reset();
    }
    if (c.point && !f.schedule->space.contains(*c.point)) {
      c.source = "the rule (" + c.source + "; that point is not one of this size's)";
      c.point.reset();
    }
  }
  if (!c.point) {
    why = c.source;
    return std::nullopt;
  }
  return TunedPoint{*c.point, c.source};
}

// Lowers and compiles every function of a GraphFuseCompile result; the module attribute then
// carries the machine code.
Graph compileFunctions(Graph g, std::ostream *trace, StoredTensors params, const BuildOptions &opts,
                       std::vector<std::string> outputNames, bool flushDenormals) {
  auto module = std::static_pointer_cast<const FusedModule>(g.attr("module")->opaque);
  auto lib = std::make_shared<BuiltLibrary>();
  lib->params = std::move(params);
  lib->outputNames = std::move(outputNames);
  lib->flushDenormals = flushDenormals;
  std::vector<LoweredFunction> fns;
  std::map<std::string, TuningLog> logs;          // the tuning logs read, by file
  std::map<std::string, std::string> firstOfTask; // the node first calling a task, by key
  for (const auto &n : g.index().nodes) {
    if (n.node->isVariable() || n.node->op->name != "tvm_op")
      continue;
    const std::string &name = n.node->parsed.getStr("func_name");
    if (lib->lowered.count(name))
      continue;
    checkInterrupt();
    const FusedFunction &f = *module->functions.at(name);
    LoweredFunction lf = lowerFunction(f);
    if (!opts.tuning.empty() && lf.fast && !lf.schedule->space.knobs.empty()) {
      // A variant's function is known across sizes by its family, named (as extractTasks
      // names it) after the node that first calls its task.
      std::string family;
      if (!opts.sizeScope.empty()) {
        const std::string &first = firstOfTask.emplace(taskKey(lf), n.node->name).first->second;
        family = taskFamily(opts.sizeScope, first, lf.schedule->space);
      }
      std::string why;
      if (std::optional<TunedPoint> best = bestRecord(lf, family, opts, logs, why)) {
        try {
          lf = lowerFunction(f, &*best);
        } catch (const Interrupted &) {
          throw;
        } catch (const Error &e) {
          // A record that no longer fits the schedule (edited, or from another revision):
          // the rule is built and the user told, the build goes on.
          lf.schedule->configSource =
              "the rule (the best record does not fit: " + std::string(e.what()) + ")";
          if (opts.warnings)
            opts.warnings->push_back("warning: " + best->source + " skipped: " + e.what());
        }
      } else {
        lf.schedule->configSource = why;
      }
    }
    if (trace || opts.lowered) {
      std::string loops = printLowered(lf);
      if (trace)
        *trace << "lower function " << name << "\n" << loops;
      if (opts.lowered)
        opts.lowered(name, loops);
    }
    lib->lowered.emplace(name, lf);
    fns.push_back(std::move(lf));
  }
  CompileOptions copts;
  copts.cache = opts.cache.get();
  copts.progress = opts.progress;
  lib->code = CompiledModule::compile(fns, copts);
  auto built = std::make_shared<FusedModule>(*module);
  built->compiled = lib;
  GraphAttr attr = *g.attr("module");
  attr.opaque = built;
  g.attrs["module"] = attr;
  return g;
}

// NNVM's precompute_prune: PrecomputePrune, then the cut-off graph evaluated once on the params
// (NNVM built and ran it; the reference interpreter gives the same numbers). Its outputs become
// the params, and their shapes and dtypes the inputs'. `given` is only read: `params` receives
// the params the deploy graph reads, in their own dtype.
Graph precompute(Graph g, const StoredTensors &given, const std::vector<std::string> &names,
                 StoredTensors &params, std::map<std::string, Shape> &shapes,
                 std::map<std::string, int> &dtypes, const PassContext &ctx,
                 const KernelCache *cache, const GraphApplyFn &hook) {
  g.attrs["param_name_list"] = GraphAttr::listStr(names);
  g = apply(g, {"PrecomputePrune"}, ctx, hook);
  auto it = g.attrs.find("precompute_graph");
  if (it == g.attrs.end()) {
    for (const std::string &n : names)
      params.emplace(n, given.at(n));
    return g;
  }
  Graph pre = *std::static_pointer_cast<const Graph>(it->second.opaque);
  g.attrs.erase(it); // moved out, as _move_out_graph does
  pre = withShapeInputs(pre, shapes);
  std::vector<int64_t> dts;
  for (const std::string &n : inputNames(pre))
    dts.push_back(given.at(n).dtype());
  pre.attrs["dtype_inputs"] = GraphAttr::listInt(dts);
  PassContext quiet = ctx; // the precompute run is not one of the build's Graph.apply calls
  quiet.instruments.clear();
  pre = applyPasses(pre, {"InferShape", "InferType"}, quiet);
  StoredTensors values = evaluatePrecompute(pre, given, cache);
  for (const std::string &n : pre.attr("output_names")->strs) {
    StoredTensor &v = values.at(n);
    shapes[n] = v.shape();
    dtypes[n] = v.dtype();
    params[n] = std::move(v);
  }
  return g;
}

} // namespace

Graph recompile(const Graph &deploy, const BuildOptions &opts) {
  auto lib = builtLibrary(deploy);
  if (!lib)
    fail("recompile: the graph was not built");
  return compileFunctions(deploy, nullptr, lib->params, opts, lib->outputNames,
                          lib->flushDenormals);
}

Graph withShapeInputs(Graph g, const std::map<std::string, Shape> &shapes) {
  std::vector<Shape> v;
  for (const std::string &n : inputNames(g)) {
    auto it = shapes.find(n);
    v.push_back(it == shapes.end() ? Shape{} : it->second);
  }
  g.attrs["shape_inputs"] = GraphAttr::listShape(v);
  return g;
}

const std::vector<std::string> &canonicalizingPasses() {
  static const std::vector<std::string> passes = {"EliminateIdentity", "FakeQuantizationToInteger",
                                                  "SimplifyGelu",      "SimplifyLayerNorm",
                                                  "SimplifyPow",       "MatMulToDense"};
  return passes;
}

bool flushesDenormals(Denormals mode, int optLevel) {
  return mode == Denormals::Flush || (mode == Denormals::Auto && optLevel >= 3);
}

const std::vector<std::string> &optionalPasses() {
  static const std::vector<std::string> passes = [] {
    std::vector<std::string> v = canonicalizingPasses();
    for (const char *p : {"AlterOpLayout", "FoldScaleAxis", "SinkLayoutTransform"})
      v.push_back(p);
    return v;
  }();
  return passes;
}

Graph build(const Graph &src, BuildOptions opts, const PassContext &outer, std::ostream *trace) {
  installTargetInfo();
  // bfloat16's fast path is the CPU's bfloat16 dot product; without it opt_level 3 would be
  // float32 arithmetic with conversions around it, so it is refused rather than built slower.
  if (opts.bf16 && opts.optLevel >= 3 && !codegenHas("avx512bf16"))
    fail("precision=bf16 at opt_level 3 needs avx512_bf16 (vdpbf16ps), which ", codegenTarget().cpu,
         " lacks; opt_level 2 computes the same bfloat16 rounding, for studying its accuracy");
  PassContext ctx = outer;
  ctx.optLevel = opts.optLevel;
  // A graph with size symbols builds a variant for each size it runs at (DynamicBuild).
  // Shapes given for its symbolic inputs bind the symbols: a build of those sizes.
  if (hasSizeSymbols(src) && !opts.symbolic) {
    std::map<std::string, Shape> given;
    for (const auto &[name, s] : opts.shapes)
      if (symbolicInputs(src).count(name))
        given[name] = s;
    if (given.empty())
      return dynamicBuildGraph(src, std::move(opts), ctx);
    SymBindings b = bindInputs(src, given);
    for (const auto &[name, s] : given)
      opts.shapes.erase(name);
    return build(bindSymbols(src, b), std::move(opts), outer, trace);
  }
  // Shapes: the options, then each variable's own `shape` attribute.
  std::map<std::string, Shape> shapes = opts.shapes;
  const IndexedGraph &sidx = src.index();
  for (uint32_t nid : sidx.argNodes) {
    const Node &v = *sidx.nodes[nid].node;
    if (shapes.count(v.name))
      continue;
    for (const auto &[k, val] : v.attrs)
      if (k == "shape")
        shapes[v.name] = opts.symbolic ? parseShape(val) : Shape(parseIntTuple(val));
  }
  for (const auto &[name, s] : opts.shapes)
    if (sidx.findByName(name) < 0)
      fail("build: the graph has no input '", name, "'");
  // 1. The params' shapes and dtypes are merged in.
  std::map<std::string, int> dtypes = opts.dtypes;
  // The bound params: the caller's own, else the ones it shares with the build.
  const bool shared = opts.params.empty() && opts.sharedParams;
  StoredTensors own = storeAll(std::move(opts.params));
  const StoredTensors &given = shared ? *opts.sharedParams : own;
  for (const auto &[name, t] : given) {
    if (sidx.findByName(name) < 0 || !sidx.nodes[sidx.findByName(name)].node->isVariable()) {
      if (shared)
        continue; // a session's params may name variables this graph does not have
      fail("build: the graph has no input '", name, "' to bind a param to");
    }
    auto asked = opts.shapes.find(name);
    if (asked != opts.shapes.end() && asked->second != t.shape())
      fail("build: param ", name, " has shape ", shapeToTuple(t.shape()), " but shape ", name, "=",
           shapeToTuple(asked->second), " was given");
    shapes[name] = t.shape();
    dtypes[name] = t.dtype();
  }

  Graph g = src;
  // 2. CorrectLayout with the inputs' layouts; read the layouts it chose.
  g = withLayoutInputs(g, {});
  index(g, ctx, opts.graphApply);
  g = apply(g, {"CorrectLayout"}, ctx, opts.graphApply);
  index(g, ctx, opts.graphApply);
  const GraphAttr &lay = *g.attr("layout");
  auto layouts = perInput<std::string>(g, [&](uint32_t e) { return lay.strs[e]; });
  // 3. InferShape with the given shapes; every input must end up known.
  g = apply(withShapeInputs(g, shapes), {"InferShape"}, ctx, opts.graphApply);
  index(g, ctx, opts.graphApply);
  {
    const GraphAttr &sh = *g.attr("shape");
    const IndexedGraph &idx = g.index();
    for (uint32_t nid : idx.argNodes) {
      const Shape &s = sh.shapes[idx.entryId(nid, 0)];
      if (!shapeKnown(s) && !s.isSymbolic())
        fail("build: the shape of input '", idx.nodes[nid].node->name,
             "' is unknown; give it with shape ", idx.nodes[nid].node->name, "=(…)");
    }
    shapes = perInput<Shape>(g, [&](uint32_t e) { return sh.shapes[e]; });
  }
  // NNVM's dtype is a string (every input that type; a variable's own dtype does not count) or
  // a dict (those inputs; InferType fills in the rest, reading the variables' own dtypes too).
  // `dtype NAME=…` and params make the dict; otherwise `dtype=…` is the string.
  if (!dtypes.empty()) {
    Graph typed = g;
    std::vector<int64_t> given;
    for (const std::string &n : inputNames(typed))
      given.push_back(dtypes.count(n) ? dtypes.at(n) : -1);
    typed.attrs["dtype_inputs"] = GraphAttr::listInt(given);
    typed = apply(typed, {"InferType"}, ctx, opts.graphApply);
    const GraphAttr &dt = *typed.attr("dtype");
    dtypes = perInput<int>(typed, [&](uint32_t e) {
      return dt.ints[e] == -1 ? opts.defaultDType : static_cast<int>(dt.ints[e]);
    });
  }
  // Computations on shapes become constants now that the input shapes are known (FoldShapeOf,
  // only when the graph has a shape_of, so that other builds run the seed's passes).
  bool readsShapes = false;
  for (const auto &e : g.index().nodes)
    readsShapes |= !e.node->isVariable() && e.node->op->name == "shape_of";
  if (readsShapes)
    g = apply(withShapeInputs(g, shapes), {"FoldShapeOf"}, ctx, opts.graphApply);
  // The qnn ops become the plain ops the backend lowers (at every level: they have no loops of
  // their own), int8 data shifted to the uint8 the dot instructions take first (QnnLegalize);
  // the fixed-point multipliers are computed from the bound scales.
  auto canonicalizeQnn = [&](const Graph &t) {
    bool qnn = false;
    for (const auto &e : t.index().nodes)
      qnn |= !e.node->isVariable() && e.node->op->name.rfind("qnn.", 0) == 0;
    if (!qnn)
      return t;
    PassContext withParams = ctx;
    withParams.params = &given;
    // Each pass on the graph with its inputs' shapes and dtypes (a rewrite drops them).
    Graph legal = apply(withDTypeInputs(withShapeInputs(t, shapes), dtypes, opts.defaultDType),
                        {"InferShape", "InferType", "QnnLegalize"}, withParams, opts.graphApply);
    return apply(withDTypeInputs(withShapeInputs(legal, shapes), dtypes, opts.defaultDType),
                 {"InferShape", "InferType", "QnnCanonicalize"}, withParams, opts.graphApply);
  };
  // 5. optimize: AlterOpLayout (level 3), SimplifyInference, FoldScaleAxis (level 3).
  if (opts.optLevel >= 3) {
    // The fast path tunes for this machine: a plain "llvm" target means the host CPU, so that
    // AlterOpLayout blocks channels by its vector width.
    if (ctx.get("target", "llvm") == "llvm")
      ctx.config["target"] = "llvm -mcpu=native";
    auto typed = [&](const Graph &t) {
      return withDTypeInputs(withShapeInputs(t, shapes), dtypes, opts.defaultDType);
    };
    // What exporters write out in small ops (Identity copies, GELU, layer norm, MatMul by a
    // constant) becomes the one op the fast schedules know; the passes read the bound params'
    // values to recognise constants.
    ctx.params = &given;
    for (const std::string &p : canonicalizingPasses())
      if (!ctx.disabledPass.count(p))
        g = apply(typed(g), {"InferShape", "InferType", p}, ctx, opts.graphApply);
    g = canonicalizeQnn(g);
    g = apply(withLayoutInputs(g, layouts), {"CorrectLayout"}, ctx, opts.graphApply);
    // The canonicalising passes rewire inputs (EliminateIdentity lets a convolution read a param
    // it read through an exporter's Identity), so the layout each input was written for is read
    // again: the CorrectLayout after AlterOpLayout must convert a param from that layout, not
    // take the blocked layout its convolution needs as the param's own (ConvNeXt's zero biases,
    // one initializer read by a dense first and by a convolution through an Identity).
    layouts = perInput<std::string>(g, [&](uint32_t e) { return g.attr("layout")->strs[e]; });
    // AlterOpLayout packs the weights of the params a dense reads; with precision=bf16 (checked
    // above: the CPU has vdpbf16ps) a convolution's in pairs of input channels.
    ctx.config["precision"] = opts.bf16 ? "bf16" : "fp32";
    if (!ctx.disabledPass.count("AlterOpLayout"))
      g = apply(typed(g), {"InferShape", "InferType", "AlterOpLayout"}, ctx, opts.graphApply);
    ctx.params = nullptr;
    g = apply(withLayoutInputs(g, layouts), {"CorrectLayout"}, ctx, opts.graphApply);
    g = plainOutputs(g);
  }
  // precision=bf16: the products in bfloat16, on the blocked ops AlterOpLayout made at level 3
  // (so that a dense's packed weight is cast with it, once, by PrecomputePrune).
  if (opts.bf16)
    g = apply(withDTypeInputs(withShapeInputs(g, shapes), dtypes, opts.defaultDType),
              {"InferShape", "InferType", "ToMixedPrecision"}, ctx, opts.graphApply);
  g = canonicalizeQnn(g);
  g = apply(withShapeInputs(g, shapes), {"InferShape", "SimplifyInference"}, ctx, opts.graphApply);
  if (opts.optLevel >= 3) {
    if (!ctx.disabledPass.count("FoldScaleAxis"))
      g = apply(withShapeInputs(g, shapes), {"InferShape", "FoldScaleAxis"}, ctx, opts.graphApply);
    g = apply(withShapeInputs(g, shapes), {"InferShape"}, ctx, opts.graphApply);
    // The params the build binds: SinkLayoutTransform reorders a dense weight only when
    // PrecomputePrune will do it once, at build time.
    std::string bound;
    for (const auto &[name, value] : given)
      bound += (bound.empty() ? "" : ",") + name;
    ctx.config["bound_params"] = bound;
    if (!ctx.disabledPass.count("SinkLayoutTransform"))
      g = runPass(g, sinkLayoutTransformPass(), ctx);
    ctx.config.erase("bound_params");
  }
  // 6. Params the graph no longer reads are dropped; PrecomputePrune from level 2.
  std::vector<std::string> read;
  for (const std::string &n : inputNames(g))
    if (given.count(n))
      read.push_back(n);
  StoredTensors params;
  if (!read.empty() && opts.optLevel >= 2)
    g = precompute(g, given, read, params, shapes, dtypes, ctx, opts.cache.get(), opts.graphApply);
  else
    for (const std::string &n : read)
      params.emplace(n, given.at(n));
  if (opts.shareParams)
    opts.shareParams(params);
  // 7. Shapes and dtypes of the inputs, the target and whether to fuse.
  index(g, ctx, opts.graphApply);
  g = apply(withShapeInputs(g, shapes), {"InferShape"}, ctx, opts.graphApply);
  index(g, ctx, opts.graphApply);
  g = withDTypeInputs(g, dtypes, opts.defaultDType);
  g.attrs["target"] = GraphAttr::string(ctx.get("target", "llvm"));
  g.attrs["opt_level"] = GraphAttr::integer(opts.optLevel);
  // 8. The fusion passes.
  g = apply(g, {"InferShape"}, ctx, opts.graphApply);
  g = apply(g, {"InferType"}, ctx, opts.graphApply);
  g = apply(g, {"GraphFusePartition"}, ctx, opts.graphApply);
  // GraphFuseCompile lowers and compiles its functions (the seed's `lower function` lines come
  // before the pass's own trace), so the two run as one pass here.
  std::vector<std::string> outputNames;
  for (const auto &h : src.index().heads) {
    const Node &n = *src.index().nodes[h.nodeId].node;
    outputNames.push_back(n.name + (n.numOutputs() > 1 ? "." + std::to_string(h.index) : ""));
  }
  PassInfo compile = requirePass("GraphFuseCompile");
  PassInfo inner = compile;
  compile.run = [&](const Graph &in, const PassContext &c) {
    return compileFunctions(inner.run(in, c), trace, std::move(params), opts, outputNames,
                            flushesDenormals(opts.denormals, opts.optLevel));
  };
  auto runCompile = [&](const Graph &in) { return runPass(in, compile, ctx); };
  return opts.graphApply ? opts.graphApply(g, {"GraphFuseCompile"}, runCompile) : runCompile(g);
}

} // namespace loupe::backend
