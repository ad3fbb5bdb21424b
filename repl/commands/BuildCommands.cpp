// BuildCommands: the commands of building and running — :build, :run, :buffers, :profile, :export.
#include "backend/Build.h"
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
#include "repl/commands/Commands.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

const char *const Commands::kBuildUsage =
    ":build [opt_level=N] [dtype=TYPE] [seed=N] [shape NAME=(…) …] "
    "[dtype NAME=TYPE …] [param NAME=random|zeros|ones|NUMBER|FILE.npy …]";

namespace {

std::pair<std::string, std::string> keyValue(const std::string &word, const std::string &usage) {
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
    fail("expected NAME=VALUE, got '", word, "'; usage: ", usage);
  return {word.substr(0, eq), word.substr(eq + 1)};
}

const char *kRunUsage = ":run [NAME=random|zeros|ones|NUMBER|FILE.npy|FILE.pb …] [seed=N] "
                        "[save=DIR] [compare=FILE.npy|DIR] [top=K] [check=on|off]";

// A number given in place of a file (`s=2.5`, `x=-1`): every element that value.
std::optional<double> fillValue(const std::string &how) {
  double v = 0;
  auto [end, ec] = std::from_chars(how.data(), how.data() + how.size(), v);
  if (how.empty() || end != how.data() + how.size())
    return std::nullopt;
  if (ec == std::errc::result_out_of_range)
    fail(how, " is out of the range of a number (a double)");
  return ec == std::errc() ? std::optional<double>(v) : std::nullopt;
}

// True for the fills named in place of a file: random, zeros, ones, or a number.
bool namesValues(const std::string &how) {
  return how == "random" || how == "zeros" || how == "ones" || fillValue(how).has_value();
}

// A tensor file: ONNX's TensorProto for `.pb`, else NumPy's .npy.
Tensor readTensorFile(const std::string &path) {
  return path.ends_with(".pb") ? frontend::readTensorProto(path) : readNpy(path);
}

// `t`'s values in dtype `dt`, each rounded to what that dtype holds (NumPy's astype).
Tensor converted(const Tensor &t, int dt) {
  Tensor c(t.shape, dt);
  c.data = t.data;
  for (double &x : c.data)
    x = roundToDType(x, dt);
  return c;
}

// A tensor of `shape` and `dt` filled as `how` says: random (uniform in [-1, 1) from `rng`),
// zeros, ones, a number everywhere, or a .npy/.pb file whose shape must match (values rounded to
// `dt`); `file` is that file when the caller has read it already.
Tensor fillTensor(const std::string &how, const Shape &shape, int dt, std::mt19937 &rng,
                  const std::string &what, const Tensor *file = nullptr,
                  std::vector<std::string> *notes = nullptr) {
  requireTensorMemory(what, shape, dt);
  Tensor t(shape, dt);
  if (how == "random") {
    std::uniform_real_distribution<double> u(-1, 1);
    for (double &x : t.data)
      x = roundToDType(u(rng), dt);
  } else if (namesValues(how)) {
    double v = how == "ones" ? 1.0 : how == "zeros" ? 0.0 : *fillValue(how);
    std::fill(t.data.begin(), t.data.end(), roundToDType(v, dt));
  } else {
    Tensor f = file ? *file : readTensorFile(how);
    // A scalar (an ONNX rank-0 TensorProto) is the element of a one-element (1,) input, the
    // form a rank-0 graph input takes here.
    if (f.shape.empty() && shape == Shape{1})
      f.shape = shape;
    if (f.shape != shape)
      fail(how, " holds shape ", shapeToList(f.shape), " but ", what, " has shape ",
           shapeToList(shape));
    t = converted(f, dt);
    // A file of another dtype is converted as NumPy's astype would; the user is told.
    if (f.dtype != dt && notes)
      notes->push_back(cat("note: ", what, ": ", how, " holds ", dtypeName(f.dtype),
                           ", converted to ", dtypeName(dt)));
  }
  return t;
}

unsigned parseSeed(const std::string &v) {
  if (v.empty() || v.size() > 9 || !std::all_of(v.begin(), v.end(), ::isdigit))
    fail("seed must be a non-negative integer, got '", v, "'");
  return static_cast<unsigned>(std::stoul(v));
}

// The build options of `:build`'s words; params are bound against the graph's variables (a
// param's shape comes from `shape NAME=`, else the variable's `shape`, else its file, else
// InferShape).
backend::BuildOptions parseBuild(const Engine &e, const std::string &rest, int optLevel,
                                 const Graph &g, bool &dtypeGiven) {
  backend::BuildOptions o;
  o.optLevel = optLevel;
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
      file = readTensorFile(how);
      if (!shape)
        shape = file->shape;
    }
    if (!shape)
      shape = inferredShape(static_cast<uint32_t>(nid));
    if (!shape)
      fail("build: param ", name, "=", how, " needs a shape; give it with shape ", name, "=(…)");
    int dt = o.dtypes.count(name) ? o.dtypes[name] : file ? file->dtype : o.defaultDType;
    o.params[name] = fillTensor(how, *shape, dt, rng, "param " + name, file ? &*file : nullptr);
  }
  return o;
}

