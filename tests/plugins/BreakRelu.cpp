// BreakRelu: a test fixture for `:bisect` — a pass plugin that breaks one operator on purpose.
// Its pass turns every relu into `broken_relu`, an op the plugin registers with relu's reference
// kernel but a lowering that halves positive values, so that the reference interpreter and the
// compiled code disagree exactly at those nodes. Load it with `:load-pass BreakRelu.so`, then
// `:apply BreakRelu` before `:build` (tests/CMakeLists.txt builds it into the plugins folder).
#include "passes/Pass.h"

#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"

namespace {

using namespace loupe;

Graph breakRelu(const Graph &src, const PassContext &) {
  const OpDef &broken = *OpRegistry::get().find("broken_relu");
  return rewriteGraph(src, [&](uint32_t, const NodePtr &node) -> std::vector<NodeEntry> {
    if (node->isVariable() || node->op->name != "relu")
      return {};
    // The node keeps its name, so that :bisect names the node the user wrote.
    return {{makeOpNode(broken, node->name, node->attrs, node->inputs), 0, 0}};
  });
}

} // namespace

LOUPE_PLUGIN_ABI

extern "C" void loupe_register_passes(std::vector<loupe::PassInfo> &passes) {
  using namespace loupe;
  if (!OpRegistry::get().find("broken_relu"))
    ops::unaryOp("broken_relu",
                 "relu for the reference interpreter, max(x, 0) / 2 when compiled (a :bisect "
                 "test fixture)",
                 [](double x) { return x > 0 ? x : 0.0; })
        .lower(ops::elementwiseLower([](const loop::Expr &x, const Attrs &) {
          return loop::max(x, loop::constant(0, x->dtype)) * loop::constant(0.5, x->dtype);
        }));
  passes.push_back({.name = "BreakRelu",
                    .summary = "replaces every relu by broken_relu, whose compiled code is wrong "
                               "on purpose (a :bisect test fixture)",
                    .optLevel = 0,
                    .changesGraph = true,
                    .run = breakRelu});
}
