// RunCommands: the commands that run a built step — :run (its outputs, checked against the
// reference interpreter or given files) and :bisect (the first kernel that disagrees).
#include "backend/BuiltLibrary.h"
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
#include "repl/commands/RunInputs.h"

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

std::map<std::string, Tensor> Commands::defaultRunInputs(const Engine &e, const Graph &g) {
  return runInputs(e, g, RunWords{});
}

namespace {

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

} // namespace

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
    out << "output " << k << ": shape " << shapeToTuple(t.shape) << " " << dtypeName(t.dtype)
        << "\n  values " << someValues(t, 6) << "\n  sum " << significant(sum) << "\n";
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
    for (size_t k = 0; k < r.outputs.size(); ++k)
      if (r.outputs[k].dtype == kBFloat16)
        out << "note: " << files[k] << " holds bfloat16 values as float32 (exactly; .npy has no "
            << "bfloat16)\n";
  }
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

} // namespace loupe
