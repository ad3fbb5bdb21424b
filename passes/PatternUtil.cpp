// PatternUtil: per-channel axis matching, bias expansion and reference counts for the rewriting
// passes.
#include "passes/PatternUtil.h"

#include "core/Attrs.h"
#include "core/DType.h"
#include "core/Interpreter.h"
#include "core/ops/OpHelpers.h"
#include "passes/Pass.h"

#include <cmath>

namespace loupe {

std::pair<int, int> matchBroadcast1DAxis(const Shape &oshape, const Shape &biasShape) {
  // The last axis of biasShape that is not 1.
  size_t last = biasShape.size();
  while (last > 0 && biasShape[last - 1] == 1)
    --last;
  int base = static_cast<int>(oshape.size()) - static_cast<int>(biasShape.size());
  if (last == 0)
    return {base, 0};
  size_t axisDim = last - 1;
  for (size_t i = 0; i < axisDim; ++i)
    if (biasShape[i] != 1)
      return {-1, -1};
  int axis = base + static_cast<int>(axisDim);
  if (axis < 0 || oshape[axis] != biasShape[axisDim])
    return {-1, -1};
  return {axis, static_cast<int>(axisDim)};
}

NodeEntry expandBiasToMatchAxis(NodeEntry bias, int outDim, int biasDim, int axis) {
  if (biasDim != 1)
    bias = ops::mk("squeeze", bias.node->name + "_sqz", {bias});
  int pad = outDim - axis - 1;
  if (pad <= 0)
    return bias;
  return ops::mk("expand_dims", bias.node->name + "_expand", {bias},
                 {{"axis", "1"}, {"num_newaxis", std::to_string(pad)}});
}

std::vector<uint32_t> nodeRefCounts(const IndexedGraph &idx) {
  std::vector<uint32_t> refs(idx.numNodes(), 0);
  for (const auto &n : idx.nodes)
    for (const auto &e : n.inputs)
      ++refs[e.nodeId];
  for (const auto &h : idx.heads)
    ++refs[h.nodeId];
  return refs;
}

NodePtr constantNode(const Tensor &t, const std::string &name) {
  AttrDict attrs;
  bool uniform = true;
  for (double v : t.data)
    uniform &= v == t.data[0];
  if (uniform && !t.data.empty()) {
    attrs.emplace_back("value", pyFloatRepr(t.data[0]));
  } else {
    std::string data = "[";
    for (size_t i = 0; i < t.data.size(); ++i)
      data += (i ? ", " : "") + pyFloatRepr(t.data[i]);
    attrs.emplace_back("data", data + "]");
  }
  attrs.emplace_back("shape", shapeToTuple(t.shape));
  attrs.emplace_back("dtype", std::string(dtypeName(t.dtype)));
  return makeOpNode(*OpRegistry::get().find("const"), name, attrs, {});
}

Tensor evaluateNode(const NodePtr &node) {
  Graph one({NodeEntry{node, 0, 0}});
  return interpret(applyPasses(one, {"InferShape", "InferType"}), {}).at(0);
}

PatternView::PatternView(const Graph &g, const StoredTensors *params)
    : idx(g.index()), params_(params), refs_(nodeRefCounts(idx)), reader_(idx.numNodes(), -1),
      constant_(idx.numNodes(), -1) {
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    for (const Entry &in : idx.nodes[nid].inputs)
      reader_[in.nodeId] = nid;
  if (const GraphAttr *s = g.attr("shape"); s && s->shapes.size() == idx.numEntries())
    shapes_ = &s->shapes;
  if (const GraphAttr *d = g.attr("dtype"); d && d->ints.size() == idx.numEntries())
    dtypes_ = &d->ints;
}

bool PatternView::is(const Entry &e, std::initializer_list<const char *> ops) const {
  const Node &n = node(e);
  if (n.isVariable() || e.index != 0)
    return false;
  for (const char *op : ops)
    if (n.op->name == op)
      return true;
  return false;
}

const Shape *PatternView::shape(const Entry &e) const {
  if (!shapes_)
    return nullptr;
  const Shape &s = (*shapes_)[idx.entryId(e)];
  return s.rankKnown() ? &s : nullptr;
}

int PatternView::dtype(const Entry &e) const {
  return dtypes_ ? static_cast<int>((*dtypes_)[idx.entryId(e)]) : -1;
}

std::optional<PatternView::Entry> PatternView::onlyReader(const Entry &e) const {
  if (refs_[e.nodeId] != 1 || reader_[e.nodeId] < 0)
    return std::nullopt;
  return Entry{static_cast<uint32_t>(reader_[e.nodeId]), 0, 0};
}

std::optional<double> PatternView::uniform(const Entry &e) const {
  const Node &n = node(e);
  auto allEqual = [](const std::vector<double> &d) -> std::optional<double> {
    for (double x : d)
      if (x != d.front())
        return std::nullopt;
    return d.empty() ? std::nullopt : std::optional<double>(d.front());
  };
  if (n.isVariable()) {
    if (!params_)
      return std::nullopt;
    auto it = params_->find(n.name);
    return it == params_->end() ? std::nullopt : allEqual(it->second.load().data);
  }
  if (n.op->name == "const" && n.parsed.getStr("data").empty())
    return n.parsed.getFloat("value");
  // A const listing its values (`const(data='[0]', dtype='int32')`, as a hand-written zero
  // point is): uniform when they are all one value. Such lists are short (lowering refuses
  // more than 4,096 values), so evaluating one is cheap; one that does not evaluate is not known.
  if (n.op->name == "const") {
    try {
      return allEqual(evaluateNode(idx.nodes[e.nodeId].node).data);
    } catch (const Error &) {
      return std::nullopt;
    }
  }
  if (n.op->name == "zeros" || n.op->name == "ones")
    return n.op->name == "ones" ? 1.0 : 0.0;
  return std::nullopt;
}

std::optional<Tensor> constantValue(const NodePtr &n, const StoredTensors *params) {
  if (n->isVariable()) {
    if (!params)
      return std::nullopt;
    auto it = params->find(n->name);
    return it == params->end() ? std::nullopt : std::optional<Tensor>(it->second.load());
  }
  if (n->op->name == "const")
    return evaluateNode(n);
  return std::nullopt;
}

std::optional<Tensor> PatternView::value(const Entry &e) const {
  return constantValue(idx.nodes[e.nodeId].node, params_);
}

bool PatternView::constant(const Entry &e) const {
  int8_t &known = constant_[e.nodeId];
  if (known >= 0)
    return known == 1;
  const Node &n = node(e);
  bool yes;
  if (n.isVariable())
    yes = params_ && params_->count(n.name);
  else {
    yes = true; // an op without inputs (const, zeros, …) is a constant
    for (const Entry &in : idx.nodes[e.nodeId].inputs)
      yes = yes && constant(in);
  }
  known = yes ? 1 : 0;
  return yes;
}

Product productOf(const PatternView &v, const IndexedGraph::Entry &e) {
  Product p;
  auto walk = [&](auto &self, const IndexedGraph::Entry &x) -> void {
    if (std::optional<double> c = v.uniform(x)) {
      p.coefficient *= *c;
    } else if (v.is(x, {"broadcast_mul", "elemwise_mul"})) {
      self(self, v.input(x, 0));
      self(self, v.input(x, 1));
    } else if (v.is(x, {"__mul_scalar__", "__div_scalar__"})) {
      double s = v.node(x).parsed.getFloat("scalar");
      p.coefficient *= v.node(x).op->name == "__mul_scalar__" ? s : 1 / s;
      self(self, v.input(x, 0));
    } else if (v.is(x, {"broadcast_div", "elemwise_div"}) && v.uniform(v.input(x, 1))) {
      p.coefficient /= *v.uniform(v.input(x, 1));
      self(self, v.input(x, 0));
    } else {
      p.terms.push_back(x);
    }
  };
  walk(walk, e);
  return p;
}

std::optional<double> plusConstant(const PatternView &v, const IndexedGraph::Entry &e,
                                   IndexedGraph::Entry &t) {
  if (v.is(e, {"__add_scalar__"})) {
    t = v.input(e, 0);
    return v.node(e).parsed.getFloat("scalar");
  }
  if (!v.is(e, {"broadcast_add", "elemwise_add"}))
    return std::nullopt;
  for (int side : {0, 1})
    if (std::optional<double> c = v.uniform(v.input(e, side))) {
      t = v.input(e, 1 - side);
      return c;
    }
  return std::nullopt;
}

bool onePlus(const PatternView &v, const IndexedGraph::Entry &e, IndexedGraph::Entry &t) {
  return plusConstant(v, e, t) == 1.0;
}

std::optional<double> constantPower(const PatternView &v, const IndexedGraph::Entry &e) {
  if (v.is(e, {"broadcast_pow"}))
    return v.uniform(v.input(e, 1));
  if (v.is(e, {"__pow_scalar__"}))
    return v.node(e).parsed.getFloat("scalar");
  return std::nullopt;
}

bool near(double a, double b, double tol) { return std::fabs(a - b) <= tol * std::fabs(b); }

} // namespace loupe
