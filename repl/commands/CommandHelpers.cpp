// CommandHelpers: the small helpers the command files share (argument splitting, usage checks,
// step descriptions, name lists, an op's description, a compiled graph's functions).
#include "repl/commands/CommandHelpers.h"

#include "backend/Build.h"
#include "core/Error.h"
#include "core/Target.h"
#include "passes/Fusion.h"
#include "repl/Engine.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

// Splits command arguments at white space; quotes group words.
Args splitArgs(const std::string &s) {
  Args out;
  std::string cur;
  char quote = 0;
  bool have = false;
  for (char c : s) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      have = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (have)
        out.push_back(cur);
      cur.clear();
      have = false;
    } else {
      cur += c;
      have = true;
    }
  }
  if (quote)
    fail("unterminated quote in command arguments");
  if (have)
    out.push_back(cur);
  return out;
}

// "a,b,c" -> {"a", "b", "c"} (empty pieces kept, so callers decide what they mean).
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

std::vector<std::string> splitList(const std::string &text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? at : at - start));
    if (at == std::string::npos)
      return out;
    start = at + 1;
  }
}

void needArgs(const Args &a, size_t lo, size_t hi, const std::string &usage) {
  if (a.size() < lo || a.size() > hi)
    fail("usage: ", usage);
}

// "graph unchanged; added shape, dtype" — what a step did, for `:apply` and `:history`.
std::string describeChange(const Graph *before, const Graph &after) {
  std::string s = !before                      ? "new graph"
                  : before->sameOutputs(after) ? "graph unchanged"
                                               : "graph changed";
  auto changes = diffAttrs(before ? before->attrs : GraphAttrs{}, after.attrs);
  for (auto [kind, word] : {std::pair{'+', "added"}, {'~', "changed"}, {'-', "removed"}}) {
    std::string keys;
    for (const auto &c : changes)
      if (c.kind == kind)
        keys += (keys.empty() ? "" : ", ") + c.key;
    if (!keys.empty())
      s += std::string("; ") + word + " " + keys;
  }
  return s;
}

// Pads to `w` columns, counting UTF-8 characters (not bytes); a longer text keeps two spaces
// before whatever follows.
std::string pad(std::string s, size_t w) {
  size_t cols = 0;
  for (unsigned char c : s)
    cols += (c & 0xC0) != 0x80;
  s += std::string(cols + 2 <= w ? w - cols : 2, ' ');
  return s;
}

std::string joinNames(const std::vector<std::string> &v, const char *sep) {
  std::string r;
  for (const auto &x : v)
    r += (r.empty() ? "" : sep) + x;
  return r;
}

// "the graph has no attribute 'shape'; it is provided by InferShape"
[[noreturn]] void missingAttr(const Graph &g, const std::string &key) {
  auto prov = PassRegistry::get().providersOf(key);
  fail("the graph has no attribute '", key, "'",
       prov.empty() ? didYouMean(key, orderedAttrKeys(g.attrs))
                    : "; it is provided by " + joinNames(prov, " or "));
}

