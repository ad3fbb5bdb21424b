// FakeQuantizationToInteger: a region an exporter wrote as dequantize → float op → quantize (a
// QDQ export) computes on the integers instead (Relay's FakeQuantizationToInteger; ONNX
// Runtime's QDQ selectors). Anchored at each qnn.quantize:
//   - conv2d, dense and matmul(transpose_b) of two dequantized operands, with an optional bias
//     (an int32 tensor dequantized at the operands' scale, or a float constant, quantized here)
//     and an optional relu or clip, become qnn.conv2d / qnn.dense accumulating in int32, a
//     qnn.requantize to the quantize's scale and zero point, and the activation as a clip of
//     the steps;
//   - the sum of two dequantized values (and a relu or clip after it) becomes qnn.add;
//   - their product: each side less its zero point multiplied in int32, then requantized;
//   - global_avg_pool2d sums the steps in int32 and requantizes the sum;
//   - max_pool2d, flatten, reshape, transpose, squeeze and expand_dims of a dequantized value run
//     on its steps (with a qnn.requantize when the quantize's scale or zero point differ);
//   - concatenate of dequantized values: each input requantized to the quantize's steps where
//     they differ, then concatenated as integers;
//   - quantize(dequantize(x)) is x, or a qnn.requantize.
// Every float value in a region must be read only inside it, and the scales and zero points
// must be constants (bound params or const nodes); anything else stays as the exporter wrote it,
// and the pass says which op kept each such region float (PassContext::remarks, :apply's notes).
#include "passes/FakeQuantization.h"
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/Attrs.h"
#include "core/DType.h"
#include "core/Error.h"
#include "core/Quantize.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <cmath>

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;
using ops::mk;

// A quantization's constant parameters: the node reading them, its scale and zero point.
struct QuantParams {
  Entry node;
  Tensor scale, zero;
  int axis = 1;
  bool perTensor() const { return scale.size() == 1 && zero.size() == 1; }
  bool operator==(const QuantParams &o) const {
    return scale.data == o.scale.data && zero.data == o.zero.data;
  }
};

struct Matcher {
  const Graph &src;
  const PatternView &v;
  const RewrittenEntry &now;
  /// The compute_dtype of the requantizes and sums made (`:set requantize`): float32, as the QDQ
  /// file's float ops and ONNX Runtime compute, or int64 (TVM's fixed point).
  std::string computeDtype;

  NodeEntry rewritten(const Entry &e) const { return now(e.nodeId, e.index); }
  const Node &node(const Entry &e) const { return v.node(e); }

  int dtypeOf(const Entry &e) const { return v.dtype(e); }

  // The scale and zero point of a qnn.quantize or qnn.dequantize at `e`, when both are constants.
  std::optional<QuantParams> params(const Entry &e) const {
    std::optional<Tensor> s = v.value(v.input(e, 1)), z = v.value(v.input(e, 2));
    if (!s || !z)
      return std::nullopt;
    return QuantParams{e, *s, *z, static_cast<int>(node(e).parsed.getInt("axis"))};
  }

  // `e`, a float op's input, when it is a qnn.dequantize with constant parameters.
  std::optional<QuantParams> dequantized(const Entry &e) const {
    if (!v.is(e, {"qnn.dequantize"}))
      return std::nullopt;
    return params(e);
  }

  // `inner` is read only by the node of `outer` (so the float value can go).
  bool onlyFeeds(const Entry &inner, const Entry &outer) const {
    std::optional<Entry> r = v.onlyReader(inner);
    return r && r->nodeId == outer.nodeId;
  }

  NodeEntry constant(const Tensor &t, const std::string &name) const {
    return {constantNode(t, name), 0, 0};
  }

  // The float32 product of the operands' scales per output channel (the accumulator's scale).
  static Tensor productScale(const QuantParams &a, const QuantParams &b) {
    Tensor s({b.scale.size()}, kFloat32);
    for (int64_t k = 0; k < b.scale.size(); ++k)
      s.data[k] = static_cast<double>(static_cast<float>(a.scale.data[0]) *
                                      static_cast<float>(b.scale.data[k]));
    return s;
  }

