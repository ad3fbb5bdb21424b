// SimplifyLayerNorm: a layer norm exporters write out — mean, subtract, square, mean, add epsilon,
// square root, divide (or multiply by its reciprocal), then optionally times gamma and plus beta —
// over the trailing axes becomes one `layer_norm`, whose fused code reads each row once.
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/Attrs.h"
#include "core/DType.h"
#include "core/Rewrite.h"
#include "core/Shape.h"
#include "core/ops/OpHelpers.h"

#include <algorithm>

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;

// What a matched normalisation computes: (x - mean) / sqrt(var + epsilon) over x's last `axes`.
struct Norm {
  Entry x{};
  int axes = 0;
  double epsilon = 0;
};

// The number of trailing axes a keepdims mean of `e` reduces (each of them, none else), or 0.
int trailingMean(const PatternView &v, const Entry &e, const Entry &of) {
  if (!v.is(e, {"mean"}) || !sameEntry(v.input(e, 0), of))
    return 0;
  const Attrs &a = v.node(e).parsed;
  const Shape *xs = v.shape(of);
  if (!xs || !a.getBool("keepdims") || a.getBool("exclude"))
    return 0;
  int rank = static_cast<int>(xs->size());
  std::vector<int64_t> axes = a.getTuple("axis");
  if (axes.empty())
    return 0; // () means every axis: not the trailing-axes form the rewrite keeps simple
  for (int64_t &ax : axes) {
    if (ax < -rank || ax >= rank)
      return 0;
    ax = ax < 0 ? ax + rank : ax;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i))
      return 0;
  return static_cast<int>(axes.size());
}

// True when `e` is d squared: pow(d, 2) by a constant, or d * d.
bool squareOf(const PatternView &v, const Entry &e, const Entry &d) {
  if (constantPower(v, e) == 2.0)
    return sameEntry(v.input(e, 0), d);
  Product p = productOf(v, e);
  return p.coefficient == 1 && p.terms.size() == 2 && sameEntry(p.terms[0], d) &&
         sameEntry(p.terms[1], d);
}

// Matches sqrt(var + epsilon) with var the mean of the square of `d` over the last `axes` axes.
std::optional<double> deviation(const PatternView &v, const Entry &s, const Entry &d, int axes) {
  if (!v.is(s, {"sqrt"}))
    return std::nullopt;
  Entry var{};
  std::optional<double> eps = plusConstant(v, v.input(s, 0), var);
  if (!eps || *eps < 0 || !v.is(var, {"mean"}))
    return std::nullopt;
  Entry square = v.input(var, 0);
  if (!squareOf(v, square, d) || trailingMean(v, var, square) != axes)
    return std::nullopt;
  return eps;
}

// Matches (x - mean(x)) / sqrt(var + eps): a division by the deviation, or a product with its
// reciprocal (1 / s by __rdiv_scalar__ or a division of a constant 1).
std::optional<Norm> normalised(const PatternView &v, const Entry &e) {
  Entry d{}, s{};
  if (v.is(e, {"broadcast_div", "elemwise_div"})) {
    d = v.input(e, 0);
    s = v.input(e, 1);
  } else if (v.is(e, {"broadcast_mul", "elemwise_mul"})) {
    for (int side : {0, 1}) {
      Entry r = v.input(e, side);
      bool reciprocal =
          (v.is(r, {"__rdiv_scalar__"}) && v.node(r).parsed.getFloat("scalar") == 1) ||
          (v.is(r, {"broadcast_div", "elemwise_div"}) && v.uniform(v.input(r, 0)) == 1.0);
      if (reciprocal) {
        s = v.input(r, v.is(r, {"__rdiv_scalar__"}) ? 0 : 1);
        d = v.input(e, 1 - side);
        break;
      }
    }
    if (!v.is(s, {"sqrt"}))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!v.is(d, {"broadcast_sub", "elemwise_sub"}))
    return std::nullopt;
  Norm n{.x = v.input(d, 0), .axes = 0, .epsilon = 0};
  n.axes = trailingMean(v, v.input(d, 1), n.x);
  if (n.axes == 0)
    return std::nullopt;
  std::optional<double> eps = deviation(v, s, d, n.axes);
  if (!eps)
    return std::nullopt;
  n.epsilon = *eps;
  const Shape *xs = v.shape(n.x), *es = v.shape(e);
  if (!xs || !es || *xs != *es)
    return std::nullopt;
  return n;
}

