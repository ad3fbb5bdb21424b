// FusionView: groups from passes/Fusion (the same reading GraphFuseCompile and `:groups` use)
// and, for deploy graphs, from the FusedModule's functions; colours by group order, which is
// the same order in both (GraphFuseCompile emits tvm_ops in root order).
#include "view/FusionView.h"

#include "core/FusedModule.h"
#include "core/Op.h"
#include "passes/Fusion.h"
#include "passes/Provenance.h"

#include <algorithm>

namespace loupe::gui {

namespace {

// Twelve hues far apart (ColorBrewer's Paired, reordered so neighbours differ), as RGBA.
constexpr uint32_t kPalette[] = {0x1f78b4ff, 0xe31a1cff, 0x33a02cff, 0xff7f00ff,
                                 0x6a3d9aff, 0xb15928ff, 0xa6cee3ff, 0xfb9a99ff,
                                 0xb2df8aff, 0xfdbf6fff, 0xcab2d6ff, 0xffff99ff};

} // namespace

int paletteSize() { return static_cast<int>(sizeof kPalette / sizeof kPalette[0]); }

uint32_t groupColour(int index) { return kPalette[index % paletteSize()]; }

std::vector<int> nodeGroups(const std::vector<GroupView> &groups, size_t numNodes) {
  std::vector<int> groupOf(numNodes, -1);
  for (const GroupView &gv : groups)
    for (uint32_t m : gv.members)
      if (m < groupOf.size())
        groupOf[m] = gv.index;
  return groupOf;
}

std::string groupSummary(const GroupView &g) {
  return g.function + "\npattern " + g.pattern + "\nroot " + g.rootName + "\nmaster " +
         (g.masterName.empty() ? "None" : g.masterName);
}

std::string groupBadge(const GroupView &g, const std::string &name) {
  return std::string(g.rootName == name ? "R" : "") + (g.masterName == name ? "M" : "");
}

bool hasGroups(const Graph &g) {
  return (g.attr("group_root") && g.attr("group_master") && g.attr("pattern")) || g.attr("module");
}

std::vector<GroupView> fusionGroups(const Graph &g) {
  std::vector<GroupView> groups;
  const IndexedGraph &idx = g.index();
  if (g.attr("group_root") && g.attr("group_master") && g.attr("pattern")) {
    for (const FusedGroup &fg : fusedGroups(g)) {
      GroupView v;
      v.index = static_cast<int>(groups.size());
      v.members = fg.members;
      for (uint32_t m : fg.members)
        v.memberNames.push_back(idx.nodes[m].node->name);
      v.root = fg.root;
      v.rootName = idx.nodes[fg.root].node->name;
      if (fg.master >= 0)
        v.masterName = idx.nodes[static_cast<uint32_t>(fg.master)].node->name;
      v.pattern = patternName(fg.pattern);
      v.function = readableName(idx, fg);
      v.colour = groupColour(v.index);
      groups.push_back(std::move(v));
    }
    return groups;
  }
  const GraphAttr *m = g.attr("module");
  if (!m || !m->opaque)
    return groups;
  auto module = std::static_pointer_cast<const FusedModule>(m->opaque);
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable() || n.op->name != "tvm_op")
      continue;
    GroupView v;
    v.index = static_cast<int>(groups.size());
    v.members = {nid};
    v.root = nid;
    v.function = n.parsed.getStr("func_name");
    auto it = module->functions.find(v.function);
    // Built by :build or GraphFuseCompile: the partition names this call's own nodes (a shared
    // function's body names only its first call's), its pattern and master.
    if (std::vector<std::string> fused = fusedNodeNames(g, nid); !fused.empty()) {
      const Graph &part = *module->partition;
      const IndexedGraph &pidx = part.index();
      int root = pidx.findByName(n.name);
      v.memberNames = fused;
      v.rootName = n.name;
      if (const GraphAttr *p = part.attr("pattern"); p && root >= 0)
        v.pattern = patternName(static_cast<int>(p->ints[static_cast<size_t>(root)]));
      if (const GraphAttr *ms = part.attr("group_master"); ms && root >= 0)
        if (int64_t master = ms->ints[static_cast<size_t>(root)]; master >= 0)
          v.masterName = pidx.nodes[static_cast<size_t>(master)].node->name;
    } else if (it != module->functions.end()) {
      const Graph &body = it->second->body;
      const IndexedGraph &bidx = body.index();
      for (uint32_t b = 0; b < bidx.numNodes(); ++b)
        if (!bidx.nodes[b].node->isVariable())
          v.memberNames.push_back(bidx.nodes[b].node->name);
      if (!body.outputs().empty())
        v.rootName = body.outputs()[0].node->name;
    }
    v.colour = groupColour(v.index);
    groups.push_back(std::move(v));
  }
  return groups;
}