  // The bias of the accumulator, as int32 at scale `acc`: an int32 tensor dequantized at that
  // scale (zero point 0) is read as it is; a float constant is quantized here.
  std::optional<NodeEntry> integerBias(const Entry &b, const Tensor &acc,
                                       const std::string &name) const {
    if (std::optional<QuantParams> q = dequantized(b)) {
      Entry raw = v.input(b, 0);
      if (dtypeOf(raw) != kInt32)
        return std::nullopt;
      for (double z : q->zero.data)
        if (z != 0)
          return std::nullopt;
      for (int64_t k = 0; k < acc.size(); ++k) {
        double s = q->scale.data[q->scale.size() == 1 ? 0 : k];
        if (std::abs(s - acc.data[k]) > 1e-6 * acc.data[k])
          return std::nullopt;
      }
      return rewritten(raw);
    }
    std::optional<Tensor> f = v.value(b);
    if (!f || f->shape.size() != 1)
      return std::nullopt;
    Tensor q({f->size()}, kInt32);
    for (int64_t k = 0; k < f->size(); ++k) {
      double r = std::nearbyint(static_cast<float>(f->data[k]) /
                                static_cast<float>(acc.data[acc.size() == 1 ? 0 : k]));
      if (!(std::abs(r) < 2147483647.0))
        return std::nullopt;
      q.data[k] = r;
    }
    return constant(q, name);
  }

