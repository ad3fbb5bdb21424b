// BuildCommands: the backend's commands — :build, :run, :buffers, :llvm, :asm, :profile.
#include "backend/Build.h"
#include "backend/GraphExecutor.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Interpreter.h"
#include "core/Npy.h"
#include "repl/CommandHelpers.h"
#include "repl/Engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

namespace loupe {

namespace {

// Splits at white space outside parentheses, so `x=(1, 3, 8, 8)` stays one word.
Args splitKeepingTuples(const std::string &s) {
  Args out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(' || c == '[')
      ++depth;
    if (c == ')' || c == ']')
      --depth;
    if (std::isspace(static_cast<unsigned char>(c)) && depth == 0) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

std::pair<std::string, std::string> keyValue(const std::string &word, const std::string &usage) {
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
    fail("expected NAME=VALUE, got '", word, "'; usage: ", usage);
  return {word.substr(0, eq), word.substr(eq + 1)};
}

const char *kBuildUsage =
    ":build [opt_level=N] [dtype=TYPE] [shape NAME=(…) …] [dtype NAME=TYPE …]";
const char *kRunUsage = ":run [NAME=random|zeros|ones|FILE.npy …] [seed=N]";

backend::BuildOptions parseBuild(const std::string &rest, int optLevel) {
  backend::BuildOptions o;
  o.optLevel = optLevel;
  enum { None, Shape_, DType_ } mode = None;
  for (const std::string &w : splitKeepingTuples(rest)) {
    if (w == "shape") {
      mode = Shape_;
      continue;
    }
    if (w == "dtype") {
      mode = DType_;
      continue;
    }
    auto [k, v] = keyValue(w, kBuildUsage);
    if (k == "dtype") { // dtype=TYPE: every input
      auto dt = dtypeFromName(v);
      if (!dt)
        fail("unknown dtype '", v, "'");
      o.defaultDType = *dt;
    } else if (k == "opt_level") {
      if (v.size() != 1 || v[0] < '0' || v[0] > '3')
        fail("opt_level must be 0, 1, 2 or 3, got '", v, "'");
      o.optLevel = v[0] - '0';
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
      fail("unknown option '", k, "'; usage: ", kBuildUsage);
    }
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

// The inputs of a run: every variable random (uniform in [-1, 1) from `seed`) unless given.
std::map<std::string, Tensor> runInputs(const Graph &g, const std::string &rest) {
  std::map<std::string, std::string> how;
  unsigned seed = 0;
  for (const std::string &w : splitKeepingTuples(rest)) {
    auto [k, v] = keyValue(w, kRunUsage);
    if (k == "seed") {
      try {
        seed = static_cast<unsigned>(std::stoul(v));
      } catch (const std::exception &) {
        fail("seed must be a non-negative integer, got '", v, "'");
      }
    } else {
      how[k] = v;
    }
  }
  const IndexedGraph &idx = g.index();
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  for (const auto &[name, v] : how)
    if (idx.findByName(name) < 0 || !idx.nodes[idx.findByName(name)].node->isVariable())
      fail("run: the graph has no input '", name, "'");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::map<std::string, Tensor> in;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    uint32_t e = idx.entryId(nid, 0);
    int dt = static_cast<int>(dtypes[e]);
    std::string h = how.count(name) ? how[name] : "random";
    Tensor t(shapes[e], dt);
    if (h == "random") {
      for (double &x : t.data)
        x = roundToDType(u(rng), dt);
    } else if (h == "zeros" || h == "ones") {
      std::fill(t.data.begin(), t.data.end(), h == "ones" ? 1.0 : 0.0);
    } else {
      Tensor f = readNpy(h);
      if (f.shape != shapes[e])
        fail("run: ", h, " holds shape ", shapeToList(f.shape), " but input '", name,
             "' has shape ", shapeToList(shapes[e]));
      t.data = f.data;
      for (double &x : t.data)
        x = roundToDType(x, dt);
    }
    in[name] = std::move(t);
  }
  return in;
}

} // namespace

void Engine::registerBuildCommands() {
  auto add = [this](std::string name, std::string usage, std::string summary, auto fn) {
    commands_.push_back({std::move(name), std::move(usage), std::move(summary), fn});
  };

  add("build", "[opt_level=N] [dtype=TYPE] [shape NAME=(…) …] [dtype NAME=TYPE …]",
      "nnvm.compiler.build: the passes of the opt level, then every fused function lowered and "
      "compiled; the deploy graph becomes a new step",
      [](Engine &e, const Args &, const std::string &rest, std::ostream &out) {
        const Graph before = e.requireGraph();
        backend::BuildOptions o = parseBuild(rest, e.passContext_.optLevel);
        bool trace =
            std::any_of(e.passContext_.instruments.begin(), e.passContext_.instruments.end(),
                        [](const auto &i) { return i->name() == "trace"; });
        auto t0 = std::chrono::steady_clock::now();
        // The lowered loops go where the trace instrument prints, between the passes.
        std::ostream *sink = *e.sink_ ? *e.sink_ : &out;
        Graph g = backend::build(before, o, e.passContext_, trace ? sink : nullptr);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
        std::string label = "build opt_level=" + std::to_string(o.optLevel);
        e.pushStep(g, label, ms, false);
        out << "step " << e.cursor_ << ": " << label << " (" << graphSize(g.index()) << "; "
            << plural(functionOrder(g).size(), "function") << ")\n";
      });

  add("run", "[NAME=random|zeros|ones|FILE.npy …] [seed=N]",
      "runs the built graph; per output its shape, dtype, values, sum and the error against the "
      "reference interpreter",
      [](Engine &e, const Args &, const std::string &rest, std::ostream &out) {
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
      });

  add("buffers", "", "the storage of the built graph: each slot's size, entries and lifetime",
      [](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        needArgs(a, 0, 0, ":buffers");
        const Graph &g = e.requireGraph();
        if (!g.attr("storage_id"))
          missingAttr(g, "storage_id");
        int64_t planned = 0, naive = 0;
        const IndexedGraph &idx = g.index();
        for (const backend::StorageSlot &s : backend::storageSlots(g)) {
          planned += s.bytes;
          out << "storage " << s.id << ": " << s.bytes << " bytes " << dtypeName(s.dtype)
              << ", nodes " << s.firstUse << "-" << s.lastUse << ": " << joinNames(s.names) << "\n";
        }
        const auto &shapes = g.attr("shape")->shapes;
        const auto &dtypes = g.attr("dtype")->ints;
        for (uint32_t i = 0; i < idx.numEntries(); ++i)
          naive += numElements(shapes[i]) * (dtypes[i] == kFloat64 ? 8 : 4);
        out << "planned " << planned << " bytes; one buffer per entry would take " << naive
            << " bytes\n";
      });

  auto code = [](Engine &e, const Args &a, const char *usage) {
    needArgs(a, 0, 1, usage);
    auto lib = backend::builtLibrary(e.requireGraph());
    if (!lib)
      fail("the current graph was not built; run :build first");
    if (a.size() == 1)
      findFunction(e.requireGraph(), a[0]); // the error lists the functions
    return lib;
  };
  add("llvm", "[FUNC]", "the optimised LLVM IR of a built function (the whole module without FUNC)",
      [code](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        out << code(e, a, ":llvm [FUNC]")->code->llvmIR(a.empty() ? "" : a[0]);
      });
  add("asm", "[FUNC]", "the host assembly of a built function (the whole module without FUNC)",
      [code](Engine &e, const Args &a, const std::string &, std::ostream &out) {
        out << code(e, a, ":asm [FUNC]")->code->assembly(a.empty() ? "" : a[0]);
      });
}

} // namespace loupe
