// CodeCommands: the commands of what a build made of each function — :lower, :schedule, :llvm, :asm
// — and the machine and kernel cache it made it with (:target, :cache).
#include "backend/BuiltLibrary.h"
#include "backend/DynamicBuild.h"
#include "backend/llvm/HostTarget.h"
#include "core/Error.h"
#include "core/Target.h"
#include "passes/Symbols.h"
#include "repl/commands/Commands.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// The code topic's command handlers (lowering and code: loops, schedules, LLVM IR, assembly, the
/// target, the kernel cache): a member of Commands, so they reach the engine as Commands does.
struct Commands::CodeTopic {
  static void lower(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void schedule(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void target(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void llvm(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void assembly(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void where(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void cache(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

namespace {

// The built library of the current graph, for :llvm and :asm; with a function name, checks that
// the graph has it (the error lists the functions).
std::shared_ptr<const backend::BuiltLibrary> builtCode(Engine &e, const Args &a,
                                                       const char *usage) {
  needArgs(a, 0, 1, usage);
  auto lib = backend::builtLibrary(e.requireGraph());
  if (!lib)
    Commands::requireBuilt(e.requireGraph());
  if (a.size() == 1)
    findFunction(e.requireGraph(), a[0]); // the error lists the functions
  return lib;
}

} // namespace

void Commands::CodeTopic::lower(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 2, ":lower [FUNC] [nodes]");
  const Graph &g = e.requireGraph();
  Args names = a;
  bool marked = !names.empty() && names.back() == "nodes";
  if (marked)
    names.pop_back();
  if (names.size() > 1)
    fail("usage: :lower [FUNC] [nodes]");
  if (names.empty())
    names = functionOrder(g);
  auto lib = backend::builtLibrary(g);
  for (const std::string &name : names) {
    backend::LoweredFunction f = builtOrLowered(g, name);
    out << "lower function " << name << "\n";
    if (std::string owner = lib ? lib->code->sharedWith(name) : ""; !owner.empty())
      out << "// runs the machine code of " << owner << " (the same loops, compiled once)\n";
    if (!marked) {
      out << backend::printLowered(f);
      continue;
    }
    // Numbered lines (what :asm, :llvm and :where point at), each store and produce marked
    // with the nodes it computes.
    backend::LoweredListing l = backend::listLowered(f);
    int width = static_cast<int>(std::to_string(l.lines.size()).size());
    for (size_t i = 0; i < l.lines.size(); ++i) {
      std::string number = std::to_string(i + 1);
      out << std::string(width - number.size(), ' ') << number << "  " << l.lines[i];
      if (l.computes[i] && !l.nodes[i].empty())
        out << "  // " << joinNames(l.nodes[i], ", ");
      out << "\n";
    }
  }
}

void Commands::CodeTopic::schedule(Engine &e, const Args &a, const std::string &,
                                   std::ostream &out) {
  needArgs(a, 1, 1, ":schedule FUNC");
  backend::LoweredFunction f = builtOrLowered(e.requireGraph(), a[0]);
  // A dynamic build's variant: the schedule is the one these sizes were built with.
  if (SymBindings b = backend::variantBindings(e.requireGraph()); !b.empty())
    out << "variant " << bindingsText(b) << " of the dynamic build\n";
  std::string steps = f.schedule->describe();
  out << (steps.empty() ? "no schedule steps: every loop as computed\n" : steps);
}

void Commands::CodeTopic::llvm(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  out << builtCode(e, a, ":llvm [FUNC]")->code->llvmIR(a.empty() ? "" : a[0]);
}

void Commands::CodeTopic::assembly(Engine &e, const Args &a, const std::string &,
                                   std::ostream &out) {
  out << builtCode(e, a, ":asm [FUNC]")->code->assembly(a.empty() ? "" : a[0]);
}

namespace {

// "120-156, 170, 190-201": 1-based positions, consecutive ones as ranges.
std::string ranges(const std::vector<size_t> &positions) {
  std::string text;
  for (size_t i = 0; i < positions.size();) {
    size_t j = i;
    while (j + 1 < positions.size() && positions[j + 1] == positions[j] + 1)
      ++j;
    text += (text.empty() ? "" : ", ") + std::to_string(positions[i]);
    if (j > i)
      text += "-" + std::to_string(positions[j]);
    i = j + 1;
  }
  return text;
}

} // namespace

void Commands::CodeTopic::where(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 1, ":where NODE");
  const Graph &g = e.requireGraph();
  const FusedModule *built = builtPartition(g);
  if (!built)
    fail("the current graph was not built; run :build first");
  std::string name = a[0];
  const IndexedGraph &pidx = built->partition->index();
  int nid = pidx.findByName(name);
  if (nid < 0) {
    // A node of the graph the build started from that its passes rewrote (a MatMul and its
    // bias add became one dense, a layer norm's pieces one layer_norm) lives on in the node
    // its value flows into.
    const Graph *source = buildSource(e);
    std::string into = source ? foldedInto(*source, *built->partition, name) : "";
    if (into.empty())
      fail("no node ", name, " in the graph this build partitioned or the one it started from");
    out << name << " is not in the graph the build partitioned: its passes folded it into " << into
        << "\n";
    name = into;
    nid = pidx.findByName(name);
  }
  const Node &node = *pidx.nodes[static_cast<size_t>(nid)].node;
  if (node.isVariable())
    fail(name, " is an input of the graph: no kernel computes it");
  std::optional<KernelSite> site = kernelSite(g, name);
  if (!site)
    fail("no kernel of this build computes ", name);
  int call = site->call;
  const std::string &fn = site->function;
  backend::LoweredFunction f = builtOrLowered(g, fn);
  out << name << " (" << node.op->name << ") is computed by " << fn
      << (site->fusedWith.empty() ? "" : ", with " + joinNames(site->fusedWith)) << "\n";
  // A kernel several calls share was lowered from the first call's group: its listing names
  // that group's nodes, and this node is the one at its place.
  const std::string &listed = site->listedAs;
  if (listed != name) {
    size_t calls = 0;
    for (const auto &n : g.index().nodes)
      calls += !n.node->isVariable() && n.node->op->name == "tvm_op" &&
               n.node->parsed.getStr("func_name") == fn;
    out << "shared: " << plural(calls, "call") << " run " << fn
        << "; its loops and instructions name the first call's nodes, and " << name
        << " is computed where they say " << listed << "\n";
  }

  backend::LoweredListing l = backend::listLowered(f);
  std::set<unsigned> lines;
  for (size_t i = 0; i < l.lines.size(); ++i)
    if (l.computes[i] && std::count(l.nodes[i].begin(), l.nodes[i].end(), listed))
      lines.insert(static_cast<unsigned>(i + 1));
  out << "loops (:lower " << fn << " nodes): "
      << (lines.empty() ? "no store of its own (its values are computed where they are read)"
                        : plural(lines.size(), "line"))
      << "\n";
  int width = static_cast<int>(std::to_string(l.lines.size()).size());
  const size_t shown = 10; // the rest are a :lower away
  size_t printed = 0;
  for (unsigned line : lines) {
    if (printed++ == shown && lines.size() > shown + 2) {
      out << "  … " << lines.size() - shown << " more\n";
      break;
    }
    std::string number = std::to_string(line);
    out << "  " << std::string(width - number.size(), ' ') << number << "  "
        << l.lines[line - 1].substr(l.lines[line - 1].find_first_not_of(' ')) << "\n";
  }

  if (auto lib = backend::builtLibrary(g)) {
    // Its instructions: its stores', and those of the loops around nothing but its stores.
    std::set<unsigned> own = lines;
    for (size_t i = 0; i < l.lines.size(); ++i)
      if (l.nodes[i].size() == 1 && l.nodes[i][0] == listed)
        own.insert(static_cast<unsigned>(i + 1));
    std::vector<unsigned> at = lib->code->instructionLines(fn);
    std::vector<size_t> mine;
    for (size_t i = 0; i < at.size(); ++i)
      if (own.count(at[i]))
        mine.push_back(i + 1);
    // This host's instructions differ from another's: hidden like timings, for sessions.
    out << "instructions (:asm " << fn << "): ";
    if (e.hideTimings_)
      out << "-- of --\n";
    else {
      out << mine.size() << " of " << at.size();
      if (!at.empty())
        out << " (" << (100 * mine.size() + at.size() / 2) / at.size() << "%)";
      out << (mine.empty() ? "" : " at " + ranges(mine)) << "\n";
    }
  }

  std::map<std::string, int64_t> flops =
      backend::countFlopsByNode(*f.schedule, backend::variantBindings(g));
  int64_t total = 0;
  for (const auto &[n, v] : flops)
    total += v;
  double share = total ? static_cast<double>(flops[listed]) / static_cast<double>(total) : 0;
  out << "arithmetic: " << flops[listed] << " of " << fn << "'s " << total << " operations";
  if (total)
    out << " (" << static_cast<int>(share * 100 + 0.5) << "%)";
  out << "\n";
  const Step *step = e.current();
  auto measured = step->profile.find(static_cast<uint32_t>(call));
  if (measured == step->profile.end()) {
    out << "time: not measured (:profile times each kernel)\n";
    return;
  }
  auto ms = [&](double v) {
    if (e.hideTimings_)
      return std::string("--");
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return std::string(buf);
  };
  out << "time: " << fn << " " << ms(measured->second.ms) << " ms in the last :profile; by " << name
      << "'s share of its arithmetic " << ms(measured->second.ms * share)
      << " ms (Loupe does not sample inside a kernel)\n";
}

void Commands::CodeTopic::target(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":target");
  backend::HostTarget t = backend::detectHostTarget();
  out << "llvm " << t.llvmVersion << "\ntriple " << t.triple << "\ncpu " << t.cpu << "\nsimd "
      << (t.simdFeatures.empty() ? "none" : joinNames(t.simdFeatures, " ")) << "\nl2 "
      << (t.l2Bytes ? std::to_string(t.l2Bytes >> 10) + " KiB per core (the OS's)" : "unknown")
      << "\n";
  if (backend::HostTarget c = backend::codegenTarget(); c.cpu != t.cpu)
    out << "code compiled for " << c.cpu << " (LOUPE_CODEGEN_CPU; simd "
        << (c.simdFeatures.empty() ? "none" : joinNames(c.simdFeatures, " ")) << ")\n";
  // What opt_level 3 sizes its layouts and tiles for: the session's target when it names a
  // CPU, else this machine (a plain llvm target means the host at opt_level 3).
  std::string target = e.passContext_.get("target", "llvm");
  bool named = target.find("-mcpu=") != std::string::npos;
  std::string sized = named ? target : "llvm -mcpu=native";
  out << "opt_level 3 sizes for " << (named ? "the target " + target : "this machine") << ": "
      << targetCpuOf(sized).derivation << "\n";
}

void Commands::CodeTopic::cache(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":cache");
  auto mb = [](uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return std::string(buf);
  };
  if (!e.kernelCache_) {
    out << "kernel cache off (:set cache on uses " << backend::KernelCache::defaultDir().string()
        << ")\n";
  } else {
    backend::KernelCache::Summary sum = e.kernelCache_->summary();
    out << "kernel cache " << e.kernelCache_->dir().string() << ": " << sum.entries
        << (sum.entries == 1 ? " entry, " : " entries, ") << mb(sum.bytes) << " (at most "
        << mb(e.kernelCache_->maxBytes()) << ")\n";
  }
  if (!e.lastCompile_) {
    out << "no build yet\n";
    return;
  }
  const backend::CompileStats &s = *e.lastCompile_;
  out << "last build: " << plural(s.functions, "function") << ", "
      << plural(s.distinct, "distinct kernel");
  if (!s.cacheUsed) {
    out << ", all compiled (cache off)\n";
    return;
  }
  out << ": " << s.cacheHits << " from the cache, " << s.distinct - s.cacheHits
      << " compiled (hit rate " << (s.distinct ? 100 * s.cacheHits / s.distinct : 100) << "%), "
      << s.cacheStored << " stored\n";
}

std::vector<Commands::Listed> Commands::codeCommands() {
  using T = CodeTopic;
  return {
      {"open",
       {"lower", "[FUNC] [nodes]",
        "the lowered loops of a fused function of the module (all of them without FUNC); with "
        "nodes, numbered, each store marked with the graph nodes it computes",
        T::lower}},
      {"lower",
       {"schedule", "FUNC", "the schedule steps the default x86 schedule applied to a function",
        T::schedule}},
      {"outputs",
       {"target", "", "what LLVM detects about this machine (triple, CPU, SIMD features)",
        T::target}},
      {"model",
       {"llvm", "[FUNC]",
        "the optimised LLVM IR of a built function, commented with the loop line and nodes each "
        "run of instructions is for (the whole module without FUNC)",
        T::llvm}},
      {"llvm",
       {"asm", "[FUNC]",
        "the host assembly of a built function, commented with the loop line and nodes each run "
        "of instructions is for (the whole module without FUNC)",
        T::assembly}},
      {"asm",
       {"where", "NODE",
        "where a build computes a node of the graph it partitioned: its kernel, its loop lines, "
        "its instructions and its share of the kernel's arithmetic and measured time",
        T::where}},
      {"where",
       {"cache", "",
        "the kernel cache: its folder, entries and size, and what the last :build found in it "
        "(:set cache on|off|clear)",
        T::cache}},
  };
}

} // namespace loupe