  // The steps relu or clip at `act` keep after a requantize to `out` (scale, zero point, dtype),
  // or nullopt when that is the whole range of the type (the saturation already did it).
  std::optional<std::pair<int64_t, int64_t>>
  activationBounds(const Entry &act, const QuantParams &out, int dtype) const {
    IntRange r = intRange(dtype);
    double s = static_cast<float>(out.scale.data[0]), z = out.zero.data[0];
    double lo = z, hi = static_cast<double>(r.hi);
    if (v.is(act, {"clip"})) {
      lo = std::nearbyint(node(act).parsed.getFloat("a_min") / s) + z;
      hi = std::nearbyint(node(act).parsed.getFloat("a_max") / s) + z;
    }
    lo = std::clamp(lo, static_cast<double>(r.lo), static_cast<double>(r.hi));
    hi = std::clamp(hi, static_cast<double>(r.lo), static_cast<double>(r.hi));
    if (lo == static_cast<double>(r.lo) && hi == static_cast<double>(r.hi))
      return std::nullopt;
    return std::make_pair(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
  }

  NodeEntry requantize(const NodeEntry &x, const NodeEntry &scale, const NodeEntry &zero,
                       const Entry &q, int axis, const std::string &name) const {
    return mk("qnn.requantize", name,
              {x, scale, zero, rewritten(v.input(q, 1)), rewritten(v.input(q, 2))},
              {{"axis", std::to_string(axis)},
               {"out_dtype", node(q).parsed.getStr("out_dtype")},
               {"compute_dtype", computeDtype}});
  }

  // What ends a region at the quantize `q`: q's parameters (per tensor), the op under it — read
  // only through an optional relu or clip that only q reads — and the steps that activation keeps
  // (none when it keeps the type's whole range, or there is none).
  struct Tail {
    QuantParams out;
    Entry op;
    std::optional<std::pair<int64_t, int64_t>> bounds;
  };
  std::optional<Tail> tailOf(const Entry &q) const {
    std::optional<QuantParams> out = params(q);
    if (!out || !out->perTensor())
      return std::nullopt;
    Entry t = v.input(q, 0);
    std::optional<Entry> act;
    if (v.is(t, {"relu", "clip"})) {
      if (!onlyFeeds(t, q))
        return std::nullopt;
      act = t;
      t = v.input(t, 0);
    }
    if (!onlyFeeds(t, act ? *act : q))
      return std::nullopt;
    Tail tail{*out, t, std::nullopt};
    if (act)
      tail.bounds =
          activationBounds(*act, *out, *dtypeFromName(node(q).parsed.getStr("out_dtype")));
    return tail;
  }

  // `y`, the region's value in q's steps, clipped to what the tail's activation keeps (the clip
  // named as q), or `y` itself.
  NodeEntry clipped(const NodeEntry &y, const Tail &tail, const Entry &q) const {
    if (!tail.bounds)
      return y;
    return mk("clip", node(q).name, {y},
              {{"a_min", std::to_string(tail.bounds->first)},
               {"a_max", std::to_string(tail.bounds->second)}});
  }

  // conv2d / dense / matmul (transpose_b) between dequantized operands, then an optional
  // activation, then the quantize `q`.
  std::optional<NodeEntry> product(const Entry &q) const {
    std::optional<Tail> tail = tailOf(q);
    if (!tail)
      return std::nullopt;
    Entry t = tail->op;
    // matmul + bias is written as broadcast_add(matmul, bias).
    // The integer op computes the sum, so it takes the add's name (:layerwise compares values
    // by name: the matmul's would stand for the product without its bias).
    std::optional<Entry> addedBias;
    std::string accName;
    if (v.is(t, {"broadcast_add"}) && v.is(v.input(t, 0), {"matmul"})) {
      if (!onlyFeeds(v.input(t, 0), t))
        return std::nullopt;
      addedBias = v.input(t, 1);
      accName = node(t).name;
      t = v.input(t, 0);
    }
    const Node &op = node(t);
    bool conv = v.is(t, {"conv2d"}), dense = v.is(t, {"dense"}), matmul = v.is(t, {"matmul"});
    if (!conv && !dense && !matmul)
      return std::nullopt;
    if (matmul && (!op.parsed.getBool("transpose_b") || op.parsed.getBool("transpose_a")))
      return std::nullopt;
    const Shape *ws = v.shape(v.input(t, 1)), *xs = v.shape(v.input(t, 0));
    if (!ws || !xs || (matmul && (ws->size() != 2 || xs->size() != 2)))
      return std::nullopt;
    if (conv && op.parsed.getStr("layout") != "NCHW")
      return std::nullopt;
    std::optional<QuantParams> a = dequantized(v.input(t, 0)), b = dequantized(v.input(t, 1));
    if (!a || !b || !a->perTensor())
      return std::nullopt;
    if (!b->perTensor() && b->axis != 0)
      return std::nullopt; // per-channel weights along the output channels only
    if (!eightBit(v.input(a->node, 0)) || !eightBit(v.input(b->node, 0)))
      return std::nullopt;
    Tensor accScale = productScale(*a, *b);
    std::optional<NodeEntry> bias;
    bool hasBias = (conv || dense) && op.parsed.getBool("use_bias");
    if (hasBias || addedBias) {
      bias = integerBias(hasBias ? v.input(t, 2) : *addedBias, accScale, op.name + "_bias_int32");
      if (!bias)
        return std::nullopt;
    }
    std::vector<NodeEntry> args = {rewritten(v.input(a->node, 0)), rewritten(v.input(b->node, 0)),
                                   rewritten(v.input(a->node, 2)), rewritten(v.input(b->node, 2))};
    if (bias)
      args.push_back(*bias);
    AttrDict attrs;
    std::string opName;
    if (conv) {
      opName = "qnn.conv2d";
      for (const auto &[k, val] : op.attrs)
        attrs.emplace_back(k, val);
    } else {
      opName = "qnn.dense";
      attrs = {{"units", std::to_string((*ws)[0])}};
    }
    setAttr(attrs, "use_bias", bias ? "True" : "False");
    NodeEntry acc = mk(opName, accName.empty() ? op.name : accName, args, attrs);
    Tensor zero({1}, kInt32);
    NodeEntry y = requantize(acc, constant(accScale, op.name + "_accumulator_scale"),
                             constant(zero, op.name + "_accumulator_zero"), q, 1,
                             tail->bounds ? op.name + "_requantize" : node(q).name);
    return clipped(y, *tail, q);
  }

  // A region ending at the quantize `q` whose op (one of `ops`, under an optional activation)
  // reads two dequantized 8-bit values, each per tensor: the sum's and the product's.
  struct BinaryRegion {
    Tail tail;
    QuantParams lhs, rhs;
  };
  std::optional<BinaryRegion> binaryRegion(const Entry &q,
                                           std::initializer_list<const char *> ops) const {
    std::optional<Tail> tail = tailOf(q);
    if (!tail || !v.is(tail->op, ops))
      return std::nullopt;
    std::optional<QuantParams> a = dequantized(v.input(tail->op, 0)),
                               b = dequantized(v.input(tail->op, 1));
    if (!a || !b || !a->perTensor() || !b->perTensor() || !eightBit(v.input(a->node, 0)) ||
        !eightBit(v.input(b->node, 0)))
      return std::nullopt;
    return BinaryRegion{*tail, *a, *b};
  }

  // The sum of two dequantized values (a residual add), with an optional activation, then the
  // quantize `q`: qnn.add in q's steps.
  std::optional<NodeEntry> addition(const Entry &q) const {
    std::optional<BinaryRegion> r = binaryRegion(q, {"broadcast_add", "elemwise_add"});
    if (!r)
      return std::nullopt;
    const Tail *tail = &r->tail;
    const QuantParams *a = &r->lhs, *b = &r->rhs;
    const Node &op = node(tail->op);
    NodeEntry y =
        mk("qnn.add", tail->bounds ? op.name : node(q).name,
           {rewritten(v.input(a->node, 0)), rewritten(v.input(b->node, 0)),
            rewritten(v.input(a->node, 1)), rewritten(v.input(a->node, 2)),
            rewritten(v.input(b->node, 1)), rewritten(v.input(b->node, 2)),
            rewritten(v.input(q, 1)), rewritten(v.input(q, 2))},
           {{"out_dtype", node(q).parsed.getStr("out_dtype")}, {"compute_dtype", computeDtype}});
    return clipped(y, *tail, q);
  }

  // The product of two dequantized values (a squeeze-and-excitation gate), with an optional
  // activation, then the quantize `q`: each side's steps less its zero point, multiplied in int32
  // (8-bit operands: the product fits), requantized from the product of the scales (Relay's
  // qnn.mul, canonicalized).
  std::optional<NodeEntry> multiplication(const Entry &q) const {
    std::optional<BinaryRegion> r = binaryRegion(q, {"broadcast_mul", "elemwise_mul"});
    if (!r)
      return std::nullopt;
    const Tail *tail = &r->tail;
    const QuantParams *a = &r->lhs, *b = &r->rhs;
    const Node &op = node(tail->op);
    auto centred = [&](const QuantParams &p, const char *side) {
      NodeEntry x = mk("cast", op.name + "_" + side + "_int32", {rewritten(v.input(p.node, 0))},
                       {{"dtype", "int32"}});
      if (p.zero.data[0] == 0)
        return x;
      Tensor z({1}, kInt32);
      z.data[0] = p.zero.data[0];
      return mk("broadcast_sub", op.name + "_" + side + "_centred",
                {x, constant(z, op.name + "_" + side + "_zero")});
    };
    NodeEntry product = mk(op.op->name, op.name, {centred(*a, "lhs"), centred(*b, "rhs")});
    Tensor scale({1}, kFloat32), zero({1}, kInt32);
    scale.data[0] = static_cast<double>(static_cast<float>(a->scale.data[0]) *
                                        static_cast<float>(b->scale.data[0]));
    NodeEntry y = requantize(product, constant(scale, op.name + "_product_scale"),
                             constant(zero, op.name + "_product_zero"), q, 1,
                             tail->bounds ? op.name + "_requantize" : node(q).name);
    return clipped(y, *tail, q);
  }

  // global_avg_pool2d of a dequantized value, then the quantize `q`: the int32 sum over the
  // window requantized — its scale the input's over the window's size, its zero point the
  // input's times that size (the sum of (x - z) is the sum of x less n·z).
  std::optional<NodeEntry> averagePool(const Entry &q) const {
    Entry t = v.input(q, 0);
    if (!v.is(t, {"global_avg_pool2d"}) || !onlyFeeds(t, q) ||
        node(t).parsed.getStr("layout") != "NCHW")
      return std::nullopt;
    std::optional<QuantParams> in = dequantized(v.input(t, 0)), out = params(q);
    const Shape *xs = v.shape(v.input(t, 0));
    if (!in || !out || !in->perTensor() || !out->perTensor() || !xs || xs->size() != 4 ||
        !eightBit(v.input(in->node, 0)))
      return std::nullopt;
    int64_t n = (*xs)[2] * (*xs)[3];
    const Node &op = node(t);
    NodeEntry x =
        mk("cast", op.name + "_int32", {rewritten(v.input(in->node, 0))}, {{"dtype", "int32"}});
    NodeEntry sum = mk("sum", op.name, {x}, {{"axis", "(2, 3)"}, {"keepdims", "True"}});
    Tensor scale({1}, kFloat32), zero({1}, kInt32);
    scale.data[0] =
        static_cast<double>(static_cast<float>(in->scale.data[0]) / static_cast<float>(n));
    zero.data[0] = static_cast<double>(n) * in->zero.data[0];
    return requantize(sum, constant(scale, op.name + "_sum_scale"),
                      constant(zero, op.name + "_sum_zero"), q, 1, node(q).name);
  }

  bool eightBit(const Entry &e) const {
    int t = dtypeOf(e);
    return t == kUint8 || t == kInt8;
  }

  // An op that moves values without computing on them, between a dequantize and `q`.
  std::optional<NodeEntry> movement(const Entry &q) const {
    Entry t = v.input(q, 0);
    if (!v.is(t, {"max_pool2d", "flatten", "reshape", "transpose", "squeeze", "expand_dims"}) ||
        !onlyFeeds(t, q))
      return std::nullopt;
    std::optional<QuantParams> in = dequantized(v.input(t, 0)), out = params(q);
    if (!in || !out || !in->perTensor() || !out->perTensor())
      return std::nullopt;
    const Node &op = node(t);
    NodeEntry x = mk(op.op->name, op.name, {rewritten(v.input(in->node, 0))}, op.attrs);
    int from = dtypeOf(v.input(in->node, 0));
    if (*in == *out && dtypeName(from) == node(q).parsed.getStr("out_dtype"))
      return x;
    return requantize(x, rewritten(v.input(in->node, 1)), rewritten(v.input(in->node, 2)), q, 1,
                      node(q).name);
  }

  // concatenate of dequantized values, then the quantize `q`: each input's steps requantized to
  // q's scale and zero point where they differ, then concatenated on the integers (what Relay's
  // QNN canonicalizes qnn.concatenate to; every input's own scale is kept until the requantize).
  std::optional<NodeEntry> concatenation(const Entry &q) const {
    Entry t = v.input(q, 0);
    if (!v.is(t, {"concatenate"}) || !onlyFeeds(t, q))
      return std::nullopt;
    std::optional<QuantParams> out = params(q);
    if (!out || !out->perTensor())
      return std::nullopt;
    const Node &op = node(t);
    const std::string &outType = node(q).parsed.getStr("out_dtype");
    std::vector<NodeEntry> parts;
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      std::optional<QuantParams> in = dequantized(v.input(t, k));
      if (!in || !in->perTensor() || !eightBit(v.input(in->node, 0)))
        return std::nullopt;
      NodeEntry x = rewritten(v.input(in->node, 0));
      if (!(*in == *out && dtypeName(dtypeOf(v.input(in->node, 0))) == outType))
        x = requantize(x, rewritten(v.input(in->node, 1)), rewritten(v.input(in->node, 2)), q, 1,
                       op.name + "_input" + std::to_string(k) + "_requantize");
      parts.push_back(x);
    }
    return mk("concatenate", node(q).name, parts, op.attrs);
  }

