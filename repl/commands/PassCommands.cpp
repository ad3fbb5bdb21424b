// PassCommands: the commands of passes and fusion — :apply, :pipeline, :explain, :passes,
// :load-pass, the instruments (:trace, :instrument, :timing), :groups, :why and :precision.
#include "backend/BuiltLibrary.h"
#include "backend/LowerFunction.h"
#include "core/Error.h"
#include "core/Text.h"
#include "passes/FakeQuantization.h"
#include "passes/MixedPrecision.h"
#include "repl/Workbench.h"
#include "repl/commands/Commands.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace loupe {

/// The pass topic's command handlers (passes, instruments and fusion): a member of Commands, so
/// they reach the engine as Commands does.
struct Commands::PassTopic {
  static void apply(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void groups(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void why(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void precision(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void compare(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void trace(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void instrument(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void timing(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void pipeline(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void explain(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void loadPass(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
  static void passes(Engine &e, const Args &a, const std::string &rest, std::ostream &out);
};

namespace {

using Clock = std::chrono::steady_clock;

// True if one of the passes named in `names` provides attribute `key`.
bool applies(const std::vector<std::string> &names, const std::string &key) {
  for (const auto &n : names)
    if (const PassInfo *p = PassRegistry::get().find(n))
      for (const auto &k : p->provides)
        if (k == key)
          return true;
  return false;
}

} // namespace

void Commands::PassTopic::apply(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  if (a.empty())
    fail("usage: :apply P1 [P2 …] (:passes lists them)");
  const Graph before = e.requireGraph(); // a copy: pushStep may move the history
  auto t0 = Clock::now();
  std::vector<std::string> remarks;
  Graph after = Workbench(e).apply(before, a, &remarks);
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  e.pushStep(after, "apply " + joinNames(a, " "), ms, false);
  out << "step " << e.cursor_ << ": apply " << joinNames(a, " ") << " (" << e.current()->change
      << ")\n";
  for (const std::string &r : remarks)
    out << "note: " << r << "\n";
  // Warn about unknown entries only when this step computed the count.
  for (const char *k : {"shape_num_unknown_nodes", "dtype_num_unknown_nodes"}) {
    const GraphAttr *u = e.current()->graph.attr(k), *was = before.attr(k);
    if (u && u->num > 0 && (!was || !(*was == *u) || applies(a, k)))
      out << "warning: " << k << " = " << u->num << ": some entries are still unknown\n";
  }
}

void Commands::PassTopic::groups(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":groups");
  GroupsView v = Workbench(e).groups();
  if (v.built)
    out << "(the partition this step's functions were made from: opt_level " << v.optLevel
        << ", rules " << v.rules << ")\n";
  out << "roots: " << v.roots << "\nmasters: " << v.masters << "\n\n";
  for (const GroupsView::NodeRow &n : v.nodes)
    out << n.node << " has root " << n.root << " and master " << n.master << "\n";
  out << "\n";
  for (const GroupsView::Group &grp : v.groups)
    out << "group " << grp.root << ": " << joinNames(grp.members) << "; pattern " << grp.pattern
        << "; master " << grp.master << "; function " << grp.function << "\n";
}

// `:precision NODE`: the ToMixedPrecision rule for the node's op, and what the current graph
// does (a node of a graph the pass rewrote reads bfloat16 casts; a cast the pass made says
// which product it feeds or ends).
void Commands::PassTopic::precision(Engine &e, const Args &a, const std::string &,
                                    std::ostream &out) {
  needArgs(a, 1, 1, ":precision NODE");
  const Graph &g = e.requireGraph();
  const IndexedGraph &idx = g.index();
  int nid = idx.findByName(a[0]);
  if (nid < 0) {
    std::vector<std::string> names;
    for (const auto &n : idx.nodes)
      names.push_back(n.node->name);
    fail("no node named '", a[0], "'", didYouMean(a[0], names));
  }
  const Node &n = *idx.nodes[nid].node;
  if (n.isVariable()) {
    out << n.name << " is an input: it has the dtype it is given (float32 unless :build says "
        << "otherwise); the products that read it cast it\n";
    return;
  }
  if (n.op->name == "cast") {
    const std::string &to = n.parsed.getStr("dtype");
    out << n.name << " (cast to " << to << "): " << mixedPrecisionRule("cast", to).why << "\n";
    return;
  }
  PrecisionRule rule = mixedPrecisionRule(n.op->name);
  bool inBF16 = false;
  for (const auto &in : idx.nodes[nid].inputs) {
    const Node &src = *idx.nodes[in.nodeId].node;
    inBF16 = inBF16 || (!src.isVariable() && src.op->name == "cast" &&
                        src.parsed.getStr("dtype") == "bfloat16");
  }
  out << n.name << " (" << n.op->name << "): "
      << (rule.bfloat16 ? "computes in bfloat16 under precision=bf16"
                        : "stays float32 under precision=bf16")
      << (rule.bfloat16 ? (inBF16 ? " (and does in this graph)" : " (not yet in this graph)") : "")
      << ": " << rule.why << "\n";
}

void Commands::PassTopic::why(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 2, 2, ":why A B (two node names)");
  // On a built step, the question is about the partition its build made, with that build's
  // opt level and rules (the deploy graph's tvm_op nodes are its groups, not its ops).
  const FusedModule *built = builtPartition(e.requireGraph());
  const Graph &g = built ? *built->partition : e.requireGraph();
  if (!g.attr("shape"))
    missingAttr(g, "shape");
  const IndexedGraph &idx = g.index();
  int ia = idx.findByName(a[0]), ib = idx.findByName(a[1]);
  std::vector<std::string> names;
  for (const auto &n : idx.nodes)
    names.push_back(n.node->name);
  if (ia < 0)
    fail("no node named '", a[0], "'", didYouMean(a[0], names));
  if (ib < 0)
    fail("no node named '", a[1], "'", didYouMean(a[1], names));
  int opt = built                 ? built->partitionOptLevel
            : g.attr("opt_level") ? static_cast<int>(g.attr("opt_level")->num)
                                  : e.passContext_.optLevel;
  std::string rules = built ? built->fusionRules : e.passContext_.get("fusion_rules", "A");
  PartitionResult r = partitionGraph(g, opt, rules, built ? built->noFuse : e.passContext_.noFuse);
  auto reads = [&](int consumer, int producer) {
    for (const auto &in : idx.nodes[consumer].inputs)
      if (static_cast<int>(in.nodeId) == producer)
        return true;
    return false;
  };
  int p = ia, c = ib;
  if (!reads(c, p))
    std::swap(p, c);
  auto groupText = [&](int nid) { return "group " + idx.nodes[r.root[nid]].node->name; };
  out << "(rules " << rules << ", opt_level " << opt
      << (built ? "; the partition this step's functions were made from" : "") << ")\n";
  if (!reads(c, p)) {
    out << a[0] << " and " << a[1] << " are not connected by an edge; " << a[0] << " is in "
        << groupText(ia) << ", " << a[1] << " in " << groupText(ib)
        << (r.root[ia] == r.root[ib] ? " (the same group)" : "") << "\n";
    return;
  }
  // An edge of a QDQ region: whether FakeQuantizationToInteger makes it integer, or what keeps it
  // float, before what fusion does with it.
  if (!built && g.attr("dtype"))
    if (std::string fq = fakeQuantizationEdge(g, e.passContext_, static_cast<uint32_t>(p),
                                              static_cast<uint32_t>(c));
        !fq.empty())
      out << fq << "\n";
  bool fused = r.root[p] == r.root[c];
  out << names[p] << " -> " << names[c] << ": "
      << (fused ? "fused, in " + groupText(c)
                : "not fused: " + names[p] + " is in " + groupText(p) + ", " + names[c] + " in " +
                      groupText(c))
      << "\n  " << r.why.at({static_cast<uint32_t>(p), static_cast<uint32_t>(c)}) << "\n";
}

namespace {

// One fusion group of a step as :compare sees it: its root, members by name, function, and the
// kernel's time in the step's last :profile (negative when not profiled).
struct ComparedGroup {
  std::string root, function;
  std::vector<std::string> members;
  double ms = -1;
  /// A built step's function: its loops and schedule (the step's library keeps them alive).
  const backend::LoweredFunction *lowered = nullptr;
};

// How a function of one build compares with the function of another that computes the same
// group: the same loops, or what changed — the schedule's steps (tiles, splits, vector
// widths) or only the loops they made.
std::string codeChange(const backend::LoweredFunction &a, const backend::LoweredFunction &b) {
  if (backend::printLowered(a) == backend::printLowered(b))
    return "the same loops";
  std::string sa = a.schedule ? a.schedule->describe() : "",
              sb = b.schedule ? b.schedule->describe() : "";
  if (sa == sb)
    return "loops changed, the same schedule";
  // The first schedule step that differs, from each side.
  std::vector<std::string> la = splitList(sa, '\n'), lb = splitList(sb, '\n');
  size_t i = 0;
  while (i < la.size() && i < lb.size() && la[i] == lb[i])
    ++i;
  auto step = [&](const std::vector<std::string> &l) {
    if (i >= l.size())
      return std::string("nothing");
    std::string t = l[i];
    t.erase(0, t.find_first_not_of(' '));
    return "'" + t + "'";
  };
  return "schedule changed: " + step(la) + " became " + step(lb);
}

// The groups of history step `at`: a built step's from the partition its build made (with the
// functions its deploy graph calls), a partitioned step's as GraphFusePartition left them.
std::vector<ComparedGroup> groupsOfStep(const Step &step, size_t at, FunctionNames names,
                                        const std::string &target) {
  const Graph &g = step.graph;
  const FusedModule *built = builtPartition(g);
  const Graph &part = built ? *built->partition : g;
  if (!part.attr("group_root") || !part.attr("group_master") || !part.attr("pattern"))
    fail("step ", at, " (", step.label,
         ") is neither partitioned nor built: apply GraphFusePartition or :build first");
  const IndexedGraph &idx = part.index();
  std::vector<ComparedGroup> groups;
  for (const FusedGroup &grp : fusedGroups(part)) {
    ComparedGroup c;
    c.root = idx.nodes[grp.root].node->name;
    for (uint32_t m : grp.members)
      c.members.push_back(idx.nodes[m].node->name);
    if (int call = built ? kernelOfRoot(g, c.root) : -1; call >= 0) {
      c.function = g.index().nodes[static_cast<size_t>(call)].node->parsed.getStr("func_name");
      if (auto it = step.profile.find(static_cast<uint32_t>(call)); it != step.profile.end())
        c.ms = it->second.ms;
      if (auto lib = backend::builtLibrary(g))
        if (auto f = lib->lowered.find(c.function); f != lib->lowered.end())
          c.lowered = &f->second;
    }
    if (c.function.empty())
      c.function = names.assign(kernelKey(part, grp, target), readableName(idx, grp));
    groups.push_back(std::move(c));
  }
  return groups;
}

} // namespace

void Commands::PassTopic::compare(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 2, 2, ":compare A B (two history steps, partitioned or built)");
  if (e.history_.empty())
    fail("no steps yet");
  size_t ia = stepArgument(e, a[0]), ib = stepArgument(e, a[1]);
  std::string target = e.passContext_.get("target", "llvm");
  std::vector<ComparedGroup> ga = groupsOfStep(e.history_[ia], ia, e.functionNames_, target),
                             gb = groupsOfStep(e.history_[ib], ib, e.functionNames_, target);
  // A group is the same in both by its members' names, or by provenance (GroupMatcher).
  auto key = [](const ComparedGroup &g) {
    return std::set<std::string>(g.members.begin(), g.members.end());
  };
  std::set<std::string> namesA, namesB;
  for (const auto &g : ga)
    namesA.insert(g.members.begin(), g.members.end());
  for (const auto &g : gb)
    namesB.insert(g.members.begin(), g.members.end());
  GroupMatcher matcher(e.historyGraphs(), ia, namesA, ib, namesB);
  const std::map<std::string, std::string> &foldedB = matcher.foldedIntoB,
                                           &foldedA = matcher.foldedIntoA;
  auto sameGroup = [&](const ComparedGroup &a, const ComparedGroup &b) {
    return matcher.same(key(a), key(b));
  };
  auto sameInB = [&](const ComparedGroup &g) {
    return std::any_of(gb.begin(), gb.end(),
                       [&](const ComparedGroup &b) { return sameGroup(g, b); });
  };
  auto sameInA = [&](const ComparedGroup &g) {
    return std::any_of(ga.begin(), ga.end(),
                       [&](const ComparedGroup &a) { return sameGroup(a, g); });
  };
  size_t same = 0;
  for (const auto &g : ga)
    same += sameInB(g);
  auto time = [&](double ms) {
    if (ms < 0)
      return std::string();
    if (e.hideTimings_)
      return std::string(", - ms");
    char buf[32];
    std::snprintf(buf, sizeof buf, ", %.4f ms", ms);
    return std::string(buf);
  };
  auto line = [&](const ComparedGroup &g) {
    return "  group " + g.root + ": " + joinNames(g.members) + " (" + g.function + time(g.ms) +
           ")\n";
  };
  out << "step " << ia << " (" << e.history_[ia].label << "): " << plural(ga.size(), "group")
      << "; step " << ib << " (" << e.history_[ib].label << "): " << plural(gb.size(), "group")
      << "; " << same << " the same\n";
  for (auto [name, groups, inOther] :
       {std::tuple{ia, &ga, std::function<bool(const ComparedGroup &)>(sameInB)},
        std::tuple{ib, &gb, std::function<bool(const ComparedGroup &)>(sameInA)}}) {
    std::string text;
    for (const auto &g : *groups)
      if (!inOther(g))
        text += line(g);
    if (!text.empty())
      out << "only in step " << name << ":\n" << text;
  }
  for (auto [step, folded] : {std::pair{ib, &foldedB}, std::pair{ia, &foldedA}}) {
    if (folded->empty())
      continue;
    std::vector<std::string> text;
    for (const auto &[from, to] : *folded)
      text.push_back(from + " into " + to);
    out << "nodes step " << step << "'s build folded into others: " << joinNames(text) << "\n";
  }
  // The nodes both steps have whose group differs.
  std::map<std::string, const ComparedGroup *> ofA, ofB;
  for (const auto &g : ga)
    for (const auto &m : g.members)
      ofA[m] = &g;
  for (const auto &g : gb)
    for (const auto &m : g.members)
      ofB[m] = &g;
  std::vector<std::string> moved;
  for (const auto &[name, g] : ofA)
    if (auto it = ofB.find(name); it != ofB.end() && !sameGroup(*g, *it->second))
      moved.push_back(name);
  out << "nodes that changed group: " << (moved.empty() ? "none" : joinNames(moved)) << "\n";
  // Functions paired by what they compute — the same group in both steps — whatever the names
  // (a rebuild counts names on: fuse_dense becomes fuse_dense_1), then by name; each pair of
  // built functions says whether its code changed, and both times where both were profiled.
  std::vector<std::string> both;
  std::set<std::string> pairedA, pairedB, seen;
  auto pair = [&](const ComparedGroup &x, const ComparedGroup &y) {
    if (!seen.insert(x.function + "\n" + y.function).second)
      return;
    pairedA.insert(x.function);
    pairedB.insert(y.function);
    std::vector<std::string> notes;
    if (x.lowered && y.lowered)
      notes.push_back(codeChange(*x.lowered, *y.lowered));
    if (x.ms >= 0 && y.ms >= 0)
      notes.push_back(time(x.ms).substr(2) + ", " + time(y.ms).substr(2));
    both.push_back(x.function + (x.function == y.function ? "" : " = " + y.function) +
                   (notes.empty() ? "" : " (" + joinNames(notes) + ")"));
  };
  for (const auto &x : ga)
    for (const auto &y : gb)
      if (sameGroup(x, y))
        pair(x, y);
  for (const auto &x : ga)
    for (const auto &y : gb)
      if (x.function == y.function && !pairedA.count(x.function) && !pairedB.count(y.function))
        pair(x, y);
  std::vector<std::string> onlyA, onlyB;
  for (const auto &g : ga)
    if (!pairedA.count(g.function) &&
        std::find(onlyA.begin(), onlyA.end(), g.function) == onlyA.end())
      onlyA.push_back(g.function);
  for (const auto &g : gb)
    if (!pairedB.count(g.function) &&
        std::find(onlyB.begin(), onlyB.end(), g.function) == onlyB.end())
      onlyB.push_back(g.function);
  std::sort(onlyA.begin(), onlyA.end());
  std::sort(onlyB.begin(), onlyB.end());
  out << "functions only in step " << ia << ": " << (onlyA.empty() ? "none" : joinNames(onlyA))
      << "\nfunctions only in step " << ib << ": " << (onlyB.empty() ? "none" : joinNames(onlyB))
      << "\nfunctions in both, paired by the groups they compute: "
      << (both.empty() ? "none" : joinNames(both)) << "\n";
}

void Commands::PassTopic::trace(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 1, 1, ":trace on|off");
  auto &insts = e.passContext_.instruments;
  auto isTrace = [](const auto &i) { return i->name() == "trace"; };
  insts.erase(std::remove_if(insts.begin(), insts.end(), isTrace), insts.end());
  if (a[0] == "on")
    insts.push_back(std::make_shared<TraceInstrument>(e.sink_));
  else if (a[0] != "off")
    fail("usage: :trace on|off");
  out << "trace " << a[0] << "\n";
}

void Commands::PassTopic::instrument(Engine &e, const Args &a, const std::string &,
                                     std::ostream &out) {
  auto &insts = e.passContext_.instruments;
  if (a.empty()) {
    if (insts.empty())
      out << "(no instruments)\n";
    for (const auto &i : insts)
      out << i->name() << "\n";
    return;
  }
  if (a[0] == "off") {
    needArgs(a, 1, 1, ":instrument off");
    insts.clear();
    out << "instruments off\n";
    return;
  }
  std::shared_ptr<PassInstrument> inst;
  if (a[0] == "print-before" || a[0] == "print-after" || a[0] == "print-changed") {
    if (a.size() < 2)
      fail("usage: :instrument ", a[0], " PASS …|all");
    std::set<std::string> names;
    for (size_t i = 1; i < a.size(); ++i) {
      if (a[i] == "all" && a.size() == 2)
        break;
      requirePass(a[i]);
      names.insert(a[i]);
    }
    auto when =
        a[0] == "print-before" ? PrintInstrument::When::Before : PrintInstrument::When::After;
    inst = std::make_shared<PrintInstrument>(e.sink_, when, names, a[0] == "print-changed");
  } else if (a[0] == "timing" || a[0] == "effects" || a[0] == "names") {
    needArgs(a, 1, 1, cat(":instrument ", a[0]));
    if (a[0] == "timing")
      inst = std::make_shared<TimingInstrument>();
    else if (a[0] == "names")
      inst = std::make_shared<NamesInstrument>(e.sink_);
    else
      inst = std::make_shared<EffectsInstrument>(e.sink_);
  } else {
    fail("unknown instrument '", a[0], "'",
         didYouMean(a[0], {"print-before", "print-after", "print-changed", "timing", "effects",
                           "names", "off"}),
         "; kinds are print-before, print-after, print-changed, names, timing, effects, "
         "off");
  }
  insts.push_back(inst);
  out << "instrument " << inst->name() << "\n";
}

void Commands::PassTopic::timing(Engine &e, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":timing");
  for (const auto &i : e.passContext_.instruments)
    if (auto t = std::dynamic_pointer_cast<TimingInstrument>(i)) {
      std::string tree = t->render();
      out << (tree.empty() ? "(no passes timed yet)\n" : tree);
      return;
    }
  fail("no timing instrument: add one with :instrument timing");
}

void Commands::PassTopic::pipeline(Engine &e, const Args &, const std::string &rest,
                                   std::ostream &out) {
  // The pass list may contain spaces inside (…); the context options come after it.
  std::string list = rest, opts;
  for (const char *key : {" opt_level=", " disabled=", " required="}) {
    size_t at = rest.find(key);
    if (at != std::string::npos && at < list.size())
      list = rest.substr(0, at);
  }
  opts = rest.substr(list.size());
  if (list.find_first_not_of(" \t") == std::string::npos)
    fail("usage: :pipeline P1,P2,… [opt_level=N] [disabled=A,B] [required=C]");
  std::vector<PipelineEntry> entries = parsePipeline(list);
  PassContext ctx = e.passContext_;
  auto names = [](const std::string &v) {
    std::set<std::string> out;
    for (const auto &n : splitList(v, ','))
      if (!n.empty())
        out.insert(requirePass(n).name);
    return out;
  };
  for (const auto &o : splitArgs(opts)) {
    size_t eq = o.find('=');
    std::string k = o.substr(0, eq), v = eq == std::string::npos ? "" : o.substr(eq + 1);
    if (k == "opt_level" && v.size() == 1 && v[0] >= '0' && v[0] <= '3')
      ctx.optLevel = v[0] - '0';
    else if (k == "disabled")
      ctx.disabledPass = names(v);
    else if (k == "required")
      ctx.requiredPass = names(v);
    else
      fail("pipeline: bad context option '", o,
           "'; use opt_level=0..3, disabled=A,B or required=C");
  }
  const Graph before = e.requireGraph(); // a copy: pushStep may move the history
  for (const auto &en : entries) {
    std::string why;
    if (!passEnabled(*en.pass, ctx, &why))
      out << "skipped " << en.pass->name << ": " << why << "\n";
  }
  auto t0 = Clock::now();
  Graph after = runSequential(before, entries, ctx);
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  std::string label = "pipeline " + rest;
  e.pushStep(after, label, ms, false);
  out << "step " << e.cursor_ << ": " << label << " (" << e.current()->change << ")\n";
}

void Commands::PassTopic::explain(Engine &e, const Args &a, const std::string &,
                                  std::ostream &out) {
  needArgs(a, 1, 1, ":explain PASS");
  const PassInfo &p = requirePass(a[0]);
  std::string why;
  bool on = passEnabled(p, e.passContext_, &why);
  out << p.name << ": " << p.summary << "\n";
  out << "in a pipeline now: " << (on ? "runs" : "skipped") << " (" << why << ")\n";
  if (!p.required.empty())
    out << "runs first, every time: " << joinNames(p.required) << "\n";
  const Graph *g = e.current() ? &e.current()->graph : nullptr;
  for (const auto &n : p.needs) {
    out << "needs " << n << ": ";
    if (!g)
      out << "no current graph\n";
    else if (g->attr(n))
      out << "present\n";
    else
      out << "missing; provided by " << joinNames(PassRegistry::get().providersOf(n), " or ")
          << "\n";
  }
  if (!p.provides.empty())
    out << "provides " << joinNames(p.provides) << "\n";
  out << (p.changesGraph ? "rebuilds the graph\n" : "adds attributes, keeps the graph\n");
}

void Commands::PassTopic::loadPass(Engine &e, const Args &a, const std::string &,
                                   std::ostream &out) {
  needArgs(a, 1, 1, ":load-pass FILE.so");
  if (!e.trust().plugins)
    fail(":load-pass ", a[0],
         ": a shared session loads no plugin (a plugin runs its own code) unless loupe runs with "
         "--allow-plugins");
  std::string path = a[0];
  if (path.find('/') == std::string::npos) {
    std::vector<std::string> dirs;
    if (const char *env = std::getenv("LOUPE_PLUGIN_PATH"))
      dirs = splitList(env, ':');
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec)
      dirs.push_back((exe.parent_path().parent_path() / "plugins").string());
    for (const auto &d : dirs)
      if (!d.empty() && std::filesystem::exists(d + "/" + path)) {
        path = d + "/" + path;
        break;
      }
    if (path.find('/') == std::string::npos)
      fail("no plugin '", a[0], "' in $LOUPE_PLUGIN_PATH or the build's plugins/ folder");
  }
  auto names = loadPassPlugin(path, a[0]);
  out << "loaded " << joinNames(names) << " from " << a[0] << "\n";
}

void Commands::PassTopic::passes(Engine &, const Args &a, const std::string &, std::ostream &out) {
  needArgs(a, 0, 0, ":passes");
  for (const PassInfo *p : PassRegistry::get().all()) {
    out << pad(p->name, 20) << p->summary << "\n";
    out << pad("", 20) << "level " << p->optLevel
        << (p->needs.empty() ? "" : "; needs " + joinNames(p->needs))
        << (p->provides.empty() ? "" : "; provides " + joinNames(p->provides))
        << (p->changesGraph ? "; rebuilds the graph" : "") << "\n";
  }
}

std::vector<Commands::Listed> Commands::passCommands() {
  using T = PassTopic;
  return {
      {"space",
       {"apply", "P1 [P2 …]", "applies passes in order; the result is a new history step",
        T::apply}},
      {"set",
       {"groups", "", "the fusion groups: roots, masters, one line per node, then each group",
        T::groups}},
      {"groups",
       {"why", "A B",
        "explains from the fusion rules why nodes A and B did or did not fuse; on an edge of a "
        "dequantize → op → quantize region, first whether FakeQuantizationToInteger makes it "
        "integer or which op keeps it float",
        T::why}},
      {"why",
       {"precision", "NODE",
        "why ToMixedPrecision (:build precision=bf16) computes a node in bfloat16 or keeps it "
        "float32",
        T::precision}},
      {"precision",
       {"compare", "A B",
        "two history steps' fusion side by side (each partitioned or built): the groups only one "
        "has, the nodes that changed group, the functions of each and, where both were profiled, "
        "their times",
        T::compare}},
      {"quantize",
       {"trace", "on|off", "prints every pass applied and the graph after it", T::trace}},
      {"trace",
       {"instrument", "[KIND …]",
        "adds pass instruments: print-before P|all, print-after P|all, print-changed P|all, "
        "names, timing, effects; `off` removes all; no argument lists them",
        T::instrument}},
      {"instrument",
       {"timing", "", "prints the timing instrument's tree of pass times (µs) and clears it",
        T::timing}},
      {"timing",
       {"pipeline", "P1,P2(opt=v),… [opt_level=N] [disabled=A,B] [required=C]",
        "runs passes as a Sequential under a pass context, with Relay's rules", T::pipeline}},
      {"pipeline",
       {"explain", "PASS", "would PASS run in a pipeline now, and why; what it needs and provides",
        T::explain}},
      {"diff",
       {"load-pass", "FILE.so",
        "loads user-written passes from a shared library (a bare name is searched in "
        "$LOUPE_PLUGIN_PATH, then in the build's plugins/ folder)",
        T::loadPass}},
      {"load-pass", {"passes", "", "lists the registered passes", T::passes}},
  };
}

} // namespace loupe