// A matched layer norm: the normalisation, then perhaps times gamma and plus beta; `steps` are
// the nodes matched above the normalisation.
struct Match {
  Norm norm;
  std::optional<Entry> gamma, beta;
  std::vector<uint32_t> steps;
};

// The layer norm whose outermost step is `e`: the normalisation alone, times gamma (each
// element of the normalised axes its own), plus beta. An inner step is absorbed only when `e`
// is its one reader, so that no value another node reads is lost.
std::optional<Match> layerNormAt(const PatternView &v, const Entry &e, bool gammaOk, bool betaOk) {
  if (std::optional<Norm> n = normalised(v, e))
    return Match{.norm = *n, .gamma = {}, .beta = {}, .steps = {}};
  bool add = v.is(e, {"broadcast_add", "elemwise_add"});
  bool mul = v.is(e, {"broadcast_mul", "elemwise_mul"});
  if (!(add && betaOk) && !(mul && gammaOk))
    return std::nullopt;
  for (int side : {0, 1}) {
    Entry inner = v.input(e, side), other = v.input(e, 1 - side);
    std::optional<Entry> reader = v.onlyReader(inner);
    if (!reader || reader->nodeId != e.nodeId)
      continue;
    std::optional<Match> m = layerNormAt(v, inner, add && gammaOk, false);
    if (!m)
      continue;
    const Shape *xs = v.shape(m->norm.x), *es = v.shape(e), *os = v.shape(other);
    Shape trailing(xs->end() - m->norm.axes, xs->end());
    Shape s = os ? *os : Shape{};
    while (s.size() > trailing.size() && s.front() == 1)
      s.erase(s.begin()); // (1, 1, C) holds one value per element as (C,) does
    if (!os || s != trailing || !es || *es != *xs)
      continue;
    (add ? m->beta : m->gamma) = other;
    m->steps.push_back(inner.nodeId);
    return m;
  }
  return std::nullopt;
}

Graph simplifyLayerNorm(const Graph &src, const PassContext &ctx) {
  PatternView v(src, ctx.params);
  return rewritePatterns(
      src,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        Entry top{nid, 0, 0};
        std::optional<Match> m = layerNormAt(v, top, true, true);
        if (!m)
          return {};
        // The one reader that takes this node in as its inner step makes the layer norm instead.
        if (std::optional<Entry> r = v.onlyReader(top))
          if (std::optional<Match> outer = layerNormAt(v, *r, true, true))
            if (std::find(outer->steps.begin(), outer->steps.end(), nid) != outer->steps.end())
              return {};
        const Norm &n = m->norm;
        const Shape &xs = *v.shape(n.x);
        Shape trailing(xs.end() - n.axes, xs.end());
        AttrDict fill = {{"shape", shapeToTuple(trailing)}};
        if (int t = v.dtype(n.x); t >= 0)
          fill.emplace_back("dtype", std::string(dtypeName(t)));
        // gamma or beta as the trailing shape, or made: ones and zeros.
        auto operand = [&](const std::optional<Entry> &p, const char *role, const char *made) {
          std::string name = node->name + "_" + role;
          if (!p)
            return ops::mk(made, name, {}, fill);
          NodeEntry e = now(p->nodeId, p->index);
          return *v.shape(*p) == trailing
                     ? e
                     : ops::mk("reshape", name, {e}, {{"shape", shapeToTuple(trailing)}});
        };
        NodeEntry ln =
            ops::mk("layer_norm", node->name,
                    {now(n.x.nodeId, n.x.index), operand(m->gamma, "gamma", "ones"),
                     operand(m->beta, "beta", "zeros")},
                    {{"axis", std::to_string(-n.axes)}, {"epsilon", pyFloatRepr(n.epsilon)}});
        return {ln};
      });
}

} // namespace

void registerSimplifyLayerNormPass() {
  PassRegistry::get().add(
      {.name = "SimplifyLayerNorm",
       .summary = "a layer norm written out in reductions and elementwise ops becomes layer_norm",
       .optLevel = 3,
       .needs = {"shape"},
       .changesGraph = true,
       .run = simplifyLayerNorm});
}

} // namespace loupe
