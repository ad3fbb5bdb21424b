// ProfileCommands: the commands that measure a built step — :buffers (its planned storage) and
// :profile (each kernel's median time, share, GFLOP/s and % of this machine's peak).
#include "backend/BuiltLibrary.h"
#include "backend/DynamicBuild.h"
#include "backend/Export.h"
#include "backend/GraphExecutor.h"
#include "backend/Peak.h"
#include "backend/Runtime.h"
#include "core/Error.h"
#include "core/Interpreter.h"
#include "core/Interrupt.h"
#include "core/NameScopes.h"
#include "core/Npy.h"
#include "core/Printer.h"
#include "frontend/onnx/OnnxImport.h"
#include "passes/Provenance.h"
#include "passes/Symbols.h"
#include "repl/ProfileSummary.h"
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
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// The profile topic's command handlers (storage and profiles): a member of Commands, so
/// they reach the engine as Commands does.
struct Commands::ProfileTopic {
  static void buffers(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void profile(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

void Commands::ProfileTopic::buffers(Engine &e, const Args &a, const std::string &,
                                     std::ostream &out) {
  needArgs(a, 0, 0, ":buffers");
  const Graph &g = e.requireGraph();
  if (!g.attr("storage_id"))
    missingAttr(g, "storage_id");
  // Sizes are expressions: a plan of a symbolic graph prints its sizes as the symbols give them.
  SymExpr planned, naive;
  const IndexedGraph &idx = g.index();
  for (const backend::StorageSlot &s : backend::storageSlots(g)) {
    if (s.id < 0)
      continue; // variables before a build, and outputs nobody reads: no storage planned
    planned = planned + s.size;
    out << "storage " << s.id << ": " << s.size.str() << " bytes " << dtypeName(s.dtype)
        << ", nodes " << s.firstUse << "-" << s.lastUse << ": " << joinNames(s.names) << "\n";
  }
  const auto &shapes = g.attr("shape")->shapes;
  const auto &dtypes = g.attr("dtype")->ints;
  for (uint32_t i = 0; i < idx.numEntries(); ++i)
    naive = naive + elementCount(shapes[i]) * SymExpr(dtypes[i] == kFloat64 ? 8 : 4);
  out << "planned " << planned.str() << " bytes; one buffer per entry would take " << naive.str()
      << " bytes\n";
}

namespace {

// The params of `source` (bound by :model, :load or the build): the rest are its data.
std::set<std::string> paramsOf(const Engine &e, const Graph &source) {
  std::set<std::string> params;
  for (const Commands::Port &p : Commands::graphInputs(e, source))
    if (p.param)
      params.insert(p.name);
  return params;
}

// The layers a kernel call computes, as the user named them: the members of its group in the
// partition the build made, keeping those named in the graph the build started from (layout
// transforms and constants the passes made are not the user's), with the source nodes folded
// into them, in the source's order; names that share a path prefix
// ("/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/relu/Relu") print it once.
std::string layersOf(const Graph &deploy, uint32_t call, const Graph *source,
                     const std::map<std::string, std::vector<std::string>> &folded) {
  std::vector<std::string> all = fusedNodeNames(deploy, call), named;
  if (all.empty())
    return "";
  std::set<std::string> mine;
  for (const std::string &n : all) {
    if (!source || source->index().findByName(n) >= 0)
      mine.insert(n);
    if (auto f = folded.find(n); f != folded.end())
      mine.insert(f->second.begin(), f->second.end());
  }
  if (source)
    for (uint32_t nid = 0; nid < source->index().numNodes(); ++nid)
      if (mine.count(source->index().nodes[nid].node->name))
        named.push_back(source->index().nodes[nid].node->name);
  if (!source)
    named.assign(all.begin(), all.end());
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
  std::string op, layer; ///< by=op's and by=layer's key
  int dtype = kFloat32;
  double ms = 0, minMs = 0, maxMs = 0, flops = 0;
  size_t kernels = 1;   ///< a by=op or by=layer total: how many kernels
  bool integer = false; ///< its work is integer products (measured against the int8 peak)
  bool bf16 = false;    ///< it reads bfloat16 operands (measured against the bfloat16 peak)
};

} // namespace

void Commands::ProfileTopic::profile(Engine &e, const Args &a, const std::string &,
                                     std::ostream &out) {
  const char *usage = ":profile [N] [sort=time|order] [top=K] [by=kernel|op|layer] [depth=D] "
                      "[SYMBOL=N …] [shape NAME=(…) …]";
  int n = 10;
  // A dynamic build's sizes: `batch=4` binds a symbol, `shape x=(4,64,768)` an input's shape;
  // the variant of those sizes is then profiled (built now when new, as :run does).
  std::shared_ptr<const backend::DynamicBuild> dyn = backend::dynamicBuild(e.requireGraph());
  SymBindings sizes;
  std::map<std::string, Shape> shapes;
  bool shapeWords = false;
  size_t top = 0; // 0: every kernel
  bool byTime = true;
  std::string by = "kernel";
  size_t depth = 0; // by=layer's scope depth; 0: not given (1)
  for (const std::string &w : a) {
    std::string key = w.substr(0, w.find('='));
    if (w == "shape") {
      shapeWords = true;
    } else if (shapeWords && w.find('=') != std::string::npos && key != "by" && key != "depth" &&
               key != "sort" && key != "top") {
      if (!dyn)
        fail("shape ", key, "=… picks a dynamic build's sizes; the current step has none");
      if (!symbolicInputs(dyn->graph()).count(key))
        fail("shape ", key, "=…: '", key, "' is not an input with size symbols");
      shapes[key] = parseShape(w.substr(key.size() + 1));
    } else if (dyn && dyn->symbols().count(key) && key != w) {
      sizes[key] = integerAtLeast(key, w.substr(key.size() + 1), 1);
    } else if (w.starts_with("by=")) {
      by = w.substr(3);
      if (by != "kernel" && by != "op" && by != "layer")
        fail("by must be kernel (each kernel), op (the kernels' master ops) or layer (the "
             "master nodes' scopes), got '",
             by, "'");
    } else if (w.starts_with("depth=")) {
      depth = static_cast<size_t>(integerAtLeast("depth", w.substr(6), 1));
    } else if (w.starts_with("sort=")) {
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
  if (depth && by != "layer")
    fail("depth= is by=layer's: how many scopes deep a layer is");
  if (shapeWords && shapes.empty())
    fail("shape needs NAME=(…) after it; usage: ", usage);
  if (!sizes.empty() || !shapes.empty())
    out << useVariant(e, shapes, sizes);
  const Graph &g = e.requireGraph();
  auto lib = backend::builtLibrary(g);
  if (!lib)
    requireBuilt(e.requireGraph());
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
  const Graph *source = buildSource(e);
  const auto &dtypes = g.attr("dtype")->ints;
  std::map<std::string, std::vector<std::string>> folded;
  if (source)
    folded = foldedSourceNodes(g, *source, paramsOf(e, *source));
  std::vector<ProfileRow> rows;
  double totalMs = 0, totalFlops = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    std::vector<double> t = times[k];
    std::sort(t.begin(), t.end());
    ProfileRow r;
    r.kernel = names[k];
    r.ms = t[t.size() / 2];
    r.minMs = t.front();
    r.maxMs = t.back();
    const backend::Schedule &schedule = *lib->lowered.at(names[k]).schedule;
    // A generic kernel's operations at the sizes it ran at.
    SymBindings sizes = backend::variantBindings(g);
    r.flops = static_cast<double>(backend::countFlops(schedule, sizes));
    r.integer = r.flops > 0 && 2 * backend::countIntegerOps(schedule, sizes) > r.flops;
    if (calls.size() == names.size()) {
      r.call = calls[k];
      r.layers = layersOf(g, calls[k], source, folded);
      r.dtype = static_cast<int>(dtypes[idx.entryId(calls[k], 0)]);
      for (const auto &in : idx.nodes[calls[k]].inputs)
        r.bf16 |= !r.integer && r.flops > 0 && dtypes[idx.entryId(in)] == kBFloat16;
      if (std::optional<MasterNode> m = kernelMaster(g, calls[k])) {
        r.op = m->op;
        // The master's scope, as the user named it: a folded master (a dense made from a
        // MatMul) is placed by the first source node of its kernel.
        std::string named = m->name;
        if (source && source->index().findByName(named) < 0)
          if (auto f = folded.find(named); f != folded.end() && !f->second.empty())
            named = f->second.front();
        std::vector<std::string> scopes = scopeOf(named);
        r.layer = scopes.empty() ? "(top level)" : "/" + scopePath(scopes, depth ? depth : 1);
      }
    }
    if (r.op.empty())
      r.op = r.layer = r.kernel;
    totalMs += r.ms;
    totalFlops += r.flops;
    rows.push_back(r);
  }
  // The share of this machine's peak: an FMA loop timed once per process, times threads; a
  // float64 kernel's peak is half of it (half as many lanes per vector); a kernel whose work is
  // integer products (a quantized convolution) against the 8-bit dot-product loop's, one that
  // reads bfloat16 operands against the vdpbf16ps loop's (where the CPU has it).
  bool anyInteger =
      std::any_of(rows.begin(), rows.end(), [](const ProfileRow &r) { return r.integer; });
  bool anyBf16 = std::any_of(rows.begin(), rows.end(), [](const ProfileRow &r) { return r.bf16; });
  double peak = backend::peakGflopsPerCore() * backend::numThreads();
  double int8Peak = anyInteger ? backend::peakInt8GopsPerCore() * backend::numThreads() : 0;
  double bf16Peak = anyBf16 ? backend::peakBf16GflopsPerCore() * backend::numThreads() : 0;
  auto peakOf = [&](const ProfileRow &r) {
    return r.integer && int8Peak > 0 ? int8Peak
           : r.bf16 && bf16Peak > 0  ? bf16Peak
           : r.dtype == kFloat64     ? peak / 2
                                     : peak;
  };
  auto timing = [&](const ProfileRow &r) {
    double gflops = r.ms > 0 ? r.flops / (r.ms * 1e6) : 0.0;
    return KernelTime{r.ms, gflops, 100 * gflops / peakOf(r)};
  };
  // Each run's total, for the spread: on a busy machine the ranking of kernels moves from run
  // to run, and a user should know before reading it.
  std::vector<double> runTotals(times.empty() ? 0 : times[0].size(), 0.0);
  for (const std::vector<double> &t : times)
    for (size_t i = 0; i < t.size() && i < runTotals.size(); ++i)
      runTotals[i] += t[i];
  std::sort(runTotals.begin(), runTotals.end());
  std::map<uint32_t, KernelTime> profile;
  for (const ProfileRow &r : rows)
    if (calls.size() == names.size()) {
      KernelTime t = timing(r);
      t.minMs = r.minMs;
      t.maxMs = r.maxMs;
      profile[r.call] = t;
    }
  e.history_[e.cursor_].profile = std::move(profile);
  // Timings hidden (replayed sessions), the order by time would be the one thing of them left
  // to vary from run to run: the kernels are listed in the order they run.
  if (e.hideTimings_)
    byTime = false;
  if (by != "kernel") {
    // Totals of the kernels' medians by master op or layer, in the order each first runs.
    std::vector<ProfileRow> groups;
    std::map<std::string, size_t> at;
    for (const ProfileRow &r : rows) {
      const std::string &key = by == "op" ? r.op : r.layer;
      auto [it, fresh] = at.emplace(key, groups.size());
      if (fresh) {
        ProfileRow t = r;
        t.kernel = key;
        t.layers.clear();
        t.kernels = 0;
        t.ms = t.flops = 0;
        t.integer = t.bf16 = false;
        groups.push_back(t);
      }
      ProfileRow &t = groups[it->second];
      t.ms += r.ms;
      t.flops += r.flops;
      t.kernels += 1;
      t.integer |= r.integer; // a group of integer kernels is measured as they are
      t.bf16 |= r.bf16;
      if (r.dtype != kFloat64)
        t.dtype = r.dtype;
    }
    rows = std::move(groups);
  }
  if (byTime)
    std::stable_sort(rows.begin(), rows.end(),
                     [](const ProfileRow &x, const ProfileRow &y) { return x.ms > y.ms; });
  size_t width = 8;
  for (const ProfileRow &r : rows)
    width = std::max(width, r.kernel.size() + 2);
  bool perKernel = by == "kernel";
  // A kernel's row: its fastest, median and slowest run; a total by op or layer: how many
  // kernels and the sum of their medians.
  auto row = [&](const ProfileRow &r) {
    KernelTime t = timing(r);
    char buf[128], spread[48];
    if (perKernel && e.hideTimings_)
      std::snprintf(spread, sizeof spread, "%9s %9s %9s", "-", "-", "-");
    else if (perKernel)
      std::snprintf(spread, sizeof spread, "%9.4f %9.4f %9.4f", r.minMs, t.ms, r.maxMs);
    else if (e.hideTimings_)
      std::snprintf(spread, sizeof spread, "%9zu %9s", r.kernels, "-");
    else
      std::snprintf(spread, sizeof spread, "%9zu %9.4f", r.kernels, t.ms);
    if (e.hideTimings_)
      std::snprintf(buf, sizeof buf, "%s %7s %9s %8s", spread, "-", "-", "-");
    else
      std::snprintf(buf, sizeof buf, "%s %6.1f%% %9.2f %7.1f%%", spread,
                    totalMs > 0 ? 100 * r.ms / totalMs : 0.0, t.gflops, t.percentPeak);
    return pad(r.kernel, width) + buf;
  };
  // A dynamic build's variant: the sizes these kernels were built for and ran at.
  if (SymBindings b = backend::variantBindings(g); !b.empty())
    out << "variant " << bindingsText(b) << " of the dynamic build\n";
  // Integer kernels count integer operations (GOP/s, against the int8 peak): the column says
  // both when the profile has them.
  out << pad(by, width) << (perKernel ? "   min ms median ms    max ms" : "  kernels median ms")
      << "   share" << (anyInteger ? " G(FL)OP/s" : "   GFLOP/s") << "   % peak"
      << (perKernel ? "   layers" : "") << "\n";
  bool anyDouble = false, allDouble = !rows.empty();
  double restMs = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    anyDouble |= rows[i].dtype == kFloat64;
    allDouble &= rows[i].dtype == kFloat64;
    if (top && i >= top) {
      restMs += rows[i].ms;
      continue;
    }
    out << row(rows[i]) << (rows[i].layers.empty() ? "" : "   " + rows[i].layers) << "\n";
  }
  if (top && rows.size() > top) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " (%.4f ms, %.1f%%)", restMs,
                  totalMs > 0 ? 100 * restMs / totalMs : 0.0);
    out << "… " << plural(rows.size() - top, perKernel ? "more kernel" : ("more " + by).c_str())
        << (e.hideTimings_ ? "" : buf) << "\n";
  }
  char f64[48] = "", i8[112] = "", bf[112] = "", buf[384];
  if (anyDouble)
    std::snprintf(f64, sizeof f64, ", %.1f float64", peak / 2);
  if (anyInteger && int8Peak > 0)
    std::snprintf(i8, sizeof i8, "; integer kernels in GOP/s of %.1f int8 (%d x %.1f, a %s loop)",
                  int8Peak, backend::numThreads(), backend::peakInt8GopsPerCore(),
                  backend::dotLoopInstruction());
  if (anyBf16 && bf16Peak > 0)
    std::snprintf(bf, sizeof bf, "; bfloat16 kernels of %.1f (%d x %.1f, a vdpbf16ps loop)",
                  bf16Peak, backend::numThreads(), backend::peakBf16GflopsPerCore());
  std::snprintf(buf, sizeof buf, "peak %.1f GFLOP/s float32%s (%d threads x %.1f, an FMA loop)%s%s",
                peak, f64, backend::numThreads(), backend::peakGflopsPerCore(), i8, bf);
  // The total against the peak of most of its operations.
  double integerFlops = 0, bf16Flops = 0;
  for (const ProfileRow &r : rows) {
    integerFlops += r.integer ? r.flops : 0;
    bf16Flops += r.bf16 ? r.flops : 0;
  }
  ProfileRow total;
  total.kernel = "total";
  total.ms = totalMs;
  total.flops = totalFlops;
  total.dtype = allDouble ? kFloat64 : kFloat32;
  total.integer = 2 * integerFlops > totalFlops;
  total.bf16 = !total.integer && 2 * bf16Flops > totalFlops;
  total.kernels = names.size();
  if (!runTotals.empty()) { // the fastest and slowest whole runs
    total.minMs = runTotals.front();
    total.maxMs = runTotals.back();
  }
  out << row(total) << "\n"
      << (done < n ? cat("interrupted: ", done, " of ", n, " runs") : cat(n, " runs"))
      << ", median per kernel, "
      << (perKernel    ? ""
          : by == "op" ? "totals by master op, "
                       : "totals by layer, ")
      << (byTime ? "longest first" : "in the order they run") << "; "
      << (e.hideTimings_ ? "timings hidden (:set timings shown)" : buf) << "\n";
  if (!e.hideTimings_)
    if (std::string busy = busyLine(runTotals); !busy.empty())
      out << busy << "\n";
}

std::vector<Commands::Listed> Commands::profileCommands() {
  using T = ProfileTopic;
  return {
      {"bisect",
       {"buffers", "", "the storage of the built graph: each slot's size, entries and lifetime",
        T::buffers}},
      {"buffers",
       {"profile", "[N] [sort=time|order] [top=K] [SYMBOL=N …]",
        "runs the built graph N times (default 10) on random inputs and the bound params: each "
        "kernel's median time, share, GFLOP/s, % of its dtype's peak and the layers it fused, "
        "longest first (Ctrl-C keeps the finished runs); a dynamic build's sizes as symbols "
        "(batch=4) or shapes (shape x=(…)) profile that size's variant",
        T::profile}},
  };
}

} // namespace loupe
