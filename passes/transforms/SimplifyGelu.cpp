// SimplifyGelu: the GELU exporters write out in elementwise ops — erf form
// 0.5 x (1 + erf(x / sqrt 2)), tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), each
// multiplication in any order — becomes one `gelu`, whose fused code is one pass over x.
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/Attrs.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <cmath>

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;

constexpr double kSqrtHalf = 0.70710678118654752440;  // 1 / sqrt(2)
constexpr double kTanhScale = 0.79788456080286535588; // sqrt(2 / pi)
constexpr double kCubic = 0.044715;

// True when the terms of a product are x^3: pow(x, 3) by a constant, or x three times.
bool cubeOf(const PatternView &v, const std::vector<Entry> &terms, const Entry &x) {
  if (terms.size() == 3)
    return std::all_of(terms.begin(), terms.end(), [&](const Entry &t) { return sameEntry(t, x); });
  if (terms.size() != 1)
    return false;
  return constantPower(v, terms[0]) == 3.0 && sameEntry(v.input(terms[0], 0), x);
}

// True when `e` is x + 0.044715 x^3 (in either order).
bool tanhInner(const PatternView &v, const Entry &e, const Entry &x) {
  if (!v.is(e, {"broadcast_add", "elemwise_add"}))
    return false;
  for (int side : {0, 1}) {
    if (!sameEntry(v.input(e, side), x))
      continue;
    Product c = productOf(v, v.input(e, 1 - side));
    if (near(c.coefficient, kCubic, 1e-4) && cubeOf(v, c.terms, x))
      return true;
  }
  return false;
}

// The form of GELU `s` (1 + erf(…) or 1 + tanh(…)) computes of `x`: "none", "tanh" or "".
std::string geluForm(const PatternView &v, const Entry &x, const Entry &s) {
  Entry t{};
  if (!onePlus(v, s, t) || !v.is(t, {"erf", "tanh"}))
    return "";
  Product u = productOf(v, v.input(t, 0));
  if (v.is(t, {"erf"}))
    return u.terms.size() == 1 && sameEntry(u.terms[0], x) && near(u.coefficient, kSqrtHalf)
               ? "none"
               : "";
  return u.terms.size() == 1 && near(u.coefficient, kTanhScale) && tanhInner(v, u.terms[0], x)
             ? "tanh"
             : "";
}

Graph simplifyGelu(const Graph &src, const PassContext &ctx) {
  PatternView v(src, ctx.params);
  return rewritePatterns(
      src,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        Entry top{nid, 0, 0};
        if (!v.is(top, {"broadcast_mul", "elemwise_mul", "__mul_scalar__"}))
          return {};
        Product p = productOf(v, top);
        if (p.terms.size() != 2 || !near(p.coefficient, 0.5))
          return {};
        for (int i : {0, 1}) {
          const Entry &x = p.terms[i];
          std::string form = geluForm(v, x, p.terms[1 - i]);
          // A constant operand may broadcast x to a larger shape: then this is not gelu(x).
          const Shape *xs = v.shape(x), *ts = v.shape(top);
          if (form.empty() || !xs || !ts || *xs != *ts)
            continue;
          AttrDict attrs;
          if (form == "tanh")
            attrs.emplace_back("approximate", "tanh");
          return {ops::mk("gelu", node->name, {now(x.nodeId, x.index)}, attrs)};
        }
        return {};
      });
}

} // namespace

void registerSimplifyGeluPass() {
  PassRegistry::get().add({.name = "SimplifyGelu",
                           .summary = "GELU written out in erf or tanh form becomes one gelu",
                           .optLevel = 3,
                           .needs = {"shape"},
                           .changesGraph = true,
                           .run = simplifyGelu});
}

} // namespace loupe
