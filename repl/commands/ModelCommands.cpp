// ModelCommands: the commands of models from outside the session — :model (the zoo) and :load (NNVM
// JSON and ONNX files).
#include "core/Error.h"
#include "core/Json.h"
#include "core/Memory.h"
#include "frontend/onnx/OnnxImport.h"
#include "repl/TextFile.h"
#include "repl/commands/Commands.h"
#include "repl/models/Zoo.h"

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// The model topic's command handlers (models from the zoo and from files): a member of Commands,
/// so they reach the engine as Commands does.
struct Commands::ModelTopic {
  static void load(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void model(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

namespace {

const char *kModelUsage =
    ":model NAME [batch=N] [shape=(C, H, W)] [classes=N] [dtype=TYPE] [seed=N]";

} // namespace

void Commands::ModelTopic::model(Engine &e, const Args &, const std::string &rest,
                                 std::ostream &out) {
  Args a = splitKeepingTuples(rest);
  if (a.empty()) {
    for (const models::Network &n : models::zoo())
      out << pad(n.name, 16) << n.summary << "\n";
    return;
  }
  const models::Network *net = models::findNetwork(a[0]);
  if (!net) {
    std::vector<std::string> names;
    for (const models::Network &n : models::zoo())
      names.push_back(n.name);
    fail("unknown model '", a[0], "'", didYouMean(a[0], names), "; models: ", joinNames(names));
  }
  models::Options o;
  o.sample = net->sample;
  o.classes = net->classes;
  unsigned seed = 0;
  for (size_t i = 1; i < a.size(); ++i) {
    size_t eq = a[i].find('=');
    if (eq == std::string::npos)
      fail("expected KEY=VALUE, got '", a[i], "'; usage: ", kModelUsage);
    std::string k = a[i].substr(0, eq), v = a[i].substr(eq + 1);
    if (k == "batch") {
      o.batch = integerAtLeast(k, v, 1);
    } else if (k == "classes") {
      if (!net->classes)
        fail(net->name, " is not a classifier; it has no classes option");
      o.classes = integerAtLeast(k, v, 1);
    } else if (k == "seed") {
      seed = static_cast<unsigned>(integerAtLeast(k, v, 0));
    } else if (k == "dtype") {
      auto dt = dtypeFromName(v);
      if (!dt || (*dt != 0 && *dt != 1))
        fail("dtype must be float32 or float64, got '", v, "'");
      o.dtype = *dt;
    } else if (k == "shape") {
      Shape s = parseShape(v);
      if (s.size() != net->sample.size())
        fail(net->name, " takes a ", net->sample.size(), "-value sample shape such as ",
             shapeToTuple(net->sample), ", got ", v);
      for (int64_t d : s)
        if (d <= 0)
          fail("shape must have positive dimensions, got ", v);
      o.sample = s;
    } else {
      fail("unknown option '", k, "'; usage: ", kModelUsage);
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  // The network is built in an engine of its own: its symbols and name counters stay
  // out of the user's session.
  // (A new engine clears the process-wide memory limit, which this command must keep.)
  const uint64_t limit = memoryLimitBytes();
  Engine sub;
  setMemoryLimit(limit);
  std::string program = net->program(o) + ":graph out";
  std::istringstream lines(program);
  std::string line;
  while (std::getline(lines, line)) {
    std::ostringstream sink, err;
    if (!sub.execute(line, sink, err))
      fail("model ", net->name, ": ", err.str().substr(0, err.str().find('\n')));
  }
  Graph g = sub.current()->graph;
  Graph inferred = applyPasses(g, {"InferShape"});
  std::map<std::string, Tensor> params = models::initParams(inferred, o.dtype, seed);
  int64_t values = 0;
  for (const auto &[n, t] : params)
    values += static_cast<int64_t>(t.data.size());
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::string label = "model " + net->name + " batch=" + std::to_string(o.batch);
  e.pushStep(g, label, ms, true);
  e.modelParams_ = storeAll(std::move(params));
  e.modelDTypes_.clear();
  out << "step " << e.cursor_ << ": " << label << " (" << graphSize(g.index()) << "; "
      << plural(e.modelParams_.size(), "param") << " holding " << values << " values)\n";
}

void Commands::ModelTopic::load(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 64, ":load FILE [DIM=N …]");
  if (a[0].ends_with(".onnx")) {
    frontend::DimSizes dims;
    for (size_t i = 1; i < a.size(); ++i) {
      size_t eq = a[i].find('=');
      if (eq == std::string::npos || eq == 0)
        fail("expected DIM=N (a symbolic dimension's size), got '", a[i], "'");
      dims[a[i].substr(0, eq)] = integerAtLeast(a[i].substr(0, eq), a[i].substr(eq + 1), 1);
    }
    frontend::OnnxModel m = frontend::importOnnx(a[0], dims);
    e.pushStep(m.graph, "load " + a[0], 0, true);
    e.modelParams_ = std::move(m.params);
    e.modelDTypes_ = std::move(m.inputDTypes);
    out << "step " << e.cursor_ << ": load " << a[0] << " (" << graphSize(m.graph.index())
        << "; opset " << m.opset << "; " << plural(e.modelParams_.size(), "param") << ")\n";
    for (size_t k : m.scalarOutputs)
      out << "note: output " << k
          << " is a scalar (rank 0) in ONNX; it is computed here as shape (1,), as NNVM "
             "reduces to a scalar\n";
    return;
  }
  if (a.size() > 1)
    fail("only an ONNX model takes dimension sizes; ", a[0], " is a graph JSON file");
  Graph g = loadJSON(readTextFile(a[0]), a[0]);
  const IndexedGraph &idx = g.index();
  e.pushStep(g, "load " + a[0], 0, true);
  out << "step " << e.cursor_ << ": load " << a[0] << " (" << graphSize(idx) << ")\n";
}

std::vector<Commands::Listed> Commands::modelCommands() {
  using T = ModelTopic;
  return {
      {"ops",
       {"load", "FILE [DIM=N …]",
        "loads an NNVM graph JSON file, or an ONNX model (.onnx, its initializers "
        "as params; DIM=N sizes its inputs' symbolic dimensions), as a new step",
        T::load}},
      {"export",
       {"model", "[NAME [batch=N] [shape=(C, H, W)] [classes=N] [dtype=TYPE] [seed=N]]",
        "a network of the built-in zoo as a new graph, with params :build binds; no NAME lists "
        "them",
        T::model}},
  };
}

} // namespace loupe
