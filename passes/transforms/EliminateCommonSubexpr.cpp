// EliminateCommonSubexpr: merges op nodes that compute the same thing (relay-spec §3.2); like
// Relay's FunctionPass it ends by running InferType, and a Sequential runs InferType first.
//
// Walking nodes in id order (inputs rewritten first, so merges cascade), a node is replaced by
// an earlier node of the same op with equal attributes (every parameter, defaults included) and
// the very same inputs (same node and output after rewriting). Nodes without inputs (constants,
// zeros, …) and stateful ops are never merged, as in Relay.
#include "passes/Pass.h"

#include "core/Error.h"
#include "core/Rewrite.h"

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
  std::map<std::string, NodePtr> seen;
  Graph out = rewriteGraph(src, [&](uint32_t, const NodePtr &node) -> std::vector<NodeEntry> {
    if (node->isVariable() || node->inputs.empty() || node->op->name == "dropout" ||
        !node->controlDeps.empty())
      return {};
    auto [it, fresh] = seen.emplace(keyOf(*node), node);
    return outputsOf(it->second);
  });
  return runPass(out, requirePass("InferType"), ctx);
}

} // namespace

void registerEliminateCommonSubexprPass() {
  PassRegistry::get().add({.name = "EliminateCommonSubexpr",
                           .summary = "merges nodes with the same op, attributes and inputs",
                           .optLevel = 3,
                           .changesGraph = true,
                           .run = eliminate,
                           .required = {"InferType"}});
}

} // namespace loupe