// Values with 6 significant digits, at most `n` of them.
std::string someValues(const Tensor &t, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < t.data.size() && i < n; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", t.data[i]);
    s += (i ? ", " : "") + std::string(buf);
  }
  return s + (t.data.size() > n ? ", …]" : "]");
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// The words of `:run`: how to fill each input, and the run's options.
struct RunWords {
  std::map<std::string, std::string> how; ///< input name → random|zeros|ones|FILE
  unsigned seed = 0;
  std::string save, compare; ///< folders or files, empty when not asked
  size_t top = 0;            ///< 0: no top values
  bool check = true;         ///< compare with the reference interpreter
};

RunWords parseRunWords(const std::string &rest) {
  RunWords w;
  for (const std::string &word : splitKeepingTuples(rest)) {
    auto [k, v] = keyValue(word, kRunUsage);
    if (k == "seed")
      w.seed = parseSeed(v);
    else if (k == "save")
      w.save = v;
    else if (k == "compare")
      w.compare = v;
    else if (k == "top")
      w.top = static_cast<size_t>(integerAtLeast("top", v, 1));
    else if (k == "check") {
      if (v != "on" && v != "off")
        fail("check must be on or off, got '", v, "'");
      w.check = v == "on";
    } else
      w.how[k] = v;
  }
  return w;
}

// The inputs of a run: every variable as the words say, else random (uniform in [-1, 1) from
// the seed) — except the built library's params the words leave, which the runtime binds
// itself and the reference loads through referenceRun. A file converted to the input's
// dtype adds a note.
std::map<std::string, Tensor> runInputs(const Engine &e, const Graph &g, const RunWords &w,
                                        std::vector<std::string> *notes = nullptr) {
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  for (const auto &[name, v] : w.how)
    if (idx.findByName(name) < 0 || !idx.nodes[idx.findByName(name)].node->isVariable())
      fail("run: the graph has no input '", name, "'", Commands::dataInputsText(e, g));
  auto lib = backend::builtLibrary(g);
  std::mt19937 rng(w.seed);
  std::map<std::string, Tensor> in;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    uint32_t eid = idx.entryId(nid, 0);
    auto how = w.how.find(name);
    if (how == w.how.end() && lib && lib->params.count(name))
      continue;
    in[name] =
        fillTensor(how != w.how.end() ? how->second : "random", shapes[eid],
                   static_cast<int>(dtypes[eid]), rng, "input '" + name + "'", nullptr, notes);
  }
  return in;
}

} // namespace

std::map<std::string, Tensor> Commands::defaultRunInputs(const Engine &e, const Graph &g) {
  return runInputs(e, g, RunWords{});
}