  // quantize(dequantize(x)): x itself, or x requantized.
  std::optional<NodeEntry> roundTrip(const Entry &q) const {
    std::optional<QuantParams> in = dequantized(v.input(q, 0)), out = params(q);
    if (!in || !out || !in->perTensor() || !out->perTensor())
      return std::nullopt;
    int from = dtypeOf(v.input(in->node, 0));
    if (from != kUint8 && from != kInt8)
      return std::nullopt;
    if (*in == *out && dtypeName(from) == node(q).parsed.getStr("out_dtype"))
      return rewritten(v.input(in->node, 0));
    return requantize(rewritten(v.input(in->node, 0)), rewritten(v.input(in->node, 1)),
                      rewritten(v.input(in->node, 2)), q, 1, node(q).name);
  }
};

// Why the region ending at quantize `q` stays float, when it is one (the op before `q`, or the
// op under its activation, reads a dequantize): the op with no integer form here, or — for ops
// the pass converts — the conditions it needs. Empty when `q` ends no region (a graph input's
// quantization).
std::string keptFloat(const PatternView &v, const Entry &q) {
  Entry t = v.input(q, 0);
  if (v.node(t).isVariable())
    return "";
  auto readsDequantize = [&](const Entry &e) {
    const Node &n = v.node(e);
    if (n.isVariable())
      return false;
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (v.is(v.input(e, k), {"qnn.dequantize"}))
        return true;
    return false;
  };
  Entry op = t;
  if (!readsDequantize(t)) {
    if (!v.is(t, {"relu", "clip"}) || v.node(v.input(t, 0)).isVariable() ||
        !readsDequantize(v.input(t, 0)))
      return "";
    op = v.input(t, 0);
  }
  static const char *kConverted[] = {"conv2d",        "dense",         "matmul",
                                     "broadcast_add", "elemwise_add",  "max_pool2d",
                                     "flatten",       "reshape",       "transpose",
                                     "squeeze",       "expand_dims",   "global_avg_pool2d",
                                     "concatenate",   "broadcast_mul", "elemwise_mul"};
  const Node &n = v.node(op);
  std::string what = n.name + " (" + n.op->name + ")";
  const std::string &qName = v.node(q).name;
  if (std::find(std::begin(kConverted), std::end(kConverted), n.op->name) == std::end(kConverted))
    return "the region ending at " + qName + " stays float: " + what +
           " has no integer form in FakeQuantizationToInteger";
  return "the region ending at " + qName + " stays float: " + what +
         " converts only with constant scales and zero points (per tensor where it moves values), "
         "int8 or uint8 operands, and float values read only inside the region";
}

