// RunInputs: what :build, :run, :bisect and :profile share about tensors given on the command
// line (fills, files, a run's words and inputs) and the reference interpreter's run.
#include "repl/commands/RunInputs.h"

#include "backend/BuiltLibrary.h"
#include "backend/DynamicBuild.h"
#include "backend/Export.h"
#include "backend/GraphExecutor.h"
#include "backend/Peak.h"
#include "backend/Runtime.h"
#include "core/Buffers.h"
#include "core/Error.h"
#include "core/File.h"
#include "core/Interpreter.h"
#include "core/Interrupt.h"
#include "core/Npy.h"
#include "core/Npz.h"
#include "core/Printer.h"
#include "core/Text.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Symbols.h"
#include "repl/commands/Commands.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

std::pair<std::string, std::string> keyValue(const std::string &word, const std::string &usage) {
  size_t eq = word.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
    fail("expected NAME=VALUE, got '", word, "'; usage: ", usage);
  return {word.substr(0, eq), word.substr(eq + 1)};
}

const char *const kRunUsage =
    ":run [NAME=random|zeros|ones|NUMBER|FILE.npy|FILE.npz[:KEY]|FILE.pb|FILE.bin …] [seed=N] "
    "[save=DIR|FILE.npz] [compare=FILE.npy|FILE.npz|DIR] [rtol=X] [atol=X] [top=K] "
    "[check=on|off]";

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

Tensor readTensorFile(const std::string &how, const std::string &name, const Shape *shape,
                      int dtype) {
  if (how.ends_with(".pb"))
    return frontend::readTensorProto(how);
  if (how.ends_with(".npy"))
    return readNpy(how);
  // FILE.npz, the array named as the input; FILE.npz:KEY, another.
  if (size_t npz = how.find(".npz");
      npz != std::string::npos && (npz + 4 == how.size() || how[npz + 4] == ':')) {
    std::string file = how.substr(0, npz + 4);
    std::string key = npz + 4 == how.size() ? npyFileStem(name) : how.substr(npz + 5);
    std::vector<std::pair<std::string, Tensor>> arrays = readNpz(file);
    std::vector<std::string> keys;
    for (auto &[k, t] : arrays) {
      if (k == key)
        return std::move(t);
      keys.push_back(k);
    }
    fail(file, " has no array '", key, "' (it holds ", keys.empty() ? "none" : joinNames(keys),
         "); name one with ", name.empty() ? "NAME" : name, "=", file, ":KEY");
  }
  if (how.ends_with(".bin")) {
    if (!shape)
      fail(how, ": a .bin file is raw bytes without a shape; give ", name.empty() ? "it" : name,
           " a shape (shape ", name.empty() ? "NAME" : name, "=(…)) or use a .npy file");
    std::string bytes = readFile(how);
    int64_t want = numElements(*shape) * dtypeBytes(dtype);
    if (static_cast<int64_t>(bytes.size()) != want)
      fail(how, " holds ", bytes.size(), " bytes but ", name.empty() ? "the tensor" : name, " ",
           shapeToTuple(*shape), " ", dtypeName(dtype), " takes ", want,
           " (raw bytes in C order, little-endian)");
    return copyFromBuffer(bytes.data(), *shape, dtype);
  }
  fail(name.empty() ? "" : name + "=", how,
       ": not a tensor file Loupe reads; give a .npy file, a .npz (the array named ",
       name.empty() ? "as the input" : "'" + name + "'", ", or FILE.npz:KEY), an ONNX .pb ",
       "TensorProto, or a .bin of raw ",
       shape ? std::string(dtypeName(dtype)) + " bytes of shape " + shapeToTuple(*shape)
             : std::string("bytes in the input's dtype"));
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
                  const std::string &what, const Tensor *file, std::vector<std::string> *notes,
                  const std::string &arrayName) {
  requireTensorMemory(what, shape, dt);
  Tensor t(shape, dt);
  if (how == "random" && (dt == kUint8 || dt == kInt8)) {
    // 8-bit values are a quantized network's steps: the whole range, as an image's pixels.
    std::uniform_int_distribution<int> u(dt == kUint8 ? 0 : -128, dt == kUint8 ? 255 : 127);
    for (double &x : t.data)
      x = u(rng);
  } else if (how == "random") {
    std::uniform_real_distribution<double> u(-1, 1);
    for (double &x : t.data)
      x = roundToDType(u(rng), dt);
  } else if (namesValues(how)) {
    double v = how == "ones" ? 1.0 : how == "zeros" ? 0.0 : *fillValue(how);
    std::fill(t.data.begin(), t.data.end(), roundToDType(v, dt));
  } else {
    Tensor f = file ? *file : readTensorFile(how, arrayName, &shape, dt);
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

// Values with 6 significant digits, at most `n` of them.
std::string someValues(const Tensor &t, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < t.data.size() && i < n; ++i)
    s += (i ? ", " : "") + significant(t.data[i]);
  return s + (t.data.size() > n ? ", …]" : "]");
}

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
    else if (k == "rtol" || k == "atol") {
      char *end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (*end || !(x >= 0) || !std::isfinite(x))
        fail(k, " must be a non-negative number, got '", v, "'");
      (k == "rtol" ? w.rtol : w.atol) = x;
      w.toleranceGiven = true;
    } else if (k == "top")
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
                                        std::vector<std::string> *notes) {
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
    auto read = w.read.find(name);
    in[name] = fillTensor(how != w.how.end() ? how->second : "random", shapes[eid],
                          static_cast<int>(dtypes[eid]), rng, "input '" + name + "'",
                          read != w.read.end() ? &read->second : nullptr, notes, name);
  }
  return in;
}