namespace {

// The reference interpreter's run of built graph `g` on `in` (telling `observe` each node's
// outputs): the variables `in` leaves are the built library's params, each loaded as doubles for
// each node that reads it (a network's weights are never all held as doubles at once).
std::vector<Tensor> referenceRun(const Graph &g, const std::map<std::string, Tensor> &in,
                                 const NodeObserver &observe = NodeObserver()) {
  auto lib = backend::builtLibrary(g);
  InterpretOptions options;
  options.observe = observe;
  options.askPerReader = true;
  return interpretFrom(
      g,
      [&](const std::string &name) -> std::optional<Tensor> {
        if (auto it = in.find(name); it != in.end())
          return it->second;
        if (auto p = lib->params.find(name); p != lib->params.end())
          return p->second.load();
        return std::nullopt;
      },
      options);
}

// The largest and relative differences of `t` from `ref`, elementwise.
std::pair<double, double> difference(const Tensor &t, const Tensor &ref) {
  double absErr = 0, relErr = 0;
  for (size_t i = 0; i < t.data.size(); ++i) {
    double d = std::fabs(t.data[i] - ref.data[i]);
    absErr = std::max(absErr, d);
    relErr = std::max(relErr, d / std::max(std::fabs(ref.data[i]), 1e-30));
  }
  return {absErr, relErr};
}

// The tensors `compare=` names, one per output, read and checked before the run: a .npy (or
// ONNX .pb) file for a graph of one output, else a folder with NAME.npy per output (names as
// :outputs).
std::vector<std::pair<std::string, Tensor>> expectedOutputs(const Engine &e, const Graph &g,
                                                            const std::string &where) {
  std::vector<Commands::Port> outs = Commands::graphOutputs(e, g);
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  std::vector<std::pair<std::string, Tensor>> expected;
  for (size_t k = 0; k < outs.size(); ++k) {
    std::string file = where;
    if (!where.ends_with(".npy") && !where.ends_with(".pb")) {
      if (!std::filesystem::is_directory(where))
        fail("compare=", where, ": not a .npy or .pb file, nor a folder of .npy files");
      file = (std::filesystem::path(where) / (npyFileStem(outs[k].name) + ".npy")).string();
      if (!std::filesystem::exists(file))
        fail("compare: ", where, " has no ", npyFileStem(outs[k].name), ".npy for output ", k, " (",
             outs[k].name, ")");
    } else if (outs.size() != 1) {
      fail("compare=", where, ": the graph has ", outs.size(),
           " outputs; give a folder with one NAME.npy per output (:outputs names them)");
    }
    Tensor t = readTensorFile(file);
    const Shape &want = shapes[idx.entryId(idx.heads[k])];
    if (t.shape != want)
      fail("compare: ", file, " holds shape ", shapeToList(t.shape), " but output ", k, " (",
           outs[k].name, ") has shape ", shapeToList(want));
    expected.emplace_back(file, std::move(t));
  }
  return expected;
}

// "[281] 0.934, [282] 0.0212": the `k` largest values with their flat indices, ties by index.
std::string topValues(const Tensor &t, size_t k) {
  std::vector<size_t> order(t.data.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                    [&](size_t a, size_t b) {
                      return t.data[a] > t.data[b] || (t.data[a] == t.data[b] && a < b);
                    });
  std::string s;
  for (size_t i = 0; i < k; ++i) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "[%zu] %.6g", order[i], t.data[order[i]]);
    s += (i ? ", " : "") + std::string(buf);
  }
  return s;
}

std::vector<std::string> paramNames(const Graph &g) {
  std::vector<std::string> names;
  if (auto lib = backend::builtLibrary(g))
    for (const auto &[n, t] : lib->params)
      names.push_back(n);
  return names;
}

} // namespace

Graph Commands::buildGraph(Engine &e, const Graph &g, backend::BuildOptions o,
                           const std::string &target) {
  if (backend::builtLibrary(g))
    fail("build: the graph is already a built deploy graph");
  checkTarget(target);
  PassContext ctx = e.passContext_;
  ctx.config["target"] = target;
  o.cache = e.kernelCache_;
  o.tuning = e.tuningLocation();
  return backend::build(g, std::move(o), ctx);
}

