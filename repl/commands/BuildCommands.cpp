// BuildCommands: the commands that build — :build (nnvm.compiler.build of the current step) and
// :export.
#include "backend/Build.h"
#include "backend/DynamicBuild.h"
#include "backend/Export.h"
#include "backend/GraphExecutor.h"
#include "backend/Peak.h"
#include "backend/Runtime.h"
#include "core/Error.h"
#include "core/Interpreter.h"
#include "core/Interrupt.h"
#include "core/Npy.h"
#include "core/Printer.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/MixedPrecision.h"
#include "passes/Symbols.h"
#include "repl/commands/Commands.h"
#include "repl/commands/RunInputs.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// The build topic's command handlers (building and exporting): a member of Commands, so
/// they reach the engine as Commands does.
struct Commands::BuildTopic {
  static void build(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void exportBuild(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

const char *const Commands::kBuildUsage =
    ":build [opt_level=N] [dtype=TYPE] [precision=fp32|bf16] [seed=N] [shape NAME=(…) …] "
    "[dtype NAME=TYPE …] [param NAME=random|zeros|ones|NUMBER|FILE.npy …] "
    "[generic] [specialize SYMBOL=N[,N…] …]";

namespace {

// The build options of `:build`'s words over the session's opt_level and precision; params are
// bound against the graph's variables (a param's shape comes from `shape NAME=`, else the
// variable's `shape`, else its file, else InferShape).
backend::BuildOptions parseBuild(const Engine &e, const std::string &rest, int optLevel, bool bf16,
                                 const Graph &g, bool &dtypeGiven) {
  backend::BuildOptions o;
  o.optLevel = optLevel;
  o.bf16 = bf16;
  std::map<std::string, std::string> params;
  unsigned seed = 0;
  enum { None, Shape_, DType_, Param_ } mode = None;
  for (const std::string &w : splitKeepingTuples(rest)) {
    if (w == "shape" || w == "dtype" || w == "param") {
      mode = w == "shape" ? Shape_ : w == "dtype" ? DType_ : Param_;
      continue;
    }
    auto [k, v] = keyValue(w, Commands::kBuildUsage);
    if (k == "dtype") { // dtype=TYPE: every input
      auto dt = dtypeFromName(v);
      if (!dt)
        fail("unknown dtype '", v, "'");
      o.defaultDType = *dt;
      dtypeGiven = true;
    } else if (k == "precision") {
      o.bf16 = bfloat16Precision(v);
    } else if (k == "opt_level") {
      if (v.size() != 1 || v[0] < '0' || v[0] > '3')
        fail("opt_level must be 0, 1, 2 or 3, got '", v, "'");
      o.optLevel = v[0] - '0';
    } else if (k == "seed") {
      seed = parseSeed(v);
    } else if (mode == Param_) {
      params[k] = v;
    } else if (mode == Shape_) {
      o.shapes[k] = parseShape(v);
      for (int64_t d : o.shapes[k])
        if (d <= 0)
          fail("shape of ", k, " must have positive dimensions, got ", v);
    } else if (mode == DType_) {
      auto dt = dtypeFromName(v);
      if (!dt)
        fail("unknown dtype '", v, "' for ", k);
      o.dtypes[k] = *dt;
    } else {
      fail("unknown option '", k, "'; usage: ", Commands::kBuildUsage);
    }
  }
  std::mt19937 rng(seed);
  const IndexedGraph &idx = g.index();
  // A param with no shape of its own takes the one InferShape gives it from the others (a
  // convolution's weight from its data and attributes), as a user of `random` expects.
  std::optional<Graph> inferred;
  auto inferredShape = [&](uint32_t nid) -> std::optional<Shape> {
    if (!inferred) {
      try {
        inferred =
            applyPasses(backend::withShapeInputs(g, o.shapes), {"InferShape"}, PassContext{});
      } catch (const Error &) {
        inferred = Graph{}; // build reports the shape error itself
      }
    }
    const GraphAttr *shapes = inferred->attr("shape");
    if (!shapes)
      return std::nullopt;
    const Shape &sh = shapes->shapes[inferred->index().entryId(nid, 0)];
    return sh.rankKnown() ? std::optional<Shape>(sh) : std::nullopt;
  };
  for (const auto &[name, how] : params) {
    int nid = idx.findByName(name);
    if (nid < 0 || !idx.nodes[nid].node->isVariable())
      fail("build: the graph has no input '", name, "' to bind a param to",
           Commands::dataInputsText(e, g));
    const Node &v = *idx.nodes[nid].node;
    std::optional<Shape> shape;
    if (o.shapes.count(name))
      shape = o.shapes[name];
    for (const auto &[key, val] : v.attrs)
      if (key == "shape" && !shape)
        shape = parseShape(val);
    std::optional<Tensor> file;
    if (!namesValues(how)) {
      // What a raw .bin holds: the dtype the value will take.
      std::optional<int> declaredHere = declaredDType(v);
      int binDType = o.dtypes.count(name) ? o.dtypes[name]
                     : declaredHere       ? *declaredHere
                                          : o.defaultDType;
      file = readTensorFile(how, name, shape ? &*shape : nullptr, binDType);
      if (!shape)
        shape = file->shape;
    }
    if (!shape)
      shape = inferredShape(static_cast<uint32_t>(nid));
    if (!shape)
      fail("build: param ", name, "=", how, " needs a shape; give it with shape ", name, "=(…)");
    // A value takes the variable's own dtype attribute, as the type rules will.
    std::optional<int> declared = declaredDType(v);
    int dt = o.dtypes.count(name) ? o.dtypes[name]
             : file               ? file->dtype
             : declared           ? *declared
                                  : o.defaultDType;
    o.params[name] = fillTensor(how, *shape, dt, rng, "param " + name, file ? &*file : nullptr);
  }
  return o;
}

std::vector<std::string> paramNames(const Graph &g) {
  std::vector<std::string> names;
  if (auto lib = backend::builtLibrary(g))
    for (const auto &[n, t] : lib->params)
      names.push_back(n);
  return names;
}

} // namespace

void Commands::BuildTopic::build(Engine &e, const Args &, const std::string &rest,
                                 std::ostream &out) {
  const Graph before = e.requireGraph();
  if (backend::builtLibrary(before) || backend::dynamicBuild(before))
    fail("step ", e.cursor_,
         " is already a built deploy graph; :undo to the graph it was "
         "built from and :build that");
  // `specialize SYMBOL=N,N …` ends the words: the sizes built now, beside any :run asks for.
  std::string words = rest;
  std::vector<SymBindings> specialize;
  if (size_t at = (" " + rest + " ").find(" specialize "); at != std::string::npos) {
    words = rest.substr(0, at);
    specialize = sizeSample(before, rest.substr(std::min(rest.size(), at + 11)), "specialize");
  }
  // `generic`: a graph with size symbols built once with generic kernels, which run every size.
  bool generic = false;
  if (size_t at = (" " + words + " ").find(" generic "); at != std::string::npos) {
    generic = true;
    words.erase(at, std::min(words.size() - at, size_t{8}));
    if (!backend::hasSizeSymbols(before))
      fail("build: generic kernels are for a graph with size symbols; this one has none");
  }
  // dtype=TYPE asks for every input in TYPE: a model's own float types and params follow it
  // (converted, and said so), never silently kept; an integer type for a float model is refused.
  bool dtypeGiven = false;
  backend::BuildOptions o =
      parseBuild(e, words, e.passContext_.optLevel, e.precision_ == "bf16", before, dtypeGiven);
  o.generic = generic;
  const int want = o.defaultDType;
  auto converts = [&](int dt) { return dtypeGiven && dtypeIsFloat(dt) && dt != want; };
  size_t convertedParams = 0, convertedInputs = 0;
  std::string modelType;
  // The last :model's params, for the variables this graph has and the command left: read in
  // place when the command gives and converts none (a network's weights are not copied to be
  // built), else copied with the command's.
  const IndexedGraph &bidx = before.index();
  bool convertsAny = false;
  for (const auto &[name, t] : e.modelParams_)
    convertsAny = convertsAny || converts(t.dtype());
  if (o.params.empty() && !convertsAny)
    o.sharedParams = &e.modelParams_;
  for (const auto &[name, t] : e.modelParams_)
    if (!o.sharedParams && !o.params.count(name) && bidx.findByName(name) >= 0 &&
        bidx.nodes[bidx.findByName(name)].node->isVariable()) {
      if (!converts(t.dtype())) {
        o.params[name] = t.load();
        continue;
      }
      if (!dtypeIsFloat(want))
        fail("dtype=", dtypeName(want), ": the model's params are ", dtypeName(t.dtype()),
             "; only a float model's precision converts (dtype=float16, bfloat16, float32 or "
             "float64)");
      o.params[name] = converted(t.load(), want);
      modelType = dtypeName(t.dtype());
      ++convertedParams;
    }
  // …and the last ONNX :load's input dtypes, for the inputs the command did not type.
  for (const auto &[name, dt] : e.modelDTypes_)
    if (!o.dtypes.count(name) && bidx.findByName(name) >= 0) {
      if (converts(dt) && !dtypeIsFloat(want))
        fail("dtype=", dtypeName(want), ": the model's input ", name, " is ", dtypeName(dt),
             "; only a float model's precision converts (dtype=float16, bfloat16, float32 or "
             "float64)");
      if (converts(dt)) {
        modelType = dtypeName(dt);
        ++convertedInputs;
      }
      // Given even when converted: the variable's own dtype attribute says the model's type.
      o.dtypes[name] = converts(dt) ? want : dt;
    }
  // …and, when a :model network's params convert, its data inputs: the zoo's variables carry
  // their float32 dtype attribute, which would keep them float32 beside the converted params.
  if (convertedParams > 0)
    for (uint32_t nid : bidx.argNodes) {
      const Node &v = *bidx.nodes[nid].node;
      std::optional<int> declared = declaredDType(v);
      if (o.dtypes.count(v.name) || o.params.count(v.name) || !declared || !converts(*declared))
        continue;
      o.dtypes[v.name] = want;
      ++convertedInputs;
    }
  bool trace = std::any_of(e.passContext_.instruments.begin(), e.passContext_.instruments.end(),
                           [](const auto &i) { return i->name() == "trace"; });
  o.cache = e.kernelCache_;
  o.denormals = e.denormals_ == "keep"    ? backend::Denormals::Keep
                : e.denormals_ == "flush" ? backend::Denormals::Flush
                                          : backend::Denormals::Auto;
  std::vector<std::string> tuningWarnings;
  o.tuning = e.tuningLocation();
  o.warnings = &tuningWarnings;
  const int optLevel = o.optLevel;
  auto t0 = std::chrono::steady_clock::now();
  if (e.progress_) {
    e.progress_("building: passes and lowering …", -1);
    o.progress = [&e, t0](const backend::CompileStats &s) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "building: %zu/%zu kernels, %zu from the cache, %.1f s",
                    s.done, s.distinct, s.cacheHits,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      e.progress_(buf, s.distinct ? static_cast<double>(s.done) / s.distinct : 1.0);
    };
  }
  // The status line goes however the build ends.
  struct ClearProgress {
    Engine &e;
    ~ClearProgress() {
      if (e.progress_)
        e.progress_("", 1.0);
    }
  } clearProgress{e};
  // The lowered loops go where the trace instrument prints, between the passes.
  std::ostream *sink = *e.sink_ ? *e.sink_ : &out;
  Graph g = backend::build(before, std::move(o), e.passContext_, trace ? sink : nullptr);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::string label = "build opt_level=" + std::to_string(optLevel);
  if (auto dyn = backend::dynamicBuild(g)) {
    // A build of sizes that come at run time: each :run's sizes get their variant.
    std::vector<std::string> symbols(dyn->symbols().begin(), dyn->symbols().end());
    for (const SymBindings &b : specialize) {
      auto t1 = std::chrono::steady_clock::now();
      dyn->specialize(b);
      out << "specialized " << bindingsText(b) << " ("
          << (e.hideTimings_
                  ? std::string("-")
                  : significant(std::chrono::duration<double>(std::chrono::steady_clock::now() - t1)
                                    .count()))
          << " s)\n";
    }
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    e.pushStep(g, label, ms, false);
    out << "step " << e.cursor_ << ": " << label << " (dynamic: size symbols " << joinNames(symbols)
        << (dyn->generic() ? "; generic kernels, built once, run every size"
                           : "; each size :run gives builds its variant once")
        << (specialize.empty() ? "" : ", " + plural(specialize.size(), "variant") + " built now")
        << ")\n";
    for (const auto &[name, shape] : symbolicInputs(g))
      out << "input " << name << ": " << shapeToTuple(shape) << "\n";
    return;
  }
  e.pushStep(g, label, ms, false);
  e.lastCompile_ = std::make_shared<backend::CompileStats>(backend::builtLibrary(g)->code->stats());
  out << "step " << e.cursor_ << ": " << label << " (" << graphSize(g.index()) << "; "
      << plural(functionOrder(g).size(), "function");
  if (std::vector<std::string> ps = paramNames(g); ps.size() > 4)
    out << "; " << ps.size() << " params";
  else if (!ps.empty())
    out << "; params " << joinNames(ps);
  out << ")\n";
  if (convertedParams + convertedInputs)
    out << "note: dtype=" << dtypeName(want) << ": the model's " << plural(convertedInputs, "input")
        << " and " << plural(convertedParams, "param") << " of " << modelType << " converted to "
        << dtypeName(want) << "\n";
  for (const std::string &w : tuningWarnings)
    out << w << "\n";
  size_t tuned = 0;
  for (const auto &[name, f] : backend::builtLibrary(g)->lowered)
    tuned += f.schedule->config != nullptr;
  if (tuned)
    out << "tuning: " << plural(tuned, "function")
        << (tuned == 1 ? " built at its best record" : " built at their best records")
        << " (:schedule FUNC names " << (tuned == 1 ? "it" : "each") << ")\n";
  // The deploy graph, as the seeds print it after build (tvm_op nodes, storage ids).
  std::string ir = printGraphIR(g);
  out << ir << (ir.back() == '\n' ? "" : "\n");
}

void Commands::BuildTopic::exportBuild(Engine &e, const Args &a, const std::string &,
                                       std::ostream &out) {
  if (a.empty())
    fail("usage: :export DIR [SYMBOL=N[,N…] …]");
  std::shared_ptr<const backend::DynamicBuild> dyn = backend::dynamicBuild(e.requireGraph());
  if (!dyn)
    requireBuilt(e.requireGraph());
  if (a.size() > 1 && !dyn)
    fail(":export DIR SYMBOL=N… picks a dynamic build's sizes; the current step has none");
  e.checkWrite(":export", a[0]);
  // The sizes given (each built now if it was not), else every size built so far.
  std::vector<SymBindings> sizes;
  if (a.size() > 1) {
    std::string words;
    for (size_t i = 1; i < a.size(); ++i)
      words += " " + a[i];
    sizes = sizeSample(dyn->graph(), words, ":export");
  }
  std::vector<std::string> files = backend::exportBuild(e.requireGraph(), a[0], sizes);
  if (dyn && sizes.empty())
    sizes = dyn->variants();
  out << "exported step " << e.cursor_ << " to " << a[0] << ": " << joinNames(files) << "\n";
  // A dynamic build's export holds its sizes, each picked by its sizes from C; a generic
  // build's, any size besides.
  if (dyn) {
    std::vector<std::string> texts, symbols(dyn->symbols().begin(), dyn->symbols().end());
    for (const SymBindings &b : sizes)
      texts.push_back(bindingsText(b));
    if (dyn->generic()) {
      std::string any;
      for (const std::string &s : symbols)
        any += (any.empty() ? "" : ", ") + s + "=N";
      out << "variants: " << (texts.empty() ? "" : joinNames(texts, "; ") + "; ")
          << "generic kernels for any " << joinNames(symbols) << " (loupe_create_sizes(threads, \""
          << any << "\"))\n";
    } else {
      out << "variants: " << joinNames(texts, "; ") << " (loupe_create_sizes(threads, \""
          << texts.front()
          << "\"); another size is refused: :export DIR SYMBOL=N,… builds and exports those)\n";
    }
  }
}

std::vector<Commands::Listed> Commands::buildCommands() {
  using T = BuildTopic;
  return {
      {"target",
       {"build", std::string(kBuildUsage).substr(std::strlen(":build ")),
        "nnvm.compiler.build: the passes of the opt level (from 2, PrecomputePrune folds what "
        "depends on params only), then every fused function lowered and compiled; prints the "
        "deploy graph, which becomes a new step. A graph with size symbols builds a variant for "
        "each size a run gives (specialize: those sizes now); with generic, once, every kernel "
        "generic (its loops over the symbols, read at run time), which every size not "
        "specialized runs",
        T::build}},
      {"tune",
       {"export", "DIR [SYMBOL=N[,N…] …]",
        "writes the built graph for deployment: deploy.json, deploy.so (loadable from C), "
        "deploy.h and params/NAME.npy; a dynamic build's export holds every size built, or the "
        "sizes given (built now if they were not), each picked by its sizes from C",
        T::exportBuild}},
  };
}

} // namespace loupe
