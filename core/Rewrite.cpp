// Rewrite: the bottom-up graph rebuilder shared by the graph-changing passes.
#include "core/Rewrite.h"

#include "core/Error.h"

namespace loupe {

Graph rewritePatterns(const Graph &g, const PatternRewrite &rewrite) {
  const IndexedGraph &idx = g.index();
  std::vector<std::vector<NodeEntry>> now(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (size_t i = 0; i < in.inputs.size(); ++i) {
      NodeEntry e = now[in.inputs[i].nodeId].at(in.inputs[i].index);
      e.version = in.inputs[i].version;
      changed |= e.node != n.inputs[i].node || e.index != n.inputs[i].index;
      inputs.push_back(e);
    }
    std::vector<NodePtr> deps;
    for (uint32_t d : in.controlDeps) {
      deps.push_back(now[d].at(0).node);
      changed |= deps.back() != n.controlDeps[deps.size() - 1];
    }
    NodePtr node = changed ? makeOpNode(*n.op, n.name, n.attrs, inputs, deps, false) : in.node;
    std::vector<NodeEntry> outs = rewrite(nid, node, [&](uint32_t id, uint32_t index) {
      if (id >= nid)
        fail("internal: a rewrite of ", n.name, " asked for node ", id, ", not yet rewritten");
      return now[id].at(index);
    });
    if (outs.empty())
      outs = outputsOf(node);
    if (outs.size() != n.numOutputs())
      fail("internal: a rewrite of ", n.name, " gave ", outs.size(), " outputs for ",
           n.numOutputs());
    now[nid] = std::move(outs);
  }
  std::vector<NodeEntry> heads;
  for (const auto &h : idx.heads) {
    NodeEntry e = now[h.nodeId].at(h.index);
    e.version = h.version;
    heads.push_back(e);
  }
  return Graph(heads);
}

Graph rewriteGraph(const Graph &g, const NodeRewrite &rewrite) {
  return rewritePatterns(g, [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &) {
    return rewrite(nid, node);
  });
}

std::string padAfterWidth(const std::vector<int64_t> &after) {
  std::string w = "(";
  for (size_t d = 0; d < after.size(); ++d)
    w += (d ? ", (0, " : "(0, ") + std::to_string(after[d]) + ")";
  return w + (after.size() == 1 ? ",)" : ")");
}

} // namespace loupe