void Commands::build(Engine &e, const Args &, const std::string &rest, std::ostream &out) {
  const Graph before = e.requireGraph();
  if (backend::builtLibrary(before))
    fail("step ", e.cursor_,
         " is already a built deploy graph; :undo to the graph it was "
         "built from and :build that");
  // dtype=TYPE asks for every input in TYPE: a model's own float types and params follow it
  // (converted, and said so), never silently kept; an integer type for a float model is refused.
  bool dtypeGiven = false;
  backend::BuildOptions o = parseBuild(e, rest, e.passContext_.optLevel, before, dtypeGiven);
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
             "; only a float model's precision converts (dtype=float16, float32 or float64)");
      o.params[name] = converted(t.load(), want);
      modelType = dtypeName(t.dtype());
      ++convertedParams;
    }
  // …and the last ONNX :load's input dtypes, for the inputs the command did not type.
  for (const auto &[name, dt] : e.modelDTypes_)
    if (!o.dtypes.count(name) && bidx.findByName(name) >= 0) {
      if (converts(dt) && !dtypeIsFloat(want))
        fail("dtype=", dtypeName(want), ": the model's input ", name, " is ", dtypeName(dt),
             "; only a float model's precision converts (dtype=float16, float32 or float64)");
      if (converts(dt)) {
        modelType = dtypeName(dt);
        ++convertedInputs;
      }
      // Given even when converted: the variable's own dtype attribute says the model's type.
      o.dtypes[name] = converts(dt) ? want : dt;
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

void Commands::run(Engine &e, const Args &, const std::string &rest, std::ostream &out) {
  const Graph &g = e.requireGraph();
  if (!backend::builtLibrary(g))
    fail("the current graph was not built; run :build first");
  RunWords w = parseRunWords(rest);
  if (!w.save.empty())
    e.checkWrite(":run save=", w.save);
  std::vector<std::string> notes;
  std::map<std::string, Tensor> in = runInputs(e, g, w, &notes);
  // Everything the options read is read before the run, so a bad file fails the command whole.
  std::vector<std::pair<std::string, Tensor>> expected;
  if (!w.compare.empty())
    expected = expectedOutputs(e, g, w.compare);
  backend::RunResult r = backend::runDeployGraph(g, in);
  bool flushed = backend::builtLibrary(g)->flushDenormals;
  // A graph that rounds to quantization steps in float (an ONNX QDQ export's QuantizeLinear):
  // a value within rounding of a tie goes to one step in the kernels and to the next in the
  // reference, which computes in double, and the step carries on to the outputs.
  bool rounds = false;
  if (const FusedModule *built = builtPartition(g))
    for (const auto &n : built->partition->index().nodes)
      rounds |= !n.node->isVariable() && n.node->op->name == "round";
  std::vector<Tensor> ref;
  if (w.check)
    ref = referenceRun(g, in);
  for (const std::string &n : notes)
    out << n << "\n";
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    const Tensor &t = r.outputs[k];
    double sum = 0;
    for (double x : t.data)
      sum += x;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", sum);
    out << "output " << k << ": shape " << shapeToTuple(t.shape) << " " << dtypeName(t.dtype)
        << "\n  values " << someValues(t, 6) << "\n  sum " << buf << "\n";
    if (w.check) {
      auto [absErr, relErr] = difference(t, ref[k]);
      out << "  vs reference interpreter"
          << (flushed ? " (IEEE; the kernels flush subnormals)" : "") << ": max abs error "
          << sci(absErr) << ", max rel error " << sci(relErr) << "\n";
      if (rounds && absErr > 0)
        out << "  note: the graph rounds values to quantization steps in float arithmetic; a "
               "value near a rounding tie can land on the next step, so differences of whole "
               "steps are the rounding's, not a wrong kernel's\n";
    } else {
      out << "  vs reference interpreter: not checked (check=off)\n";
    }
    if (!expected.empty()) {
      auto [absErr, relErr] = difference(t, expected[k].second);
      out << "  vs " << expected[k].first << ": max abs error " << sci(absErr) << ", max rel error "
          << sci(relErr) << "\n";
    }
    if (w.top)
      out << "  top " << std::min(w.top, t.data.size()) << ": " << topValues(t, w.top) << "\n";
  }
  if (!w.save.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(w.save, ec);
    if (ec || !std::filesystem::is_directory(w.save))
      fail("save: cannot make folder ", w.save, (ec ? ": " + ec.message() : std::string()));
    std::vector<Commands::Port> outs = graphOutputs(e, g);
    std::vector<std::string> files;
    for (size_t k = 0; k < r.outputs.size(); ++k) {
      files.push_back(npyFileStem(outs[k].name) + ".npy");
      writeNpy((std::filesystem::path(w.save) / files.back()).string(), r.outputs[k]);
    }
    out << "saved " << plural(files.size(), "output") << " in " << w.save << ": "
        << joinNames(files) << "\n";
  }
}