// The reference interpreter's run of built graph `g` on `in` (telling `observe` each node's
// outputs): the variables `in` leaves are the built library's params, each loaded as doubles for
// each node that reads it (a network's weights are never all held as doubles at once).
std::vector<Tensor> referenceRun(const Graph &g, const std::map<std::string, Tensor> &in,
                                 const NodeObserver &observe) {
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

void Commands::requireBuilt(const Graph &g) {
  if (backend::builtLibrary(g))
    return;
  if (auto dyn = backend::dynamicBuild(g))
    fail("the current step is a dynamic build (size symbols ",
         joinNames(std::vector<std::string>(dyn->symbols().begin(), dyn->symbols().end())),
         "): its kernels are built for the sizes a run gives; :run at a size first (:run ",
         *dyn->symbols().begin(), "=N …, or an input's file)");
  fail("the current graph was not built; run :build first");
}

std::vector<SymBindings> Commands::sizeSample(const Graph &g, const std::string &text,
                                              const std::string &what) {
  std::set<std::string> symbols = graphSymbols(g);
  if (symbols.empty())
    fail(what, ": the graph has no size symbols (its inputs' sizes are fixed)");
  std::vector<SymBindings> out = {{}};
  for (const std::string &w : splitArgs(text)) {
    size_t eq = w.find('=');
    std::string name = w.substr(0, eq);
    if (eq == std::string::npos || !symbols.count(name))
      fail(what, ": '", w, "' is not SYMBOL=N[,N…] for a size symbol of the graph (",
           joinNames(std::vector<std::string>(symbols.begin(), symbols.end())), ")");
    std::vector<SymBindings> next;
    for (const std::string &v : splitList(w.substr(eq + 1), ',')) {
      int64_t n = integerAtLeast(name, v, 1);
      for (SymBindings b : out) {
        b[name] = n;
        next.push_back(b);
      }
    }
    out = next;
  }
  for (const std::string &s : symbols)
    if (!out.front().count(s))
      fail(what, ": give every size symbol: ", s, " has no size (", s, "=N)");
  return out;
}

const Graph *Commands::buildSource(const Engine &e) {
  if (e.cursor_ == 0)
    return nullptr;
  if (!backend::variantBindings(e.history_[e.cursor_].graph).empty())
    return &backend::dynamicBuild(e.history_[e.cursor_].graph)->graph();
  return &e.history_[e.cursor_ - 1].graph;
}

std::string Commands::useVariant(Engine &e, const std::map<std::string, Shape> &given,
                                 const SymBindings &words) {
  const Graph &g = e.requireGraph();
  // The sizes not given stay the current variant's.
  SymBindings current = backend::variantBindings(g);
  std::shared_ptr<const backend::DynamicBuild> dyn = backend::dynamicBuild(g);
  SymBindings b = bindInputs(dyn->graph(), given, words, current);
  // The current step when it is what a run at these sizes runs: the size's own variant, or the
  // generic kernels where it has none (a variant :tune rebuilt is not the current step's any
  // more, nor is the generic step once its size has a variant of its own).
  bool currentGeneric = g.attr("generic_kernels") != nullptr;
  if (!current.empty() && b == current &&
      (dyn->has(b) ? !currentGeneric : dyn->generic() != nullptr && currentGeneric))
    return "";
  bool built = false;
  auto t0 = std::chrono::steady_clock::now();
  Graph v = backend::variantOf(g, b, &built);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  size_t from = e.cursor_;
  e.pushStep(v, "variant " + bindingsText(b), ms, false);
  bool generic = v.attr("generic_kernels") != nullptr;
  return cat("step ", e.cursor_, ": variant ", bindingsText(b), " of the dynamic build (",
             generic ? "its generic kernels"
             : built ? "built now"
                     : "built before",
             "; step ", from, " was ",
             current.empty() ? "the build" : "variant " + bindingsText(current), ")\n");
}

const Graph &Commands::currentVariant(Engine &e, RunWords &w, std::ostream &out) {
  const Graph &g = e.requireGraph();
  std::shared_ptr<const backend::DynamicBuild> dyn = backend::dynamicBuild(g);
  if (!dyn)
    return g;
  std::map<std::string, Shape> declared = symbolicInputs(dyn->graph());
  SymBindings words;
  std::map<std::string, Shape> given;
  for (auto it = w.how.begin(); it != w.how.end();) {
    const auto &[name, how] = *it;
    if (dyn->symbols().count(name) && !declared.count(name)) {
      words[name] = integerAtLeast(name, how, 1);
      it = w.how.erase(it);
      continue;
    }
    char *numberEnd = nullptr;
    std::strtod(how.c_str(), &numberEnd);
    bool number = !how.empty() && numberEnd == how.c_str() + how.size();
    if (declared.count(name) && how != "random" && how != "zeros" && how != "ones" && !number) {
      // Read once: its shape picks the variant, its values are the run's input.
      Tensor t = readTensorFile(how, name);
      given[name] = t.shape;
      w.read[name] = std::move(t);
    }
    ++it;
  }
  out << useVariant(e, given, words);
  return e.requireGraph();
}

} // namespace loupe
