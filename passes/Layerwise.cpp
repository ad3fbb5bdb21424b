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

Graph typedFor(const Graph &g, const ValueSource &values) {
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

namespace {

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

} // namespace

std::vector<const LayerComparison *> worstFirst(const std::vector<LayerComparison> &all) {
  std::vector<const LayerComparison *> worst;
  for (const LayerComparison &c : all)
    worst.push_back(&c);
  std::stable_sort(
      worst.begin(), worst.end(),
      [](const LayerComparison *x, const LayerComparison *y) { return x->sqnr < y->sqnr; });
  return worst;
}

std::optional<double> medianSqnr(const std::vector<LayerComparison> &all, size_t *differing) {
  std::vector<double> v;
  for (const LayerComparison &c : all)
    if (c.sqnr != std::numeric_limits<double>::infinity())
      v.push_back(c.sqnr);
  if (differing)
    *differing = v.size();
  if (v.empty())
    return std::nullopt;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  // −∞ (a zero value made nonzero) sorts first; a middle pair holding one is −∞ too.
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

std::string valueName(const LayerComparison &c) {
  return c.name + (c.output ? "[" + std::to_string(c.output) + "]" : "");
}

std::optional<StepQuantization> stepQuantization(const IndexedGraph &idx, const Node &n) {
  const Node *at = &n;
  for (int hops = 0; at && !at->isVariable() && hops < 64; ++hops) {
    const std::string &op = at->op->name;
    if (op == "qnn.quantize")
      return StepQuantization{at, 1, 2, at->parsed.getInt("axis")};
    if (op == "qnn.requantize")
      return StepQuantization{at, 3, 4, at->parsed.getInt("axis")};
    if (op == "qnn.add")
      return StepQuantization{at, 6, 7, 1};
    if (op == "qnn.conv2d" || op == "qnn.dense") {
      for (uint32_t r = 0; r < idx.numNodes(); ++r) {
        const Node &reader = *idx.nodes[r].node;
        if (!reader.isVariable() && reader.op->name == "qnn.requantize" &&
            reader.inputs[0].node.get() == at)
          return StepQuantization{&reader, 1, 2, 1};
      }
      return std::nullopt;
    }
    static const char *kMoves[] = {"cast",    "clip",      "max_pool2d", "flatten",
                                   "reshape", "transpose", "squeeze",    "expand_dims"};
    if (std::find(std::begin(kMoves), std::end(kMoves), op) == std::end(kMoves))
      return std::nullopt;
    at = at->inputs[0].node.get();
  }
  return std::nullopt;
}

namespace {

// Value `t` of node `n` (of graph `g`, whose run is `run`) in real numbers: itself when float,
// else its steps dequantized; nullopt for integers of no known quantization.
std::optional<Tensor> realValue(const Graph &g, const Node &n, const Tensor &t, const Values &run,
                                const ValueSource &values) {
  if (dtypeIsFloat(t.dtype))
    return t;
  std::optional<StepQuantization> src = stepQuantization(g.index(), n);
  if (!src)
    return std::nullopt;
  std::optional<Tensor> scale = valueOf(g, src->source->inputs[src->scale], run, values),
                        zero = valueOf(g, src->source->inputs[src->zeroPoint], run, values);
  if (!scale || !zero)
    return std::nullopt;
  return dequantized(t, *scale, *zero, src->axis);
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
  c.histogram.assign(kErrorBins, 0);
  for (int64_t i = 0; i < a.size(); ++i) {
    double d = b.data[i] - a.data[i];
    if (!std::isfinite(d))
      continue;
    // Bin k covers [-m + k·w, -m + (k+1)·w) with w = 2m / bins; d = m falls in the last.
    int k = kErrorBins / 2;
    if (c.maxAbs > 0 && std::isfinite(c.maxAbs))
      k = std::clamp(static_cast<int>(std::floor((d + c.maxAbs) / (2 * c.maxAbs) * kErrorBins)), 0,
                     kErrorBins - 1);
    ++c.histogram[static_cast<size_t>(k)];
  }
  return c;
}

} // namespace

namespace {

// A reference value: as computed (integer steps, or floats) and in real numbers (nullopt for
// integers of no known quantization).
struct ReferenceValue {
  Tensor raw;
  std::optional<Tensor> real;
};

using ReferenceOf =
    std::function<std::optional<ReferenceValue>(const Node &, uint32_t, const Tensor &)>;

// Every node output of typed graph `tb` (run as `vb`) that `reference` has a value of the same
// shape for, compared with its own, in `tb`'s node order: in real numbers when both sides have
// them, as they are when both are integers of no known quantization, else left out.
std::vector<LayerComparison> compareRun(const Graph &tb, const Values &vb,
                                        const ValueSource &values, const ReferenceOf &reference) {
  const IndexedGraph &ib = tb.index();
  std::vector<LayerComparison> out;
  for (uint32_t nid = 0; nid < ib.numNodes(); ++nid) {
    const Node &nb = *ib.nodes[nid].node;
    auto rb = vb.byName.find(nb.name);
    if (nb.isVariable() || rb == vb.byName.end())
      continue;
    for (uint32_t k = 0; k < rb->second.size(); ++k) {
      const Tensor &y = rb->second[k];
      std::optional<ReferenceValue> x = reference(nb, k, y);
      if (!x || x->raw.shape != y.shape)
        continue;
      std::optional<Tensor> real = realValue(tb, nb, y, vb, values);
      LayerComparison c;
      if (x->real && real) {
        c = compare(*x->real, *real);
        c.dequantized = !dtypeIsFloat(x->raw.dtype) || !dtypeIsFloat(y.dtype);
      } else if (!dtypeIsFloat(x->raw.dtype) && !dtypeIsFloat(y.dtype)) {
        c = compare(x->raw, y); // integers of no known quantization: as they are
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

} // namespace

std::vector<LayerComparison> compareLayers(const Graph &a, const Graph &b,
                                           const ValueSource &values) {
  Graph ta = typedFor(a, values), tb = typedFor(b, values);
  Values va = runAll(ta, values), vb = runAll(tb, values);
  const IndexedGraph &ia = ta.index();
  return compareRun(
      tb, vb, values,
      [&](const Node &nb, uint32_t k, const Tensor &) -> std::optional<ReferenceValue> {
        int na = ia.findByName(nb.name);
        auto ra = va.byName.find(nb.name);
        if (na < 0 || ia.nodes[na].node->isVariable() || ra == va.byName.end() ||
            k >= ra->second.size())
          return std::nullopt;
        const Tensor &x = ra->second[k];
        return ReferenceValue{x, realValue(ta, *ia.nodes[na].node, x, va, values)};
      });
}

std::vector<LayerComparison> compareWithReference(const Graph &b, const ValueSource &values,
                                                  const ReferenceValues &reference) {
  Graph tb = typedFor(b, values);
  Values vb = runAll(tb, values);
  return compareRun(
      tb, vb, values,
      [&](const Node &nb, uint32_t k, const Tensor &) -> std::optional<ReferenceValue> {
        std::optional<Tensor> x = reference(nb.name, k);
        if (!x)
          return std::nullopt;
        std::optional<Tensor> real;
        if (dtypeIsFloat(x->dtype))
          real = *x;
        return ReferenceValue{std::move(*x), std::move(real)};
      });
}

} // namespace loupe