Commands::RunValues Commands::runValues(Engine &e, const std::map<std::string, Tensor> &given,
                                        unsigned seed, bool check) {
  const Graph &g = e.requireGraph();
  if (!backend::builtLibrary(g))
    fail("the current graph was not built; run :build first");
  RunWords w;
  w.seed = seed;
  std::map<std::string, Tensor> in = runInputs(e, g, w);
  const StoredTensors &params = backend::builtLibrary(g)->params;
  for (const auto &[name, t] : given) {
    auto it = in.find(name);
    auto p = params.find(name);
    if (it == in.end() && p == params.end())
      fail("run: the graph has no input '", name, "'", dataInputsText(e, g));
    const Shape &want = it != in.end() ? it->second.shape : p->second.shape();
    if (t.shape != want)
      fail("run: input '", name, "' has shape ", shapeToTuple(t.shape), " but the graph takes ",
           shapeToTuple(want));
    in[name] = converted(t, it != in.end() ? it->second.dtype : p->second.dtype());
  }
  RunValues r;
  for (const Port &p : graphOutputs(e, g))
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

void Commands::bisect(Engine &e, const Args &, const std::string &rest, std::ostream &out) {
  const Graph &g = e.requireGraph();
  if (!backend::builtLibrary(g))
    fail("the current graph was not built; run :build first");
  // tol=X, and the inputs as :run takes them.
  double tol = 1e-4;
  std::string runWords;
  for (const std::string &w : splitKeepingTuples(rest)) {
    if (!w.starts_with("tol=")) {
      runWords += w + " ";
      continue;
    }
    char *end = nullptr;
    tol = std::strtod(w.c_str() + 4, &end);
    if (w.size() == 4 || *end || !(tol >= 0) || !std::isfinite(tol))
      fail("tol must be a non-negative number (a share of each output's largest magnitude), "
           "got '",
           w.substr(4), "'");
  }
  RunWords w = parseRunWords(runWords);
  if (!w.save.empty() || !w.compare.empty() || w.top || !w.check)
    fail("bisect takes inputs, seed= and tol=; save=, compare=, top= and check= are :run's");
  std::vector<std::string> notes;
  std::map<std::string, Tensor> in = runInputs(e, g, w, &notes);
  backend::GraphRuntime rt(g);
  for (const auto &[name, t] : in)
    rt.setInput(name, t);
  // The reference interpreter walks the deploy graph in node order, and the compiled kernels
  // run in the same order, one at a time, each compared as soon as both have made it (a later
  // kernel may reuse its storage).
  struct Difference {
    uint32_t node = 0, output = 0;
    size_t index = 0;
    double built = 0, reference = 0, abs = 0, rel = 0;
  };
  struct Found {};
  std::optional<Difference> first;
  Difference worst;
  size_t next = 0, compared = 0;
  const IndexedGraph &idx = g.index();
  try {
    referenceRun(g, in, [&](uint32_t nid, const std::vector<const Tensor *> &ref) {
      while (next < rt.numCalls() && rt.callNode(next) <= nid)
        rt.runCall(next++);
      if (next == 0 || rt.callNode(next - 1) != nid)
        return;
      std::vector<Tensor> got = rt.callOutputs(next - 1);
      for (uint32_t k = 0; k < got.size(); ++k) {
        Difference d{nid, k};
        double scale = 0;
        for (size_t i = 0; i < got[k].data.size(); ++i) {
          double r = ref[k]->data[i], b = got[k].data[i];
          scale = std::max(scale, std::fabs(r));
          double diff = std::isnan(r) != std::isnan(b) ? INFINITY : std::fabs(b - r);
          if (i == 0 || diff > d.abs) {
            d.abs = diff;
            d.index = i;
            d.built = b;
            d.reference = r;
          }
        }
        d.rel = d.abs / std::max(scale, 1e-30);
        if (compared == 0 || d.rel > worst.rel)
          worst = d;
        if (d.rel > tol) {
          first = d;
          throw Found{};
        }
      }
      ++compared;
    });
  } catch (const Found &) {
  }
  for (const std::string &n : notes)
    out << n << "\n";
  auto nodeText = [&](const Difference &d) {
    const Node &n = *idx.nodes[d.node].node;
    return n.name + " (kernel " + n.parsed.getStr("func_name") +
           (n.numOutputs() > 1 ? ", output " + std::to_string(d.output) : std::string()) + ")";
  };
  char tolText[32];
  std::snprintf(tolText, sizeof tolText, "%.1e", tol);
  if (!first) {
    out << "no node differs: " << plural(compared, "kernel")
        << " compared with the reference interpreter, the largest difference " << sci(worst.rel)
        << " of its output's largest magnitude"
        << (compared ? " at " + nodeText(worst) : std::string()) << " (tol " << tolText << ")\n";
    return;
  }
  const Difference &d = *first;
  char values[96];
  std::snprintf(values, sizeof values, "(built %.6g, reference %.6g)", d.built, d.reference);
  out << "first difference: " << nodeText(d) << ", after " << plural(compared, "kernel")
      << (compared == 1 ? " that agrees" : " that agree") << " (tol " << tolText
      << ")\n  max abs error " << sci(d.abs) << " at flat index " << d.index << " " << values
      << ", " << sci(d.rel) << " of the output's largest magnitude\n";
  if (std::vector<std::string> fused = fusedNodeNames(g, d.node); !fused.empty())
    out << "  the kernel computes " << joinNames(fused) << "\n";
}

void Commands::buffers(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":buffers");
  const Graph &g = e.requireGraph();
  if (!g.attr("storage_id"))
    missingAttr(g, "storage_id");
  int64_t planned = 0, naive = 0;
  const IndexedGraph &idx = g.index();
  for (const backend::StorageSlot &s : backend::storageSlots(g)) {
    planned += s.bytes;
    out << "storage " << s.id << ": " << s.bytes << " bytes " << dtypeName(s.dtype) << ", nodes "
        << s.firstUse << "-" << s.lastUse << ": " << joinNames(s.names) << "\n";
  }
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  for (uint32_t i = 0; i < idx.numEntries(); ++i)
    naive += numElements(shapes[i]) * (dtypes[i] == kFloat64 ? 8 : 4);
  out << "planned " << planned << " bytes; one buffer per entry would take " << naive << " bytes\n";
}

