// FuseOps: Relay's dominator-tree fusion (relay-spec §2), written as an analysis that produces
// the same `group_root`, `group_master` and `pattern` attributes as GraphFusePartition, so the
// two algorithms can be compared on one graph and either can feed GraphFuseCompile.
//
// 1. The forward graph: one node per graph node (ids are already post-DFS order); variables,
//    constants and graph outputs are "extern" (they never fuse forward). An edge carries the
//    consumer's pattern, downgraded to ElemWise for a Broadcast consumer whose input has the
//    output's shape.
// 2. The post-dominator tree, consumers first, by folding LCAs over each node's consumers; each
//    tree node keeps the worst pattern on the way to its post-dominator.
// 3. Union-find partition in phases: phase 0 fuses an OutEWiseFusable anchor into its
//    post-dominator when the whole way is elementwise and every node on it is at most
//    Broadcast, and fuses ElemWise/Broadcast nodes forward (intermediate nodes at most
//    Injective, the sink anything but opaque); phase 1 repeats the latter and adds Injective
//    nodes (all at most Injective). Phase 2 (injective producers into tuples) never applies:
//    Loupe's graphs have no tuple nodes. A group never grows past `max_depth` nodes (256).
// 4. fuse_opt_level 0 (or the context's opt_level when it is -1) leaves every node alone.
// Patterns are Loupe's (NNVM's seed-era table), not Relay's own table.
#include "passes/Pass.h"

#include "core/Error.h"

#include <algorithm>
#include <functional>
#include <set>

namespace loupe {

namespace {

struct Edge {
  uint32_t to;
  int pattern;
};

struct Group {
  int parent = -1;
  int pattern = kOpaque;
  int anchor = -1;
  int numNodes = 1;
};

class Partitioner {
public:
  Partitioner(const Graph &g, const std::set<std::string> &noFuse, int maxDepth)
      : idx_(g.index()), maxDepth_(maxDepth) {
    const auto &shapes = g.attr("shape")->shapes;
    uint32_t n = idx_.numNodes();
    pattern_.assign(n, kOpaque);
    extern_.assign(n, false);
    out_.resize(n);
    for (uint32_t nid = 0; nid < n; ++nid) {
      const Node &node = *idx_.nodes[nid].node;
      if (node.isVariable() || node.op->name == "const") {
        extern_[nid] = node.isVariable(); // constants are params but may still be consumed
        continue;                         // pattern stays Opaque: tensors never fuse
      }
      int pt = noFuse.count(node.op->name) ? kOpaque : node.op->pattern;
      pattern_[nid] = pt;
      for (const auto &e : idx_.nodes[nid].inputs) {
        int ep = pt;
        if (pt == kBroadcast && shapes[idx_.entryId(e)] == shapes[idx_.entryId(nid, 0)])
          ep = kElemWise;
        out_[e.nodeId].push_back({nid, ep});
      }
    }
    for (const auto &h : idx_.heads)
      extern_[h.nodeId] = true;
  }

  void run(int optLevel) {
    uint32_t n = idx_.numNodes();
    groups_.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      groups_[i].pattern = pattern_[i];
      if (pattern_[i] == kOutEWiseFusable)
        groups_[i].anchor = static_cast<int>(i);
    }
    if (optLevel == 0)
      return;
    postDominators();
    for (int phase = 0; phase < 2; ++phase)
      for (uint32_t i = 0; i < n; ++i)
        fuseFrom(i, phase);
  }

  int root(int i) {
    while (groups_[i].parent >= 0) {
      int p = groups_[i].parent;
      if (groups_[p].parent >= 0)
        groups_[i].parent = groups_[p].parent; // path halving
      i = p;
    }
    return i;
  }
  const Group &group(int i) { return groups_[root(i)]; }

private:
  const IndexedGraph &idx_;
  int maxDepth_;
  std::vector<int> pattern_;
  std::vector<bool> extern_;
  std::vector<std::vector<Edge>> out_;
  std::vector<int> domParent_, domDepth_, domPattern_;
  std::vector<Group> groups_;

  void postDominators() {
    uint32_t n = idx_.numNodes();
    domParent_.assign(n, -1);
    domDepth_.assign(n, 1);
    domPattern_.assign(n, kOpaque);
    for (uint32_t i = n; i-- > 0;) {
      if (extern_[i])
        continue;
      int parent = -1, pt = kElemWise;
      bool first = true;
      for (const Edge &e : out_[i]) {
        parent = first ? static_cast<int>(e.to) : lca(parent, static_cast<int>(e.to), pt);
        pt = std::max(pt, e.pattern);
        first = false;
      }
      domParent_[i] = parent;
      domDepth_[i] = parent >= 0 ? domDepth_[parent] + 1 : 1;
      domPattern_[i] = pt;
    }
  }

  int lca(int a, int b, int &pt) {
    while (a != b) {
      if (a < 0 || b < 0)
        return -1;
      if (domDepth_[a] > domDepth_[b]) {
        pt = std::max(pt, domPattern_[a]);
        a = domParent_[a];
      } else if (domDepth_[b] > domDepth_[a]) {
        pt = std::max(pt, domPattern_[b]);
        b = domParent_[b];
      } else {
        pt = std::max({pt, domPattern_[a], domPattern_[b]});
        a = domParent_[a];
        b = domParent_[b];
      }
    }
    return a;
  }