Graph fakeQuantizationToInteger(const Graph &src, const PassContext &ctx) {
  PatternView v(src, ctx.params);
  std::string computeDtype = requantizeComputeDtype(ctx);
  return rewritePatterns(
      src,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        if (node->isVariable() || node->op->name != "qnn.quantize")
          return {};
        Matcher m{src, v, now, computeDtype};
        Entry q{nid, 0, 0};
        if (std::optional<NodeEntry> y = m.product(q))
          return {*y};
        if (std::optional<NodeEntry> y = m.addition(q))
          return {*y};
        if (std::optional<NodeEntry> y = m.averagePool(q))
          return {*y};
        if (std::optional<NodeEntry> y = m.multiplication(q))
          return {*y};
        if (std::optional<NodeEntry> y = m.concatenation(q))
          return {*y};
        if (std::optional<NodeEntry> y = m.movement(q))
          return {*y};
        if (std::optional<NodeEntry> y = m.roundTrip(q))
          return {*y};
        if (ctx.remarks)
          if (std::string why = keptFloat(v, q); !why.empty())
            ctx.remarks->push_back(why);
        return {};
      });
}

} // namespace

std::string requantizeComputeDtype(const PassContext &ctx) {
  std::string d = ctx.get("requantize", "float32");
  if (d != "float32" && d != "int64")
    fail("requantize must be float32 (ONNX Runtime's rounding) or int64 (TVM's fixed point), got '",
         d, "'");
  return d;
}