namespace {

// The layers a kernel call computes, as the user named them: the members of its group in the
// partition the build made, keeping those named in the graph the build started from (layout
// transforms and constants the passes made are not the user's); names that share a path
// prefix ("/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/relu/Relu") print it once.
std::string layersOf(const Graph &deploy, uint32_t call, const Graph *source) {
  std::vector<std::string> all = fusedNodeNames(deploy, call), named;
  if (all.empty())
    return "";
  for (const std::string &n : all)
    if (!source || source->index().findByName(n) >= 0)
      named.push_back(n);
  std::vector<std::string> &names = named.empty() ? all : named;
  size_t common = 0;
  if (names.size() > 1) {
    common = names[0].rfind('/') == std::string::npos ? 0 : names[0].rfind('/') + 1;
    // Back to the previous '/' until every name shares the prefix; it only shrinks.
    for (const std::string &n : names)
      while (common > 0 && n.compare(0, common, names[0], 0, common) != 0) {
        size_t prev = common >= 2 ? names[0].rfind('/', common - 2) : std::string::npos;
        common = prev == std::string::npos ? 0 : prev + 1;
      }
    if (common == 1) // a bare "/" is no scope
      common = 0;
  }
  std::string text = names[0].substr(0, common) + (common ? "{" : "");
  const size_t shown = 4;
  for (size_t i = 0; i < names.size() && i < shown; ++i)
    text += (i ? ", " : "") + names[i].substr(common);
  if (names.size() > shown)
    text += ", +" + std::to_string(names.size() - shown) + " more";
  return text + (common ? "}" : "");
}

// One kernel call's measurements.
struct ProfileRow {
  uint32_t call = 0; ///< the tvm_op node
  std::string kernel, layers;
  int dtype = kFloat32;
  double ms = 0, flops = 0;
};

} // namespace