  // Visits every node on a path from src (excluded) to sink (included, not passed).
  bool checkPath(uint32_t src, uint32_t sink, const std::function<bool(int, bool)> &cond) {
    std::set<uint32_t> seen;
    std::vector<uint32_t> stack;
    for (const Edge &e : out_[src])
      stack.push_back(e.to);
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      if (!seen.insert(v).second)
        continue;
      if (!cond(group(static_cast<int>(v)).pattern, v == sink))
        return false;
      if (v == sink)
        continue;
      for (const Edge &e : out_[v])
        stack.push_back(e.to);
    }
    return true;
  }

  // Every node from src (included) up to sink, for merging and the depth limit.
  std::vector<uint32_t> pathNodes(uint32_t src, uint32_t sink) {
    std::set<uint32_t> seen{src};
    std::vector<uint32_t> order{src}, stack;
    for (const Edge &e : out_[src])
      stack.push_back(e.to);
    while (!stack.empty()) {
      uint32_t v = stack.back();
      stack.pop_back();
      if (v == sink || !seen.insert(v).second)
        continue;
      order.push_back(v);
      for (const Edge &e : out_[v])
        stack.push_back(e.to);
    }
    return order;
  }

  void merge(int child, int parent) {
    int c = root(child), p = root(parent);
    if (c == p)
      return;
    groups_[p].numNodes += groups_[c].numNodes;
    groups_[c].parent = p;
    if (groups_[c].anchor >= 0) {
      if (groups_[p].anchor >= 0)
        fail("FuseOps: cannot merge two complex groups together");
      groups_[p].anchor = groups_[c].anchor;
      groups_[p].pattern = std::max(groups_[p].pattern, groups_[c].pattern);
    }
  }

  void fuseFrom(uint32_t n, int phase) {
    const Group &g = groups_[n]; // the node's own record, as Relay reads it
    int sink = domParent_.empty() ? -1 : domParent_[n];
    if (g.pattern == kOpaque || sink < 0)
      return;
    std::vector<uint32_t> path = pathNodes(n, static_cast<uint32_t>(sink));
    int size = group(sink).numNodes;
    for (uint32_t v : path)
      size += groups_[v].numNodes;
    if (size > maxDepth_)
      return;
    if (root(static_cast<int>(n)) == root(sink))
      return;
    auto commit = [&] {
      for (uint32_t v : path)
        merge(static_cast<int>(v), sink);
    };
    int dp = domPattern_[n];
    if (g.pattern == kOutEWiseFusable) {
      if (phase == 0 && dp == kElemWise &&
          checkPath(n, sink, [](int pt, bool) { return pt <= kBroadcast; }))
        commit();
    } else if (g.pattern <= kBroadcast) {
      if ((dp <= kInjective || dp == kCommReduce) && checkPath(n, sink, [](int pt, bool isSink) {
            return isSink ? pt <= kOutEWiseFusable : pt <= kInjective;
          }))
        commit();
    } else if (g.pattern == kInjective) {
      if (phase == 1 && checkPath(n, sink, [](int pt, bool) { return pt <= kInjective; }))
        commit();
    }
    // CommReduce never starts a fusion: a reduction only receives producers.
  }
};

Graph fuseOps(const Graph &src, const PassContext &ctx) {
  int level = ctx.getInt("FuseOps", "fuse_opt_level", -1, -1, 3);
  if (level == -1)
    level = ctx.optLevel;
  int maxDepth = ctx.getInt("FuseOps", "max_depth", 256, 1, 1 << 20);
  Graph g = src;
  Partitioner part(g, ctx.noFuse, maxDepth);
  part.run(level);
  const IndexedGraph &idx = g.index();
  std::vector<int64_t> root, master, pattern;
  for (uint32_t i = 0; i < idx.numNodes(); ++i) {
    const Group &grp = part.group(static_cast<int>(i));
    int r = part.root(static_cast<int>(i));
    root.push_back(r);
    bool var = idx.nodes[i].node->isVariable();
    master.push_back(var ? -1 : (grp.anchor >= 0 ? grp.anchor : r));
    pattern.push_back(grp.pattern);
  }
  g.attrs["group_root"] = GraphAttr::listInt(root);
  g.attrs["group_master"] = GraphAttr::listInt(master);
  g.attrs["pattern"] = GraphAttr::listInt(pattern);
  return g;
}

} // namespace

void registerFuseOpsPass() {
  PassRegistry::get().add(
      {.name = "FuseOps",
       .summary = "Relay's post-dominator fusion, as group_root/group_master/pattern",
       .optLevel = 0,
       .needs = {"shape", "dtype"},
       .provides = {"group_root", "group_master", "pattern"},
       .run = fuseOps,
       .required = {"InferShape", "InferType"},
       .options = {"fuse_opt_level", "max_depth"}});
}

} // namespace loupe
