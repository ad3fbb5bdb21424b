// Provenance: where a build put each node of the graph it started from — the partition a deploy
// graph was compiled from, the kernel (and the call of a shared kernel) that computes a node,
// the node a rewrite folded another into, and which fusion groups of two steps are the same.
#include "passes/Provenance.h"

#include "passes/Fusion.h"

#include <string>
#include <vector>

namespace loupe {

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

std::optional<MasterNode> kernelMaster(const Graph &deploy, uint32_t call) {
  const FusedModule *built = builtPartition(deploy);
  if (!built || call >= deploy.index().numNodes())
    return std::nullopt;
  const Graph &part = *built->partition;
  const IndexedGraph &pidx = part.index();
  int root = pidx.findByName(deploy.index().nodes[call].node->name);
  const GraphAttr *masters = part.attr("group_master");
  if (root < 0 || !masters || masters->ints.size() != pidx.numNodes())
    return std::nullopt;
  int64_t master = masters->ints[static_cast<size_t>(root)];
  if (master < 0 || static_cast<size_t>(master) >= pidx.numNodes())
    master = root;
  const Node &n = *pidx.nodes[static_cast<size_t>(master)].node;
  if (n.isVariable())
    return std::nullopt;
  return MasterNode{n.name, n.op->name};
}

std::map<std::string, std::vector<std::string>>
foldedSourceNodes(const Graph &deploy, const Graph &source, const std::set<std::string> &params) {
  std::map<std::string, std::vector<std::string>> into;
  const FusedModule *built = builtPartition(deploy);
  if (!built)
    return into;
  const IndexedGraph &sidx = source.index();
  const IndexedGraph &pidx = built->partition->index();
  std::vector<bool> onDataPath(sidx.numNodes());
  for (uint32_t nid = 0; nid < sidx.numNodes(); ++nid) {
    const Node &n = *sidx.nodes[nid].node;
    if (n.isVariable()) {
      onDataPath[nid] = !params.count(n.name);
      continue;
    }
    for (const auto &in : sidx.nodes[nid].inputs)
      onDataPath[nid] = onDataPath[nid] || onDataPath[in.nodeId];
    if (!onDataPath[nid] || pidx.findByName(n.name) >= 0)
      continue;
    if (std::string p = foldedInto(source, *built->partition, n.name); !p.empty())
      into[p].push_back(n.name);
  }
  return into;
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
std::map<std::string, std::string> foldings(const std::vector<const Graph *> &history,
                                            const std::set<std::string> &from,
                                            const std::set<std::string> &inTo, size_t to) {
  std::map<std::string, std::string> into;
  const FusedModule *built = to < history.size() ? builtPartition(*history[to]) : nullptr;
  if (!built || to == 0)
    return into;
  for (const std::string &n : from)
    if (!inTo.count(n))
      if (std::string f = foldedInto(*history[to - 1], *built->partition, n); !f.empty())
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

GroupMatcher::GroupMatcher(const std::vector<const Graph *> &history, size_t a,
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

} // namespace loupe
