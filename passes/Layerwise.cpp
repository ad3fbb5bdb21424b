// Layerwise: two graphs' values compared node by node (SQNR, largest errors).
#include "passes/Layerwise.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Quantize.h"
#include "passes/Pass.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

namespace loupe {

namespace {

// `g` with its variables' shapes and dtypes from `values`, inferred throughout.
Graph typed(const Graph &g, const ValueSource &values) {
  Graph out = g;
  const IndexedGraph &idx = out.index();
  std::vector<Shape> shapes;
  std::vector<int64_t> dtypes;
  for (uint32_t nid : idx.argNodes) {
    const std::string &name = idx.nodes[nid].node->name;
    std::optional<Tensor> t = values(name);
    if (!t)
      fail("layerwise: variable ", name, " has no value");
    shapes.push_back(t->shape);
    dtypes.push_back(t->dtype);
  }
  out.attrs["shape_inputs"] = GraphAttr::listShape(shapes);
  out.attrs["dtype_inputs"] = GraphAttr::listInt(dtypes);
  return applyPasses(out, {"InferShape", "InferType"});
}

// Every node output of `g` by node name, with the graph's variables' values.
struct Values {
  std::map<std::string, std::vector<Tensor>> byName;
};

Values runAll(const Graph &g, const ValueSource &values) {
  Values v;
  const IndexedGraph &idx = g.index();
  InterpretOptions options;
  options.observe = [&](uint32_t nid, const std::vector<const Tensor *> &outs) {
    std::vector<Tensor> &slot = v.byName[idx.nodes[nid].node->name];
    slot.clear();
    for (const Tensor *t : outs)
      slot.push_back(*t);
  };
  interpretFrom(g, values, options);
  return v;
}

// The value of entry `e` of `g`: a variable's from `values`, a node's from `run`.
std::optional<Tensor> valueOf(const Graph &g, const NodeEntry &e, const Values &run,
                              const ValueSource &values) {
  if (e.node->isVariable())
    return values(e.node->name);
  auto it = run.byName.find(e.node->name);
  if (it == run.byName.end() || e.index >= it->second.size())
    return std::nullopt;
  return it->second[e.index];
}

// The real numbers integer steps `q` stand for under a qnn.quantize's scale and zero point
// (per tensor or along its axis).
Tensor dequantized(const Tensor &q, const Tensor &scale, const Tensor &zero, int64_t axis) {
  Tensor r(q.shape, kFloat64);
  auto rank = static_cast<int64_t>(q.shape.size());
  int64_t ax = axis < 0 ? axis + rank : axis, inner = 1;
  for (int64_t d = ax + 1; d < rank; ++d)
    inner *= q.shape[d];
  for (int64_t i = 0; i < q.size(); ++i) {
    size_t c = scale.size() == 1 ? 0 : static_cast<size_t>((i / inner) % q.shape[ax]);
    r.data[i] = dequantizeValue(q.data[i], static_cast<float>(scale.data[c]),
                                static_cast<int64_t>(zero.data[zero.size() == 1 ? 0 : c]));
  }
  return r;
}

// The qnn.quantize whose steps node `n` holds: itself, or the one before the casts and the ops
// that move steps without computing on them (pools of the maximum, reshapes) it reads; null when
// there is none.
const Node *quantizeOf(const Node &n) {
  const Node *at = &n;
  for (int hops = 0; at && !at->isVariable() && hops < 64; ++hops) {
    const std::string &op = at->op->name;
    if (op == "qnn.quantize")
      return at;
    static const char *kMoves[] = {"cast",      "max_pool2d", "flatten",    "reshape",
                                   "transpose", "squeeze",    "expand_dims"};
    if (std::find(std::begin(kMoves), std::end(kMoves), op) == std::end(kMoves))
      return nullptr;
    at = at->inputs[0].node.get();
  }
  return nullptr;
}

LayerComparison compare(const Tensor &a, const Tensor &b) {
  LayerComparison c;
  c.elements = a.size();
  double signal = 0, noise = 0, largest = 0;
  for (int64_t i = 0; i < a.size(); ++i)
    largest = std::max(largest, std::fabs(a.data[i]));
  for (int64_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(a.data[i] - b.data[i]);
    if (std::isnan(d))
      d = std::isnan(a.data[i]) && std::isnan(b.data[i]) ? 0 : INFINITY;
    signal += a.data[i] * a.data[i];
    noise += d * d;
    c.maxAbs = std::max(c.maxAbs, d);
    c.maxRel = std::max(c.maxRel, d / std::max(std::fabs(a.data[i]), 1e-6 * largest));
  }
  if (noise == 0)
    c.sqnr = std::numeric_limits<double>::infinity();
  else if (signal == 0)
    c.sqnr = -std::numeric_limits<double>::infinity();
  else
    c.sqnr = 10 * std::log10(signal / noise);
  if (c.maxAbs == 0)
    c.maxRel = 0;
  return c;
}

} // namespace

std::vector<LayerComparison> compareLayers(const Graph &a, const Graph &b,
                                           const ValueSource &values) {
  Graph ta = typed(a, values), tb = typed(b, values);
  Values va = runAll(ta, values), vb = runAll(tb, values);
  const IndexedGraph &ia = ta.index(), &ib = tb.index();
  std::vector<LayerComparison> out;
  for (uint32_t nid = 0; nid < ib.numNodes(); ++nid) {
    const Node &nb = *ib.nodes[nid].node;
    if (nb.isVariable())
      continue;
    int na = ia.findByName(nb.name);
    auto ra = va.byName.find(nb.name), rb = vb.byName.find(nb.name);
    if (na < 0 || ia.nodes[na].node->isVariable() || ra == va.byName.end() || rb == vb.byName.end())
      continue;
    const Node &nodeA = *ia.nodes[na].node;
    for (uint32_t k = 0; k < ra->second.size() && k < rb->second.size(); ++k) {
      const Tensor &x = ra->second[k], &y = rb->second[k];
      if (x.shape != y.shape)
        continue;
      const Node *quantize = dtypeIsFloat(x.dtype) ? nullptr : quantizeOf(nodeA);
      LayerComparison c;
      if (quantize && !dtypeIsFloat(y.dtype)) {
        std::optional<Tensor> scale = valueOf(ta, quantize->inputs[1], va, values),
                              zero = valueOf(ta, quantize->inputs[2], va, values);
        if (!scale || !zero)
          continue;
        int64_t axis = quantize->parsed.getInt("axis");
        c = compare(dequantized(x, *scale, *zero, axis), dequantized(y, *scale, *zero, axis));
        c.dequantized = true;
      } else if (dtypeIsFloat(x.dtype) == dtypeIsFloat(y.dtype)) {
        c = compare(x, y);
      } else {
        continue; // a float value against integer steps of unknown scale
      }
      c.name = nb.name;
      c.op = nb.op->name;
      c.output = k;
      c.node = nid;
      out.push_back(c);
    }
  }
  return out;
}

} // namespace loupe
