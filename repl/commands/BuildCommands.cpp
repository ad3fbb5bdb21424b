// BuildCommands: the commands of building and running — :build, :run, :buffers, :profile, :export.
#include "backend/Build.h"
#include "backend/Export.h"
#include "backend/GraphExecutor.h"
#include "backend/Peak.h"
#include "backend/Runtime.h"
#include "core/Error.h"
#include "core/Interpreter.h"
#include "core/Npy.h"
#include "core/Printer.h"
#include "frontend/onnx/OnnxImport.h"
#include "repl/commands/Commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
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
    "[dtype NAME=TYPE …] [param NAME=random|zeros|ones|FILE.npy …]";

namespace {

std::pair<std::string, std::string> keyValue(const std::string &word, const std::string &usage) {
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
    fail("expected NAME=VALUE, got '", word, "'; usage: ", usage);
  return {word.substr(0, eq), word.substr(eq + 1)};
}

const char *kRunUsage = ":run [NAME=random|zeros|ones|FILE.npy|FILE.pb …] [seed=N]";

// True for the fills named in place of a file: random, zeros, ones.
bool namesValues(const std::string &how) {
  return how == "random" || how == "zeros" || how == "ones";
}

// A tensor file: ONNX's TensorProto for `.pb`, else NumPy's .npy.
Tensor readTensorFile(const std::string &path) {
  return path.ends_with(".pb") ? frontend::readTensorProto(path) : readNpy(path);
}

// A tensor of `shape` and `dt` filled as `how` says: random (uniform in [-1, 1) from `rng`),
// zeros, ones, or a .npy/.pb file whose shape must match (values rounded to `dt`); `file` is
// that file when the caller has read it already.
Tensor fillTensor(const std::string &how, const Shape &shape, int dt, std::mt19937 &rng,
                  const std::string &what, const Tensor *file = nullptr) {
  requireTensorMemory(what, shape, dt);
  Tensor t(shape, dt);
  if (how == "random") {
    std::uniform_real_distribution<double> u(-1, 1);
    for (double &x : t.data)
      x = roundToDType(u(rng), dt);
  } else if (namesValues(how)) {
    std::fill(t.data.begin(), t.data.end(), how == "ones" ? 1.0 : 0.0);
  } else {
    Tensor f = file ? *file : readTensorFile(how);
    // A scalar (an ONNX rank-0 TensorProto) is the element of a one-element (1,) input, the
    // form a rank-0 graph input takes here.
    if (f.shape.empty() && shape == Shape{1})
      f.shape = shape;
    if (f.shape != shape)
      fail(how, " holds shape ", shapeToList(f.shape), " but ", what, " has shape ",
           shapeToList(shape));
    t.data = f.data;
    for (double &x : t.data)
      x = roundToDType(x, dt);
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
backend::BuildOptions parseBuild(const std::string &rest, int optLevel, const Graph &g) {
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
    } else if (k == "opt_level") {
      if (v.size() != 1 || v[0] < '0' || v[0] > '3')
        fail("opt_level must be 0, 1, 2 or 3, got '", v, "'");
      o.optLevel = v[0] - '0';
    } else if (k == "seed") {
      seed = parseSeed(v);
    } else if (mode == Param_) {
      params[k] = v;
    } else if (mode == Shape_) {
      o.shapes[k] = parseIntTuple(v);
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
    return sh.empty() ? std::nullopt : std::optional<Shape>(sh);
  };
  for (const auto &[name, how] : params) {
    int nid = idx.findByName(name);
    if (nid < 0 || !idx.nodes[nid].node->isVariable())
      fail("build: the graph has no input '", name, "' to bind a param to");
    const Node &v = *idx.nodes[nid].node;
    std::optional<Shape> shape;
    if (o.shapes.count(name))
      shape = o.shapes[name];
    for (const auto &[key, val] : v.attrs)
      if (key == "shape" && !shape)
        shape = parseIntTuple(val);
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

// The inputs of a run: every variable as the words say, else its bound param, else random
// (uniform in [-1, 1) from `seed`).
std::map<std::string, Tensor> runInputs(const Graph &g, const std::string &rest) {
  std::map<std::string, std::string> how;
  unsigned seed = 0;
  for (const std::string &w : splitKeepingTuples(rest)) {
    auto [k, v] = keyValue(w, kRunUsage);
    if (k == "seed")
      seed = parseSeed(v);
    else
      how[k] = v;
  }
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  for (const auto &[name, v] : how)
    if (idx.findByName(name) < 0 || !idx.nodes[idx.findByName(name)].node->isVariable())
      fail("run: the graph has no input '", name, "'");
  auto lib = backend::builtLibrary(g);
  std::mt19937 rng(seed);
  std::map<std::string, Tensor> in;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    uint32_t e = idx.entryId(nid, 0);
    if (!how.count(name) && lib && lib->params.count(name)) {
      in[name] = lib->params.at(name);
      continue;
    }
    in[name] = fillTensor(how.count(name) ? how[name] : "random", shapes[e],
                          static_cast<int>(dtypes[e]), rng, "input '" + name + "'");
  }
  return in;
}

std::vector<std::string> paramNames(const Graph &g) {
  std::vector<std::string> names;
  if (auto lib = backend::builtLibrary(g))
    for (const auto &[n, t] : lib->params)
      names.push_back(n);
  return names;
}

} // namespace

void Commands::build(Engine &e, const Args &, const std::string &rest, std::ostream &out) {
  const Graph before = e.requireGraph();
  if (backend::builtLibrary(before))
    fail("step ", e.cursor_,
         " is already a built deploy graph; :undo to the graph it was "
         "built from and :build that");
  backend::BuildOptions o = parseBuild(rest, e.passContext_.optLevel, before);
  // The last :model's params, for the variables this graph has and the command left.
  const IndexedGraph &bidx = before.index();
  for (const auto &[name, t] : e.modelParams_)
    if (!o.params.count(name) && bidx.findByName(name) >= 0 &&
        bidx.nodes[bidx.findByName(name)].node->isVariable())
      o.params[name] = t;
  // …and the last ONNX :load's input dtypes, for the inputs the command did not type.
  for (const auto &[name, dt] : e.modelDTypes_)
    if (!o.dtypes.count(name) && bidx.findByName(name) >= 0)
      o.dtypes[name] = dt;
  bool trace = std::any_of(e.passContext_.instruments.begin(), e.passContext_.instruments.end(),
                           [](const auto &i) { return i->name() == "trace"; });
  o.cache = e.kernelCache_;
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
  std::map<std::string, Tensor> in = runInputs(g, rest);
  backend::RunResult r = backend::runDeployGraph(g, in);
  std::vector<Tensor> ref = interpret(g, in);
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    const Tensor &t = r.outputs[k];
    double sum = 0, absErr = 0, relErr = 0;
    for (size_t i = 0; i < t.data.size(); ++i) {
      sum += t.data[i];
      double d = std::fabs(t.data[i] - ref[k].data[i]);
      absErr = std::max(absErr, d);
      relErr = std::max(relErr, d / std::max(std::fabs(ref[k].data[i]), 1e-30));
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", sum);
    out << "output " << k << ": shape " << shapeToTuple(t.shape) << " " << dtypeName(t.dtype)
        << "\n  values " << someValues(t, 6) << "\n  sum " << buf
        << "\n  vs reference interpreter: max abs error " << sci(absErr) << ", max rel error "
        << sci(relErr) << "\n";
  }
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

void Commands::profile(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 1, ":profile [N]");
  int n = 10;
  if (a.size() == 1) {
    try {
      n = std::stoi(a[0]);
    } catch (const std::exception &) {
      n = 0;
    }
    if (n < 1 || n > 100000)
      fail("N must be a number of runs from 1 to 100000, got '", a[0], "'");
  }
  const Graph &g = e.requireGraph();
  auto lib = backend::builtLibrary(g);
  if (!lib)
    fail("the current graph was not built; run :build first");
  backend::GraphRuntime rt(g); // params copied in once, as a deployed module would
  for (const auto &[name, t] : runInputs(g, ""))
    rt.setInput(name, t);
  rt.run(); // warm-up: first touches of memory and code
  std::vector<std::vector<double>> times;
  std::vector<std::string> names;
  for (int r = 0; r < n; ++r) {
    std::vector<std::pair<std::string, double>> km = rt.run();
    times.resize(km.size());
    names.clear();
    for (size_t k = 0; k < km.size(); ++k) {
      times[k].push_back(km[k].second);
      names.push_back(km[k].first);
    }
  }
  double totalMs = 0, totalFlops = 0;
  size_t width = 8;
  for (const std::string &nm : names)
    width = std::max(width, nm.size() + 2);
  // The share of this machine's peak: an FMA loop timed once per process, times threads.
  double peak = backend::peakGflopsPerCore() * backend::numThreads();
  auto timing = [&](double ms, double flops) {
    double gflops = ms > 0 ? flops / (ms * 1e6) : 0.0;
    return KernelTime{ms, gflops, 100 * gflops / peak};
  };
  auto row = [](const KernelTime &t) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%9.4f %9.2f %7.1f%%", t.ms, t.gflops, t.percentPeak);
    return std::string(buf);
  };
  out << pad("kernel", width) << "median ms   GFLOP/s   % peak\n";
  // The runtime calls the tvm_op nodes in node order: the k-th time is the k-th of them.
  std::vector<uint32_t> calls;
  const IndexedGraph &idx = g.index();
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (!idx.nodes[nid].node->isVariable() && idx.nodes[nid].node->op->name == "tvm_op")
      calls.push_back(nid);
  std::map<uint32_t, KernelTime> profile;
  for (size_t k = 0; k < names.size(); ++k) {
    std::vector<double> t = times[k];
    std::sort(t.begin(), t.end());
    double med = t[t.size() / 2];
    double flops = static_cast<double>(backend::countFlops(*lib->lowered.at(names[k]).schedule));
    totalMs += med;
    totalFlops += flops;
    KernelTime kt = timing(med, flops);
    out << pad(names[k], width) << row(kt) << "\n";
    if (calls.size() == names.size())
      profile[calls[k]] = kt;
  }
  e.history_[e.cursor_].profile = std::move(profile);
  char buf[96];
  std::snprintf(buf, sizeof buf, "peak %.1f GFLOP/s (%d threads x %.1f, an FMA loop)", peak,
                backend::numThreads(), backend::peakGflopsPerCore());
  out << pad("total", width) << row(timing(totalMs, totalFlops)) << "\n"
      << n << " runs, median per kernel; " << buf << "\n";
}

void Commands::exportBuild(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 1, ":export DIR");
  std::vector<std::string> files = backend::exportBuild(e.requireGraph(), a[0]);
  out << "exported step " << e.cursor_ << " to " << a[0] << ": " << joinNames(files) << "\n";
}

} // namespace loupe
