// SimplifyPow: a power by a constant exponent of 2, 3, 0.5 or -1 becomes x * x, x * x * x,
// sqrt(x) or 1 / x — exporters write x² as Pow(x, 2) (variances, RMSNorm), and a general pow
// with the exponent read from memory is a libm call per element where a multiply is one
// instruction.
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/Attrs.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;

Graph simplifyPow(const Graph &src, const PassContext &ctx) {
  PatternView v(src, ctx.params);
  return rewritePatterns(
      src,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        Entry top{nid, 0, 0};
        std::optional<double> p = constantPower(v, top);
        if (!p)
          return {};
        // A constant exponent of more elements than x broadcasts x larger: not x's own power.
        Entry base = v.input(top, 0);
        const Shape *xs = v.shape(base), *ts = v.shape(top);
        if (!xs || !ts || *xs != *ts)
          return {};
        NodeEntry x = now(base.nodeId, base.index);
        const std::string &name = node->name;
        if (*p == 2)
          return {ops::mk("elemwise_mul", name, {x, x})};
        if (*p == 3)
          return {ops::mk("elemwise_mul", name,
                          {ops::mk("elemwise_mul", name + "_square", {x, x}), x})};
        if (*p == 0.5)
          return {ops::mk("sqrt", name, {x})};
        if (*p == -1)
          return {ops::mk("__rdiv_scalar__", name, {x}, {{"scalar", "1"}})};
        return {};
      });
}

} // namespace

void registerSimplifyPowPass() {
  PassRegistry::get().add(
      {.name = "SimplifyPow",
       .summary = "a power by a constant 2, 3, 0.5 or -1 becomes products, sqrt or 1 / x",
       .optLevel = 3,
       .needs = {"shape"},
       .changesGraph = true,
       .run = simplifyPow});
}

} // namespace loupe
