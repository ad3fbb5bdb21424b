// FoldConstant: evaluates every op whose inputs are all constants and replaces it by a `const`
// node (relay-spec §3.1); like Relay's FunctionPass it ends by running InferType.
//
// A node folds when it has at least one input, is not stateful (dropout) nor internal
// (tvm_op, __undef__), and every input is a `const` node (after folding below it). Zero-input
// ops (zeros, ones, const itself) are left alone, as Relay leaves zero-argument calls. The
// value comes from the reference interpreter; the new constant keeps the node's name, with
// `value` when every element is equal and `data` otherwise.
#include "passes/Pass.h"
#include "passes/Symbols.h"

#include "core/Attrs.h"
#include "core/Error.h"
#include "core/Rewrite.h"
#include "passes/PatternUtil.h"

namespace loupe {

namespace {

bool isConst(const NodeEntry &e) { return e.node->op && e.node->op->name == "const"; }

bool foldable(const Node &n) {
  static const char *kNever[] = {"dropout", "tvm_op", "__undef__", "batch_norm"};
  if (n.isVariable() || n.inputs.empty() || n.numOutputs() != 1 || hasSymbolicSizes(n))
    return false;
  for (const char *op : kNever)
    if (n.op->name == op)
      return false;
  for (const auto &e : n.inputs)
    if (!isConst(e))
      return false;
  return true;
}

Graph foldConstant(const Graph &src, const PassContext &ctx) {
  Graph out = rewriteGraph(src, [](uint32_t, const NodePtr &node) -> std::vector<NodeEntry> {
    if (!foldable(*node))
      return {};
    return {{constantNode(evaluateNode(node), node->name), 0, 0}};
  });
  // Relay's FunctionPass re-types the module before returning; instruments see it nested.
  return runPass(out, requirePass("InferType"), ctx);
}

} // namespace

void registerFoldConstantPass() {
  PassRegistry::get().add({.name = "FoldConstant",
                           .summary = "evaluates ops whose inputs are all constants into constants",
                           .optLevel = 2,
                           .changesGraph = true,
                           .run = foldConstant});
}

} // namespace loupe
