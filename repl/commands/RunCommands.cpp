// RunCommands: the commands that run a built step — :run (its outputs, checked against the
// reference interpreter or given files) and :bisect (the kernel a difference comes from).
#include "backend/BuiltLibrary.h"
#include "backend/Export.h"
#include "backend/GraphExecutor.h"
#include "backend/Peak.h"
#include "backend/Runtime.h"
#include "core/Error.h"
#include "core/Interpreter.h"
#include "core/Interrupt.h"
#include "core/Npy.h"
#include "core/Npz.h"
#include "core/Printer.h"
#include "core/TensorDiff.h"
#include "core/Text.h"
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

/// The run topic's command handlers (running and bisecting): a member of Commands, so
/// they reach the engine as Commands does.
struct Commands::RunTopic {
  static void run(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void bisect(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

std::map<std::string, Tensor> Commands::defaultRunInputs(const Engine &e, const Graph &g) {
  return runInputs(e, g, RunWords{});
}

namespace {

// What `compare=` gives each output: the file (or FILE.npz:KEY) it came from and the tensor.
struct Expected {
  std::string label;
  Tensor tensor;
};

// The tensors `compare=` names, one per output, read and checked before the run: a .npy (or
// ONNX .pb) file for a graph of one output; a .npz with an array per output, by name (:outputs
// names them) or, when the names differ and the counts agree, by position; or a folder with
// NAME.npy per output (by position when both have one). Matching by position adds a note.
std::vector<Expected> expectedOutputs(const Engine &e, const Graph &g, const std::string &where,
                                      std::vector<std::string> &notes) {
  std::vector<Commands::Port> outs = Commands::graphOutputs(e, g);
  std::vector<Expected> expected;
  auto byPosition = [&](const std::vector<std::string> &theirs) {
    std::string pairs;
    for (size_t k = 0; k < outs.size(); ++k)
      pairs += (k ? ", " : "") + outs[k].name + " with " + theirs[k];
    notes.push_back("note: compare: " + where + " names its outputs otherwise; matched by " +
                    "position: " + pairs);
  };
  if (where.ends_with(".npz")) {
    std::vector<std::pair<std::string, Tensor>> arrays = readNpz(where);
    std::map<std::string, size_t> byName;
    std::vector<std::string> keys;
    for (size_t i = 0; i < arrays.size(); ++i) {
      byName[arrays[i].first] = i;
      keys.push_back(arrays[i].first);
    }
    bool named = std::all_of(outs.begin(), outs.end(), [&](const Commands::Port &p) {
      return byName.count(npyFileStem(p.name));
    });
    if (!named && arrays.size() != outs.size())
      fail("compare: ", where, " holds ", plural(arrays.size(), "array"), " (",
           keys.empty() ? std::string("none") : joinNames(keys), ") and the graph ",
           plural(outs.size(), "output"), " (", joinNames([&] {
             std::vector<std::string> n;
             for (const auto &p : outs)
               n.push_back(p.name);
             return n;
           }()),
           "): neither the names nor the count agree");
    if (!named)
      byPosition(keys);
    for (size_t k = 0; k < outs.size(); ++k) {
      size_t i = named ? byName.at(npyFileStem(outs[k].name)) : k;
      expected.push_back({where + ":" + arrays[i].first, std::move(arrays[i].second)});
    }
  } else if (where.ends_with(".npy") || where.ends_with(".pb")) {
    if (outs.size() != 1)
      fail("compare=", where, ": the graph has ", outs.size(),
           " outputs; give a .npz or a folder with one NAME.npy per output (:outputs names "
           "them)");
    expected.push_back({where, readTensorFile(where)});
  } else {
    if (!std::filesystem::is_directory(where))
      fail("compare=", where, ": not a .npy, .npz or .pb file, nor a folder of .npy files");
    std::vector<std::string> files;
    for (const auto &entry : std::filesystem::directory_iterator(where))
      if (entry.path().extension() == ".npy")
        files.push_back(entry.path().filename().string());
    std::sort(files.begin(), files.end());
    bool named = std::all_of(outs.begin(), outs.end(), [&](const Commands::Port &p) {
      return std::find(files.begin(), files.end(), npyFileStem(p.name) + ".npy") != files.end();
    });
    if (!named && !(outs.size() == 1 && files.size() == 1)) {
      size_t k = 0;
      while (std::find(files.begin(), files.end(), npyFileStem(outs[k].name) + ".npy") !=
             files.end())
        ++k;
      fail("compare: ", where, " has no ", npyFileStem(outs[k].name), ".npy for output ", k, " (",
           outs[k].name,
           "); save=FILE.npz keeps outputs in order, for models that name them "
           "otherwise");
    }
    if (!named)
      byPosition(files);
    for (size_t k = 0; k < outs.size(); ++k) {
      std::string file = named ? npyFileStem(outs[k].name) + ".npy" : files[k];
      std::string path = (std::filesystem::path(where) / file).string();
      expected.push_back({path, readNpy(path)});
    }
  }
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  for (size_t k = 0; k < outs.size(); ++k) {
    const Shape &want = shapes[idx.entryId(idx.heads[k])];
    if (expected[k].tensor.shape != want)
      fail("compare: ", expected[k].label, " holds shape ", shapeToList(expected[k].tensor.shape),
           " but output ", k, " (", outs[k].name, ") has shape ", shapeToList(want));
  }
  return expected;
}

// A flat index as the tensor's index tuple: 281 of a (1, 1000) tensor is (0, 281).
std::string indexTuple(size_t flat, const Shape &shape) {
  std::vector<int64_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = static_cast<int64_t>(flat % static_cast<size_t>(shape[d]));
    flat /= static_cast<size_t>(shape[d]);
  }
  return shapeToTuple(Shape(at.begin(), at.end()));
}

// compare='s lines: the share within allclose's tolerance, the largest errors (relative only
// where the expected value is above atol), and the worst misses with their indices.
std::string closeLines(const std::string &label, const Tensor &got, const Tensor &want, double rtol,
                       double atol) {
  CloseReport r = compareClose(got, want, rtol, atol);
  char share[32];
  std::snprintf(
      share, sizeof share, "%g%%",
      r.total ? std::floor(1e4 * static_cast<double>(r.within) / static_cast<double>(r.total)) / 100
              : 100.0);
  std::string s = "  vs " + label + ": " + std::to_string(r.within) + " of " +
                  std::to_string(r.total) + " within atol " + significant(atol) + " + rtol " +
                  significant(rtol) + "·|expected| (" + share + "), max abs error " +
                  sci(r.maxAbs) + ", max rel error " +
                  (r.relCounted ? sci(r.maxRel) + " where |expected| > atol"
                                : std::string("not taken (no |expected| above atol)")) +
                  "\n";
  if (!r.worst.empty()) {
    s += "    worst:";
    for (size_t i = 0; i < r.worst.size(); ++i)
      s += (i ? ", " : " ") + indexTuple(r.worst[i].index, got.shape) + " " +
           significant(r.worst[i].got) + " vs " + significant(r.worst[i].expected);
    s += "\n";
  }
  return s;
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

void Commands::RunTopic::run(Engine &e, const Args &, const std::string &rest, std::ostream &out) {
  RunWords w = parseRunWords(rest);
  const Graph &g = Commands::currentVariant(e, w, out);
  if (!backend::builtLibrary(g))
    requireBuilt(g);
  if (!w.save.empty())
    e.checkWrite(":run save=", w.save);
  std::vector<std::string> notes;
  std::map<std::string, Tensor> in = runInputs(e, g, w, &notes);
  // Everything the options read is read before the run, so a bad file fails the command whole.
  std::vector<Expected> expected;
  if (!w.compare.empty())
    expected = expectedOutputs(e, g, w.compare, notes);
  else if (w.toleranceGiven)
    fail("rtol= and atol= are compare='s tolerance; give compare=FILE|DIR");
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
    if (!expected.empty())
      out << closeLines(expected[k].label, t, expected[k].tensor, w.rtol, w.atol);
    if (w.top)
      out << "  top " << std::min(w.top, t.data.size()) << ": " << topValues(t, w.top) << "\n";
  }
  if (!w.save.empty()) {
    std::vector<Commands::Port> outs = graphOutputs(e, g);
    std::vector<std::string> files;
    if (w.save.ends_with(".npz")) {
      // One archive, the outputs in order: what compare= pairs by position when another model
      // names its outputs otherwise.
      std::vector<std::pair<std::string, Tensor>> arrays;
      for (size_t k = 0; k < r.outputs.size(); ++k) {
        arrays.emplace_back(outs[k].name, r.outputs[k]);
        files.push_back(npyFileStem(outs[k].name));
      }
      writeNpz(w.save, arrays);
    } else {
      std::error_code ec;
      std::filesystem::create_directories(w.save, ec);
      if (ec || !std::filesystem::is_directory(w.save))
        fail("save: cannot make folder ", w.save, (ec ? ": " + ec.message() : std::string()));
      for (size_t k = 0; k < r.outputs.size(); ++k) {
        files.push_back(npyFileStem(outs[k].name) + ".npy");
        writeNpy((std::filesystem::path(w.save) / files.back()).string(), r.outputs[k]);
      }
    }
    out << "saved " << plural(files.size(), "output") << " in " << w.save << ": "
        << joinNames(files) << "\n";
    for (size_t k = 0; k < r.outputs.size(); ++k)
      if (r.outputs[k].dtype == kBFloat16)
        out << "note: " << files[k] << " holds bfloat16 values as float32 (exactly; .npy has no "
            << "bfloat16)\n";
  }
}

namespace {

// How far a kernel's output is from the reference's, for one output: the largest absolute
// difference, where, and its share of the output's largest magnitude.
struct Difference {
  uint32_t node = 0, output = 0;
  size_t index = 0;
  double built = 0, reference = 0, abs = 0, rel = 0;
};

Difference differenceOf(uint32_t node, uint32_t output, const Tensor &got, const Tensor &ref) {
  Difference d{node, output};
  double scale = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    double r = ref.data[i], b = got.data[i];
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
  return d;
}

// The worst of a kernel's outputs.
Difference worstOf(uint32_t node, const std::vector<Tensor> &got,
                   const std::vector<const Tensor *> &ref) {
  Difference worst{node};
  for (uint32_t k = 0; k < got.size(); ++k) {
    Difference d = differenceOf(node, k, got[k], *ref[k]);
    if (k == 0 || d.rel > worst.rel)
      worst = d;
  }
  return worst;
}

double largestMagnitude(const Tensor &t) {
  double m = 0;
  for (double v : t.data)
    m = std::max(m, std::fabs(v));
  return m;
}

} // namespace

void Commands::RunTopic::bisect(Engine &e, const Args &, const std::string &rest,
                                std::ostream &out) {
  const Graph &g = e.requireGraph();
  if (!backend::builtLibrary(g))
    requireBuilt(g);
  // tol=X, mode=local|forward, and the inputs as :run takes them.
  double tol = 1e-4;
  bool forward = false;
  std::string runWords;
  for (const std::string &w : splitKeepingTuples(rest)) {
    if (w.starts_with("mode=")) {
      if (w != "mode=local" && w != "mode=forward")
        fail("mode must be local (each kernel on the reference's inputs) or forward (the built "
             "graph run in turn), got '",
             w.substr(5), "'");
      forward = w == "mode=forward";
      continue;
    }
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
  if (!w.save.empty() || !w.compare.empty() || w.top || !w.check || w.toleranceGiven)
    fail("bisect takes inputs, seed=, tol= and mode=; save=, compare=, top= and check= are "
         ":run's");
  std::vector<std::string> notes;
  std::map<std::string, Tensor> in = runInputs(e, g, w, &notes);
  const IndexedGraph &idx = g.index();
  auto lib = backend::builtLibrary(g);
  // Two runtimes beside the reference interpreter, which walks the deploy graph in node order:
  // `chained` runs the kernels in turn, each on what the kernels before it made (a difference
  // there may be inherited); `alone` runs each kernel on the reference's values of its inputs,
  // so that a difference there is the kernel's own. Each output is compared as soon as both
  // have made it (a later kernel may reuse its storage).
  backend::GraphRuntime chained(g);
  std::unique_ptr<backend::GraphRuntime> alone;
  if (!forward)
    alone = std::make_unique<backend::GraphRuntime>(g);
  for (const auto &[name, t] : in) {
    chained.setInput(name, t);
    if (alone)
      alone->setInput(name, t);
  }
  struct Found {};
  std::optional<Difference> firstChained, firstAlone;
  Difference worst;
  std::map<uint32_t, Difference> own;  // each kernel's own difference, by node
  std::map<uint32_t, Tensor> refValue; // the reference's value of each entry a kernel reads
  size_t next = 0, compared = 0;
  try {
    referenceRun(g, in, [&](uint32_t nid, const std::vector<const Tensor *> &ref) {
      if (alone)
        for (uint32_t k = 0; k < ref.size(); ++k)
          refValue[idx.entryId(nid, k)] = *ref[k];
      while (next < chained.numCalls() && chained.callNode(next) <= nid)
        chained.runCall(next++);
      if (next == 0 || chained.callNode(next - 1) != nid)
        return;
      Difference d = worstOf(nid, chained.callOutputs(next - 1), ref);
      if (forward) {
        if (compared == 0 || d.rel > worst.rel)
          worst = d;
        if (d.rel > tol) {
          firstChained = d;
          throw Found{};
        }
        ++compared;
        return;
      }
      if (d.rel > tol && !firstChained)
        firstChained = d;
      std::vector<const Tensor *> inputs;
      for (const auto &entry : idx.nodes[nid].inputs) {
        auto v = refValue.find(idx.entryId(entry)); // none for a graph input: already set
        inputs.push_back(v != refValue.end() ? &v->second : nullptr);
      }
      alone->setCallInputs(next - 1, inputs);
      alone->runCall(next - 1);
      Difference mine = worstOf(nid, alone->callOutputs(next - 1), ref);
      own[nid] = mine;
      if (compared == 0 || mine.rel > worst.rel)
        worst = mine;
      if (mine.rel > tol) {
        firstAlone = mine;
        throw Found{};
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
  auto errorLine = [&](const Difference &d) {
    // Six digits, more where six print the two the same.
    char values[96];
    for (int digits = 6; digits <= 17; ++digits) {
      std::snprintf(values, sizeof values, "(built %.*g, reference %.*g)", digits, d.built, digits,
                    d.reference);
      char b[40], r[40];
      std::snprintf(b, sizeof b, "%.*g", digits, d.built);
      std::snprintf(r, sizeof r, "%.*g", digits, d.reference);
      if (std::string(b) != r || d.built == d.reference)
        break;
    }
    return "  max abs error " + sci(d.abs) + " at flat index " + std::to_string(d.index) + " " +
           values + ", " + sci(d.rel) + " of the output's largest magnitude\n";
  };
  auto computes = [&](const Difference &d) {
    if (std::vector<std::string> fused = fusedNodeNames(g, d.node); !fused.empty())
      out << "  the kernel computes " << joinNames(fused) << "\n";
  };
  // What a kernel read (the reference's values) and whether its own difference is the size
  // float rounding makes: the unit roundoff of its output's dtype times the terms its longest
  // sum adds, plus a few for the element-wise operations around it (Higham's γ_n bound,
  // relative to the output's largest magnitude; sums that cancel can exceed it).
  auto explainOwn = [&](const Difference &d) {
    const auto &dtypes = g.attr("dtype")->ints;
    const auto &shapes = g.attr("shape")->shapes;
    std::string inputs;
    for (const auto &entry : idx.nodes[d.node].inputs) {
      uint32_t eid = idx.entryId(entry);
      const Node &src = *idx.nodes[entry.nodeId].node;
      std::string name = src.name;
      if (src.numOutputs() > 1)
        name += "." + std::to_string(entry.index);
      inputs += (inputs.empty() ? "" : ", ") + name + " " + shapeToTuple(shapes[eid]);
      if (auto v = refValue.find(eid); v != refValue.end())
        inputs += " max |x| " + significant(largestMagnitude(v->second));
      else if (auto i = in.find(src.name); i != in.end())
        inputs += " max |x| " + significant(largestMagnitude(i->second));
    }
    out << "  its inputs (the reference's values): " << inputs << "\n";
    int dtype = static_cast<int>(dtypes[idx.entryId(d.node, d.output)]);
    double u = unitRoundoff(dtype);
    if (u == 0) {
      out << "  not rounding: the output is " << dtypeName(dtype) << ", which does not round\n";
      return;
    }
    const std::string &func = idx.nodes[d.node].node->parsed.getStr("func_name");
    int64_t terms = 1;
    if (auto f = lib->lowered.find(func); f != lib->lowered.end() && f->second.schedule)
      terms = backend::longestReduction(*f->second.schedule);
    double bound = static_cast<double>(terms + 10) * u;
    std::string why =
        terms > 1 ? "sums of " + std::to_string(terms) + " terms" : std::string("no sums");
    if (d.rel <= bound)
      out << "  float rounding: within " << dtypeName(dtype) << "'s (n + 10)·u = " << sci(bound)
          << " (" << why << ", u = " << sci(u) << ")\n";
    else
      out << "  more than float rounding: " << dtypeName(dtype) << "'s (n + 10)·u is " << sci(bound)
          << " (" << why << ", u = " << sci(u) << "); a wrong kernel, or sums that cancel\n";
  };
  if (forward) {
    if (!firstChained) {
      out << "no node differs: " << plural(compared, "kernel")
          << " compared with the reference interpreter, the largest difference " << sci(worst.rel)
          << " of its output's largest magnitude"
          << (compared ? " at " + nodeText(worst) : std::string()) << " (tol " << tolText << ")\n";
      return;
    }
    const Difference &d = *firstChained;
    out << "first difference: " << nodeText(d) << ", after " << plural(compared, "kernel")
        << (compared == 1 ? " that agrees" : " that agree") << " (tol " << tolText << ")\n"
        << errorLine(d);
    computes(d);
    return;
  }
  if (firstAlone) {
    const Difference &d = *firstAlone;
    out << "first difference: " << nodeText(d)
        << ", its own (run on the reference interpreter's inputs), after "
        << plural(compared, "kernel") << (compared == 1 ? " that agrees" : " that agree")
        << " (tol " << tolText << ")\n"
        << errorLine(d);
    explainOwn(d);
    computes(d);
    return;
  }
  if (firstChained) {
    // No kernel is off by more than tol alone, yet run in turn the outputs drift past it: the
    // kernels after some small difference amplify it. Blame the largest difference of its own
    // among the kernels the first drifting one depends on.
    std::vector<bool> upstream(idx.numNodes());
    upstream[firstChained->node] = true;
    for (uint32_t nid = idx.numNodes(); nid-- > 0;)
      if (upstream[nid])
        for (const auto &entry : idx.nodes[nid].inputs)
          upstream[entry.nodeId] = true;
    std::optional<Difference> source;
    for (const auto &[nid, d] : own)
      if (upstream[nid] && (!source || d.rel > source->rel))
        source = d;
    const Difference &d = *source;
    out << "source of the difference: " << nodeText(d) << ", " << sci(d.rel)
        << " of its output's largest magnitude on the reference interpreter's inputs, which "
        << (firstChained->node == d.node ? std::string("the kernels after it carry")
                                         : nodeText(*firstChained) + " amplifies")
        << " to " << sci(firstChained->rel) << " when the kernels run in turn (tol " << tolText
        << "; no kernel differs by more alone)\n"
        << errorLine(d);
    explainOwn(d);
    computes(d);
    return;
  }
  out << "no node differs: " << plural(compared, "kernel")
      << " compared with the reference interpreter, each alone and in turn; the largest "
         "difference of a kernel's own "
      << sci(worst.rel) << " of its output's largest magnitude"
      << (compared ? " at " + nodeText(worst) : std::string()) << " (tol " << tolText << ")\n";
}

std::vector<Commands::Listed> Commands::runCommands() {
  using T = RunTopic;
  return {
      {"build",
       {"run",
        "[NAME=random|zeros|ones|NUMBER|FILE.npy|FILE.npz[:KEY]|FILE.pb|FILE.bin …] [seed=N] "
        "[save=DIR|FILE.npz] [compare=FILE.npy|FILE.npz|DIR] [rtol=X] [atol=X] [top=K] "
        "[check=on|off]",
        "runs the built graph; per output its shape, dtype, values, sum and the error against the "
        "reference interpreter (check=off skips it), against expected outputs (compare=: by "
        "name, else by position; allclose's share within atol + rtol·|expected|, NumPy's "
        "defaults, and the worst elements), its K largest values (top=); save= writes each "
        "output as DIR/NAME.npy or into one .npz; inputs from .npy, .npz (the array named as the "
        "input), ONNX .pb or raw .bin files",
        T::run}},
      {"run",
       {"bisect",
        "[NAME=random|zeros|ones|NUMBER|FILE.npy …] [seed=N] [tol=X] [mode=local|forward]",
        "names the kernel a difference from the reference interpreter comes from: each kernel runs "
        "on the reference's inputs (mode=forward: the built graph in turn) and the first whose "
        "output differs by more than tol (default 1e-4) of its largest magnitude is named, with "
        "its inputs and whether float rounding explains it; when none does alone but the outputs "
        "drift, the largest difference of its own upstream",
        T::bisect}},
  };
}

} // namespace loupe