int64_t integerAtLeast(const std::string &key, const std::string &v, int64_t min) {
  int64_t n = min - 1;
  try {
    size_t used = 0;
    n = std::stoll(v, &used);
    if (used != v.size())
      n = min - 1;
  } catch (const std::exception &) {
  }
  if (n < min)
    fail(key, " must be ", min == 0 ? "a non-negative" : "a positive", " integer, got '", v, "'");
  return n;
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The fused functions of a compiled graph in the order its tvm_op nodes call them.
std::vector<std::string> functionOrder(const Graph &g) {
  const GraphAttr *attr = g.attr("module");
  if (!attr)
    missingAttr(g, "module");
  std::vector<std::string> names;
  for (const auto &n : g.index().nodes)
    if (!n.node->isVariable() && n.node->op->name == "tvm_op") {
      std::string fn = n.node->parsed.getStr("func_name");
      if (std::find(names.begin(), names.end(), fn) == names.end())
        names.push_back(fn);
    }
  return names;
}

// A function of the graph's module by name; the error lists the ones there are.
const FusedFunction &findFunction(const Graph &g, const std::string &name) {
  const GraphAttr *attr = g.attr("module");
  if (!attr)
    missingAttr(g, "module");
  auto module = std::static_pointer_cast<const FusedModule>(attr->opaque);
  auto it = module->functions.find(name);
  if (it == module->functions.end()) {
    std::vector<std::string> fns = functionOrder(g);
    fail("the module has no function '", name, "'", didYouMean(name, fns),
         "; functions: ", joinNames(fns));
  }
  return *it->second;
}

const FusedModule *builtPartition(const Graph &g) {
  const GraphAttr *attr = g.attr("module");
  if (!attr || !attr->opaque)
    return nullptr;
  auto module = std::static_pointer_cast<const FusedModule>(attr->opaque);
  return module->partition ? module.get() : nullptr;
}

std::vector<std::string> fusedNodeNames(const Graph &deploy, uint32_t call) {
  const FusedModule *built = builtPartition(deploy);
  if (!built || call >= deploy.index().numNodes())
    return {};
  const Graph &part = *built->partition;
  const IndexedGraph &pidx = part.index();
  int root = pidx.findByName(deploy.index().nodes[call].node->name);
  if (root < 0 || !part.attr("group_root"))
    return {};
  const auto &roots = part.attr("group_root")->ints;
  std::vector<std::string> names;
  for (uint32_t nid = 0; nid < pidx.numNodes(); ++nid)
    if (!pidx.nodes[nid].node->isVariable() && roots[nid] == root)
      names.push_back(pidx.nodes[nid].node->name);
  return names;
}

int kernelOfRoot(const Graph &deploy, const std::string &root) {
  const IndexedGraph &idx = deploy.index();
  int call = idx.findByName(root);
  if (call < 0)
    return -1;
  const Node &n = *idx.nodes[static_cast<size_t>(call)].node;
  return !n.isVariable() && n.op->name == "tvm_op" ? call : -1;
}

std::optional<KernelSite> kernelSite(const Graph &deploy, const std::string &name) {
  KernelSite site;
  site.call = kernelComputing(deploy, name);
  if (site.call < 0)
    return std::nullopt;
  const FusedModule *built = builtPartition(deploy);
  site.function =
      deploy.index().nodes[static_cast<size_t>(site.call)].node->parsed.getStr("func_name");
  site.listedAs = name;
  const IndexedGraph &pidx = built->partition->index();
  uint32_t nid = static_cast<uint32_t>(pidx.findByName(name));
  int64_t root = built->partition->attr("group_root")->ints[nid];
  auto fn = built->functions.find(site.function);
  for (const FusedGroup &grp : fusedGroups(*built->partition)) {
    if (grp.root != static_cast<uint32_t>(root))
      continue;
    for (size_t k = 0; k < grp.members.size(); ++k) {
      if (grp.members[k] != nid)
        site.fusedWith.push_back(pidx.nodes[grp.members[k]].node->name);
      else if (fn != built->functions.end() && fn->second->members.size() == grp.members.size())
        site.listedAs = pidx.nodes[fn->second->members[k]].node->name;
    }
  }
  return site;
}

std::string foldedInto(const Graph &source, const Graph &partition, const std::string &name) {
  const IndexedGraph &sidx = source.index(), &pidx = partition.index();
  int start = sidx.findByName(name);
  if (start < 0 || sidx.nodes[static_cast<size_t>(start)].node->isVariable())
    return "";
  std::vector<std::vector<uint32_t>> consumers(sidx.numNodes());
  for (uint32_t n = 0; n < sidx.numNodes(); ++n)
    for (const auto &in : sidx.nodes[n].inputs)
      consumers[in.nodeId].push_back(n);
  std::vector<bool> seen(sidx.numNodes(), false);
  std::vector<uint32_t> queue = {static_cast<uint32_t>(start)};
  seen[static_cast<size_t>(start)] = true;
  for (size_t q = 0; q < queue.size(); ++q)
    for (uint32_t c : consumers[queue[q]]) {
      if (seen[c])
        continue;
      seen[c] = true;
      const std::string &cname = sidx.nodes[c].node->name;
      int p = pidx.findByName(cname);
      if (p >= 0 && !pidx.nodes[static_cast<size_t>(p)].node->isVariable())
        return cname;
      queue.push_back(c);
    }
  return "";
}

namespace {

// Each name of `from` that `inTo` (step `to`'s names) lacks, and the node `to`'s build folded
// it into.
std::map<std::string, std::string> foldings(const std::vector<Step> &history,
                                            const std::set<std::string> &from,
                                            const std::set<std::string> &inTo, size_t to) {
  std::map<std::string, std::string> into;
  const FusedModule *built = to < history.size() ? builtPartition(history[to].graph) : nullptr;
  if (!built || to == 0)
    return into;
  for (const std::string &n : from)
    if (!inTo.count(n))
      if (std::string f = foldedInto(history[to - 1].graph, *built->partition, n); !f.empty())
        into[n] = f;
  return into;
}

// The names of `names` whose stand-in (itself, or what `folded` says) is one of `members`.
std::set<std::string> standingFor(const std::set<std::string> &names,
                                  const std::set<std::string> &members,
                                  const std::map<std::string, std::string> &folded) {
  std::set<std::string> pre;
  for (const std::string &n : names) {
    auto f = folded.find(n);
    if (members.count(f == folded.end() ? n : f->second))
      pre.insert(n);
  }
  return pre;
}

} // namespace

GroupMatcher::GroupMatcher(const std::vector<Step> &history, size_t a,
                           const std::set<std::string> &namesA, size_t b,
                           const std::set<std::string> &namesB)
    : foldedIntoB(foldings(history, namesA, namesB, b)),
      foldedIntoA(foldings(history, namesB, namesA, a)), namesA_(namesA), namesB_(namesB) {}

bool GroupMatcher::same(const std::set<std::string> &membersA,
                        const std::set<std::string> &membersB) const {
  return membersA == membersB ||
         (!foldedIntoB.empty() && standingFor(namesA_, membersB, foldedIntoB) == membersA) ||
         (!foldedIntoA.empty() && standingFor(namesB_, membersA, foldedIntoA) == membersB);
}

int kernelComputing(const Graph &deploy, const std::string &name) {
  const FusedModule *built = builtPartition(deploy);
  if (!built || !built->partition->attr("group_root"))
    return -1;
  const IndexedGraph &pidx = built->partition->index();
  int nid = pidx.findByName(name);
  if (nid < 0 || pidx.nodes[static_cast<size_t>(nid)].node->isVariable())
    return -1;
  int64_t root = built->partition->attr("group_root")->ints[static_cast<size_t>(nid)];
  return kernelOfRoot(deploy, pidx.nodes[static_cast<size_t>(root)].node->name);
}

// "16 nodes, 7 inputs, 1 output"
std::string graphSize(const IndexedGraph &idx) {
  return plural(idx.numNodes(), "node") + ", " + plural(idx.argNodes.size(), "input") + ", " +
         plural(idx.heads.size(), "output");
}

void printOpDetails(const OpDef &op, std::ostream &out) {
  out << op.name << ": " << op.doc << "\n";
  out << "  pattern: " << patternName(op.pattern) << " (" << op.pattern << ")\n";
  if (op.variadic)
    out << "  inputs:  any number, by position\n";
  else if (op.argsFn)
    out << "  inputs:  " << joinNames(op.args) << " (depends on attributes)\n";
  else
    out << "  inputs:  " << (op.args.empty() ? "none" : joinNames(op.args)) << "\n";
  if (op.numOutputsFn) {
    Attrs none;
    out << "  outputs: "
        << (op.name == "split" ? "one per part" : std::to_string(op.numOutputs(none))) << "\n";
  }
  if (!op.aliases.empty())
    out << "  aliases: " << joinNames(op.aliases) << "\n";
  for (const auto &p : op.params)
    out << "  " << pad(p.name, 16) << (p.dflt ? "= " + *p.dflt : "(required)") << "  " << p.doc
        << "\n";
}

backend::LoweredFunction builtOrLowered(const Graph &g, const std::string &name) {
  const FusedFunction &f = findFunction(g, name);
  if (auto lib = backend::builtLibrary(g))
    if (auto it = lib->lowered.find(name); it != lib->lowered.end())
      return it->second;
  return backend::lowerFunction(f);
}

void checkTarget(const std::string &target) {
  Args a = splitArgs(target);
  if (a.empty() || a[0] != "llvm")
    fail("target must be llvm (the host CPU), got '", target, "'");
  for (size_t i = 1; i < a.size(); ++i)
    if ((a[i].rfind("-mcpu=", 0) != 0 || a[i].size() == 6) &&
        (a[i].rfind("-mattr=", 0) != 0 || a[i].size() == 7))
      fail("target option '", a[i],
           "' is not supported; write llvm -mcpu=NAME [-mattr=+FEATURE,-FEATURE]");
  targetCpuOf(target); // a CPU LLVM does not know, or a malformed -mattr, is refused here
}

} // namespace loupe
