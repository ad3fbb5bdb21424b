// EliminateCommonSubexpr: merges op nodes that compute the same thing (relay-spec §3.2); like
// Relay's FunctionPass it ends by running InferType, and a Sequential runs InferType first.
//
// Walking nodes in id order (inputs rewritten first, so merges cascade), a node is replaced by
// an earlier node of the same op with equal attributes (every parameter, defaults included) and
// the very same inputs (same node and output after rewriting). Nodes without inputs (constants,
// zeros, …) and stateful ops are never merged, as in Relay.
#include "passes/Pass.h"

#include "core/Error.h"

#include <map>

namespace loupe {

namespace {

std::string keyOf(const Node &n) {
  std::string k = n.op->name + "(";
  for (const auto &e : n.inputs)
    k += std::to_string(reinterpret_cast<uintptr_t>(e.node.get())) + "." + std::to_string(e.index) +
         "." + std::to_string(e.version) + ",";
  k += ")";
  for (const auto &p : n.op->params)
    k += p.name + "=" + n.parsed.raw(p.name) + ";";
  for (const auto &[key, v] : n.attrs) // attributes the op does not parse still count
    if (!n.op->findParam(key))
      k += key + "=" + v + ";";
  return k;
}

Graph eliminate(const Graph &src, const PassContext &ctx) {
  const IndexedGraph &idx = src.index();
  std::vector<NodePtr> now(idx.numNodes());
  std::map<std::string, NodePtr> seen;
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (size_t i = 0; i < in.inputs.size(); ++i) {
      NodeEntry e{now[in.inputs[i].nodeId], in.inputs[i].index, in.inputs[i].version};
      changed |= e.node != n.inputs[i].node;
      inputs.push_back(e);
    }
    NodePtr node = in.node;
    if (changed) {
      std::vector<NodePtr> deps;
      for (uint32_t d : in.controlDeps)
        deps.push_back(now[d]);
      node = makeOpNode(*n.op, n.name, n.attrs, inputs, deps, false);
    }
    if (!n.isVariable() && !n.inputs.empty() && n.op->name != "dropout" && in.controlDeps.empty()) {
      auto [it, fresh] = seen.emplace(keyOf(*node), node);
      if (!fresh)
        node = it->second;
    }
    now[nid] = node;
  }
  std::vector<NodeEntry> heads;
  for (const auto &h : idx.heads)
    heads.push_back({now[h.nodeId], h.index, h.version});
  return runPass(Graph(heads), requirePass("InferType"), ctx);
}

} // namespace

void registerEliminateCommonSubexprPass() {
  PassRegistry::get().add({"EliminateCommonSubexpr",
                           "merges nodes with the same op, attributes and inputs",
                           3,
                           {},
                           {},
                           true,
                           eliminate,
                           {"InferType"}});
}

} // namespace loupe