void Commands::profile(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  const char *usage = ":profile [N] [sort=time|order] [top=K]";
  int n = 10;
  size_t top = 0; // 0: every kernel
  bool byTime = true;
  for (const std::string &w : a) {
    if (w.starts_with("sort=")) {
      if (w != "sort=time" && w != "sort=order")
        fail("sort must be time (longest first) or order (as the graph calls them), got '",
             w.substr(5), "'");
      byTime = w == "sort=time";
    } else if (w.starts_with("top=")) {
      top = static_cast<size_t>(integerAtLeast("top", w.substr(4), 1));
    } else if (w.find('=') != std::string::npos) {
      fail("unknown option '", w.substr(0, w.find('=')), "'; usage: ", usage);
    } else {
      try {
        n = std::stoi(w);
      } catch (const std::exception &) {
        n = 0;
      }
      if (n < 1 || n > 100000)
        fail("N must be a number of runs from 1 to 100000, got '", w, "'");
    }
  }
  const Graph &g = e.requireGraph();
  auto lib = backend::builtLibrary(g);
  if (!lib)
    fail("the current graph was not built; run :build first");
  backend::GraphRuntime rt(g); // params copied in once, as a deployed module would
  for (const auto &[name, t] : defaultRunInputs(e, g))
    rt.setInput(name, t);
  rt.run(); // warm-up: first touches of memory and code
  std::vector<std::vector<double>> times;
  std::vector<std::string> names;
  int done = 0;
  try {
    for (; done < n; ++done) {
      if (e.progress_) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "profiling: run %d of %d", done + 1, n);
        e.progress_(buf, static_cast<double>(done) / n);
      }
      std::vector<std::pair<std::string, double>> km = rt.run();
      times.resize(km.size());
      names.clear();
      for (size_t k = 0; k < km.size(); ++k) {
        times[k].push_back(km[k].second);
        names.push_back(km[k].first);
      }
    }
  } catch (const Interrupted &) {
    // Ctrl-C keeps the runs that finished; the run it stopped is dropped whole.
    if (done == 0)
      throw;
    clearInterrupt();
    for (auto &t : times)
      t.resize(static_cast<size_t>(done));
  }
  if (e.progress_)
    e.progress_("", 1.0);
  // The runtime calls the tvm_op nodes in node order: the k-th time is the k-th of them.
  std::vector<uint32_t> calls;
  const IndexedGraph &idx = g.index();
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (!idx.nodes[nid].node->isVariable() && idx.nodes[nid].node->op->name == "tvm_op")
      calls.push_back(nid);
  const Graph *source = e.cursor_ > 0 ? &e.history_[e.cursor_ - 1].graph : nullptr;
  const auto &dtypes = g.attr("dtype")->ints;
  std::vector<ProfileRow> rows;
  double totalMs = 0, totalFlops = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    std::vector<double> t = times[k];
    std::sort(t.begin(), t.end());
    ProfileRow r;
    r.kernel = names[k];
    r.ms = t[t.size() / 2];
    r.flops = static_cast<double>(backend::countFlops(*lib->lowered.at(names[k]).schedule));
    if (calls.size() == names.size()) {
      r.call = calls[k];
      r.layers = layersOf(g, calls[k], source);
      r.dtype = static_cast<int>(dtypes[idx.entryId(calls[k], 0)]);
    }
    totalMs += r.ms;
    totalFlops += r.flops;
    rows.push_back(r);
  }
  // The share of this machine's peak: an FMA loop timed once per process, times threads; a
  // float64 kernel's peak is half of it (half as many lanes per vector).
  double peak = backend::peakGflopsPerCore() * backend::numThreads();
  auto peakOf = [&](int dt) { return dt == kFloat64 ? peak / 2 : peak; };
  auto timing = [&](double ms, double flops, int dt) {
    double gflops = ms > 0 ? flops / (ms * 1e6) : 0.0;
    return KernelTime{ms, gflops, 100 * gflops / peakOf(dt)};
  };
  std::map<uint32_t, KernelTime> profile;
  for (const ProfileRow &r : rows)
    if (calls.size() == names.size())
      profile[r.call] = timing(r.ms, r.flops, r.dtype);
  e.history_[e.cursor_].profile = std::move(profile);
  // Timings hidden (replayed sessions), the order by time would be the one thing of them left
  // to vary from run to run: the kernels are listed in the order they run.
  if (e.hideTimings_)
    byTime = false;
  if (byTime)
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ProfileRow &x, const ProfileRow &y) { return x.ms > y.ms; });
  size_t width = 8;
  for (const ProfileRow &r : rows)
    width = std::max(width, r.kernel.size() + 2);
  auto row = [&](const std::string &name, double ms, double flops, int dt) {
    KernelTime t = timing(ms, flops, dt);
    char buf[96];
    if (e.hideTimings_)
      std::snprintf(buf, sizeof buf, "%9s %7s %9s %8s", "-", "-", "-", "-");
    else
      std::snprintf(buf, sizeof buf, "%9.4f %6.1f%% %9.2f %7.1f%%", t.ms,
                    totalMs > 0 ? 100 * ms / totalMs : 0.0, t.gflops, t.percentPeak);
    return pad(name, width) + buf;
  };
  out << pad("kernel", width) << "median ms   share   GFLOP/s   % peak   layers\n";
  bool anyDouble = false, allDouble = !rows.empty();
  double restMs = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    anyDouble |= rows[i].dtype == kFloat64;
    allDouble &= rows[i].dtype == kFloat64;
    if (top && i >= top) {
      restMs += rows[i].ms;
      continue;
    }
    out << row(rows[i].kernel, rows[i].ms, rows[i].flops, rows[i].dtype)
        << (rows[i].layers.empty() ? "" : "   " + rows[i].layers) << "\n";
  }
  if (top && rows.size() > top) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " (%.4f ms, %.1f%%)", restMs,
                  totalMs > 0 ? 100 * restMs / totalMs : 0.0);
    out << "… " << plural(rows.size() - top, "more kernel") << (e.hideTimings_ ? "" : buf) << "\n";
  }
  char f64[48] = "", buf[160];
  if (anyDouble)
    std::snprintf(f64, sizeof f64, ", %.1f float64", peak / 2);
  std::snprintf(buf, sizeof buf, "peak %.1f GFLOP/s float32%s (%d threads x %.1f, an FMA loop)",
                peak, f64, backend::numThreads(), backend::peakGflopsPerCore());
  out << row("total", totalMs, totalFlops, allDouble ? kFloat64 : kFloat32) << "\n"
      << (done < n ? cat("interrupted: ", done, " of ", n, " runs") : cat(n, " runs"))
      << ", median per kernel, " << (byTime ? "longest first" : "in the order they run") << "; "
      << (e.hideTimings_ ? "timings hidden (:set timings shown)" : buf) << "\n";
}

void Commands::exportBuild(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 1, ":export DIR");
  e.checkWrite(":export", a[0]);
  std::vector<std::string> files = backend::exportBuild(e.requireGraph(), a[0]);
  out << "exported step " << e.cursor_ << " to " << a[0] << ": " << joinNames(files) << "\n";
}

} // namespace loupe