std::string fakeQuantizationEdge(const Graph &g, const PassContext &ctx, uint32_t producer,
                                 uint32_t consumer) {
  PatternView v(g, ctx.params);
  const IndexedGraph &idx = g.index();
  auto is = [&](uint32_t nid, std::initializer_list<const char *> ops) {
    return v.is(Entry{nid, 0, 0}, ops);
  };
  // The quantize that ends the region: the consumer itself, or the op's only reader (through a
  // relu or clip that is the op's only reader).
  std::optional<Entry> q;
  uint32_t op = producer;
  if (is(consumer, {"qnn.quantize"})) {
    q = Entry{consumer, 0, 0};
  } else if (is(producer, {"qnn.dequantize"})) {
    op = consumer;
    q = v.onlyReader(Entry{op, 0, 0});
    if (q && v.is(*q, {"relu", "clip"}))
      q = v.onlyReader(*q);
  } else {
    return "";
  }
  if (!q || !v.is(*q, {"qnn.quantize"}))
    return "FakeQuantizationToInteger: " + idx.nodes[op].node->name +
           "'s value is read as a float outside a dequantize → op → quantize region, which "
           "stays float";
  const std::string &qName = v.node(*q).name;
  std::vector<std::string> remarks;
  PassContext c = ctx;
  c.remarks = &remarks;
  fakeQuantizationToInteger(g, c);
  std::string prefix = "the region ending at " + qName + " ";
  for (const std::string &r : remarks)
    if (r.rfind(prefix, 0) == 0)
      return "FakeQuantizationToInteger: " + r;
  return "FakeQuantizationToInteger: the region ending at " + qName + " computes on the integers";
}

void registerFakeQuantizationToIntegerPass() {
  PassRegistry::get().add({.name = "FakeQuantizationToInteger",
                           .summary =
                               "dequantize → conv2d/dense/matmul/add/mul/pool/concat/reshape → "
                               "quantize regions compute on the integers (qnn.conv2d, qnn.dense, "
                               "qnn.add, qnn.requantize)",
                           .optLevel = 3,
                           .needs = {"shape", "dtype"},
                           .changesGraph = true,
                           .run = fakeQuantizationToInteger});
}

} // namespace loupe