std::vector<CollapsedBox> collapsedBoxes(const Graph &g, const std::vector<GroupView> &groups,
                                         const std::set<std::string> &roots) {
  const IndexedGraph &idx = g.index();
  std::vector<CollapsedBox> boxes;
  for (const GroupView &gv : groups) {
    // A group of one node (a deploy graph's tvm_op) is drawn as it is already.
    if (!roots.count(gv.rootName) || gv.root >= idx.numNodes() || gv.members.size() < 2)
      continue;
    CollapsedBox b;
    b.members.push_back(gv.root);
    std::vector<uint32_t> rest;
    for (uint32_t m : gv.members)
      if (m != gv.root && m < idx.numNodes())
        rest.push_back(m);
    std::sort(rest.begin(), rest.end());
    b.members.insert(b.members.end(), rest.begin(), rest.end());
    // The ops in id order, the first four named.
    std::vector<uint32_t> ordered = b.members;
    std::sort(ordered.begin(), ordered.end());
    std::string ops;
    for (size_t i = 0; i < ordered.size() && i < 4; ++i)
      ops += (i ? ", " : "") + idx.nodes[ordered[i]].node->op->name;
    if (ordered.size() > 4)
      ops += ", …";
    b.lines = {gv.function, gv.pattern.empty() ? std::string("kernel") : gv.pattern,
               std::to_string(ordered.size()) + " ops: " + ops}; // two or more
    std::vector<std::string> root = nodeLines(g, gv.root, false);
    // The root's output shapes: the lines after its op, name and key attributes.
    size_t first = 2 + (keyAttributes(*idx.nodes[gv.root].node).empty() ? 0 : 1);
    for (size_t i = first; i < root.size(); ++i)
      b.lines.push_back(root[i]);
    boxes.push_back(std::move(b));
  }
  return boxes;
}

std::vector<uint32_t> sourceNodesOf(const Graph &deploy, uint32_t nid, const Graph &source) {
  const IndexedGraph &didx = deploy.index(), &sidx = source.index();
  const GraphAttr *m = deploy.attr("module");
  if (nid >= didx.numNodes() || !m || !m->opaque)
    return {};
  const Node &op = *didx.nodes[nid].node;
  if (op.isVariable() || op.op->name != "tvm_op")
    return {};
  auto module = std::static_pointer_cast<const FusedModule>(m->opaque);
  auto f = module->functions.find(op.parsed.getStr("func_name"));
  int root = sidx.findByName(op.name);
  if (f == module->functions.end() || root < 0)
    return {};
  const IndexedGraph &bidx = f->second->body.index();
  // (function body node, source node) pairs, from the function's outputs back to its inputs.
  std::vector<std::pair<uint32_t, uint32_t>> todo;
  for (const auto &h : bidx.heads)
    todo.push_back({h.nodeId, static_cast<uint32_t>(root)});
  std::set<uint32_t> found;
  while (!todo.empty()) {
    auto [b, src] = todo.back();
    todo.pop_back();
    const Node &bn = *bidx.nodes[b].node, &sn = *sidx.nodes[src].node;
    if (bn.isVariable() || sn.isVariable() || found.count(src) ||
        (bn.op != sn.op && bn.name != sn.name))
      continue; // a function argument (outside the group), or an op the build rewrote
    found.insert(src);
    const auto &bin = bidx.nodes[b].inputs, &sin = sidx.nodes[src].inputs;
    for (size_t i = 0; i < bin.size() && i < sin.size(); ++i)
      todo.push_back({bin[i].nodeId, sin[i].nodeId});
  }
  return {found.begin(), found.end()};
}

int kernelOf(const Graph &deploy, const Graph &source, uint32_t nid) {
  const IndexedGraph &didx = deploy.index();
  for (uint32_t k = 0; k < didx.numNodes(); ++k) {
    std::vector<uint32_t> nodes = sourceNodesOf(deploy, k, source);
    if (std::find(nodes.begin(), nodes.end(), nid) != nodes.end())
      return static_cast<int>(k);
  }
  return -1;
}

PartitionDiff comparePartitions(const std::vector<GroupView> &a, const std::vector<GroupView> &b,
                                const GroupMatcher *matcher) {
  auto members = [](const GroupView &g) {
    return std::set<std::string>(g.memberNames.begin(), g.memberNames.end());
  };
  auto same = [&](const GroupView &x, const GroupView &y) {
    return matcher ? matcher->same(members(x), members(y)) : members(x) == members(y);
  };
  PartitionDiff d;
  for (const GroupView &g : a)
    if (std::none_of(b.begin(), b.end(), [&](const GroupView &o) { return same(g, o); }))
      d.onlyA.insert(g.index);
  for (const GroupView &g : b)
    if (std::none_of(a.begin(), a.end(), [&](const GroupView &o) { return same(o, g); }))
      d.onlyB.insert(g.index);
  return d;
}

std::vector<GroupRegion> groupRegions(const std::vector<GroupView> &groups,
                                      const GraphLayout &layout, double margin) {
  std::vector<GroupRegion> regions;
  for (const GroupView &gv : groups) {
    if (gv.members.size() < 2)
      continue;
    GroupRegion r{gv.index, 1e300, 1e300, -1e300, -1e300};
    std::set<int> boxes; // a collapsed group is one box: no region around it
    for (uint32_t m : gv.members) {
      int k = layout.find(m);
      if (k < 0)
        continue;
      boxes.insert(k);
      const LaidNode &n = layout.nodes[static_cast<size_t>(k)];
      r.x0 = std::min(r.x0, n.x - n.w / 2 - margin);
      r.y0 = std::min(r.y0, n.y - n.h / 2 - margin);
      r.x1 = std::max(r.x1, n.x + n.w / 2 + margin);
      r.y1 = std::max(r.y1, n.y + n.h / 2 + margin);
    }
    if (boxes.size() >= 2)
      regions.push_back(r);
  }
  return regions;
}

} // namespace loupe::gui
