// QnnCanonicalize: the qnn ops become the plain ops the backend lowers (Relay's
// qnn.transform.CanonicalizeOps, TVM's rules) — quantize and dequantize as float arithmetic
// with ONNX's rounding, conv2d and dense as int32 convolutions of the operands less their zero
// points (8-bit convolutions with symmetric weights as convolutions of the 8-bit operands
// themselves, summed in int32, the zero point's share taken out through the bias), requantize as an
// int32 fixed-point multiply (a 31-bit multiplier and a shift per channel, computed here from the
// scales) or, with compute_dtype float32, a float32 multiply by the ratio of the scales rounded
// half to even (ONNX Runtime's and fbgemm's arithmetic, 32-bit lanes) — so that every kernel the
// build makes is checked against the reference interpreter bit for bit.
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

// The rewrite of one qnn node over its rewritten inputs.
struct Canonicalizer {
  const Graph &src;
  const PatternView &v;
  const RewrittenEntry &now;
  uint32_t nid;
  const NodePtr &node;

  Entry source(size_t k) const { return v.input(Entry{nid, 0, 0}, k); }
  NodeEntry in(size_t k) const {
    Entry e = source(k);
    return now(e.nodeId, e.index);
  }
  std::string name(const std::string &suffix) const { return node->name + suffix; }
  int rank() const {
    const Shape *s = v.shape(source(0));
    if (!s)
      fail(node->name, " (", node->op->name, "): its data's shape is unknown (run InferShape)");
    return static_cast<int>(s->size());
  }
  int axis() const {
    int64_t a = node->parsed.getInt("axis");
    return static_cast<int>(a < 0 ? a + rank() : a);
  }
  // A per-tensor or per-channel operand `e` (1-D) placed along `axis` of a rank-`r` value, so
  // that the broadcasting ops read it per channel: expand_dims for the axes after it.
  NodeEntry along(const NodeEntry &e, size_t k, int r, int ax, const std::string &suffix) const {
    const Shape *s = v.shape(source(k));
    if (!s || s->size() != 1 || (*s)[0] == 1 || ax >= r - 1)
      return e;
    return mk("expand_dims", name(suffix + "_along"), {e},
              {{"axis", "1"}, {"num_newaxis", std::to_string(r - 1 - ax)}});
  }
  // Zeros for `n` values along `ax` of a rank-`r` operand, shaped (n, 1, …) so that the
  // broadcasting ops read them per channel; (1) for one value.
  static Tensor perChannel(size_t n, int r, int ax, int dtype) {
    Shape shape = {static_cast<int64_t>(n)};
    if (n > 1)
      for (int d = ax + 1; d < r; ++d)
        shape.push_back(1);
    return Tensor(shape, dtype);
  }
  NodeEntry cast(const NodeEntry &e, const char *dtype, const std::string &suffix) const {
    return mk("cast", name(suffix), {e}, {{"dtype", dtype}});
  }
  bool zero(size_t k) const { return v.uniform(source(k)) == std::optional<double>(0.0); }
  Tensor constant(size_t k, const char *what) const {
    std::optional<Tensor> t = v.value(source(k));
    if (!t)
      fail(node->name, " (", node->op->name, "): ", what, " (input ", k,
           ") must be a constant (a bound param or a const node) to compute the fixed-point "
           "multiplier");
    return *t;
  }
  // cast(x, int32) less the zero point (input k), which runs along `ax` of a rank-`r` operand.
  NodeEntry centred(size_t x, size_t k, int r, int ax, const std::string &what) const {
    NodeEntry c = dtypeOf(x) == kInt32 ? in(x) : cast(in(x), "int32", "_" + what + "_int32");
    if (zero(k))
      return c;
    return mk("broadcast_sub", name("_" + what + "_centred"),
              {c, along(cast(in(k), "int32", "_" + what + "_zero_int32"), k, r, ax, "_" + what)});
  }

  NodeEntry quantize() const {
    int r = rank(), ax = axis();
    int dt = *dtypeFromName(node->parsed.getStr("out_dtype"));
    IntRange range = intRange(dt);
    NodeEntry y =
        mk("round", name("_rounded"),
           {mk("broadcast_div", name("_scaled"), {in(0), along(in(1), 1, r, ax, "_scale")})});
    if (!zero(2))
      y = mk("broadcast_add", name("_shifted"),
             {y, along(cast(in(2), "float32", "_zero_float"), 2, r, ax, "_zero")});
    y = mk("clip", name("_saturated"), {y},
           {{"a_min", std::to_string(range.lo)}, {"a_max", std::to_string(range.hi)}});
    return mk("cast", node->name, {y}, {{"dtype", std::string(dtypeName(dt))}});
  }

  NodeEntry dequantize() const {
    int r = rank(), ax = axis();
    NodeEntry y = cast(in(0), "float32", "_float");
    if (!zero(2))
      y = mk("broadcast_sub", name("_centred"),
             {y, along(cast(in(2), "float32", "_zero_float"), 2, r, ax, "_zero")});
    return mk("broadcast_mul", node->name, {y, along(in(1), 1, r, ax, "_scale")});
  }

  // Input x (with scale input si and zero point input zi) in the steps of scale input so and
  // zero point input zo (none: 0), in int32 and unsaturated: fixed_point_multiply of x less its
  // zero point by the ratio of the scales (per channel along `ax` when either scale is), plus
  // the output zero point. `what` names the new nodes.
  NodeEntry rescaled(size_t x, size_t si, size_t zi, size_t so, std::optional<size_t> zo, int r,
                     int ax, const std::string &what, int32_t fractionBits = 0) const {
    Tensor inScale = constant(si, "the input scale"), outScale = constant(so, "the output scale");
    std::vector<FixedPoint> m =
        scaleRatios(inScale, outScale, node->name + " (" + node->op->name + ")");
    for (FixedPoint &f : m)
      f.shift += fractionBits;
    size_t n = m.size();
    // The input's range, less its zero point, bounds what the multiply sees.
    int inType = dtypeOf(x);
    if (inType == -1)
      fail(node->name, " (", node->op->name, "): its data's dtype is unknown (run InferType)");
    IntRange xr = intRange(inType);
    int64_t zmax = 0;
    if (!zero(zi))
      for (double d : constant(zi, "the input zero point").data)
        zmax = std::max(zmax, static_cast<int64_t>(std::abs(d)));
    int64_t maxAbs = std::max(std::abs(xr.lo), std::abs(xr.hi)) + zmax;
    for (const FixedPoint &f : m)
      if (!multiplyShiftFits(maxAbs, f.multiplier, f.shift))
        fail(node->name, " (", node->op->name, "): the multiplier ",
             std::ldexp(static_cast<double>(f.multiplier), f.shift - 31), " shifts ",
             dtypeName(inType), " values left by ", f.shift,
             " bits: the fixed-point product overflows 64 bits");
    NodeEntry c = centred(x, zi, r, ax, what.empty() ? "input" : what.substr(1));
    NodeEntry y;
    if (n == 1) { // per tensor: the attributes, constants of the kernel's loops
      y = fixedPoint(c, m[0], what + "_multiplied");
    } else {
      Tensor mt = perChannel(n, r, ax, kInt32), st = perChannel(n, r, ax, kInt32);
      for (size_t k = 0; k < n; ++k) {
        mt.data[k] = m[k].multiplier;
        st.data[k] = m[k].shift;
      }
      y = mk("fixed_point_multiply", name(what + "_multiplied"),
             {c,
              {constantNode(mt, name(what + "_multiplier")), 0, 0},
              {constantNode(st, name(what + "_shift")), 0, 0}});
    }
    if (zo && !zero(*zo))
      y = mk("broadcast_add", name(what + "_shifted"),
             {y, along(cast(in(*zo), "int32", what + "_output_zero_int32"), *zo, r, ax,
                       what + "_output_zero")});
    return y;
  }

  // fixed_point_multiply of `x` by one multiplier and shift, as attributes.
  NodeEntry fixedPoint(const NodeEntry &x, const FixedPoint &f, const std::string &suffix) const {
    return mk("fixed_point_multiply", name(suffix), {x},
              {{"multiplier", std::to_string(f.multiplier)}, {"shift", std::to_string(f.shift)}});
  }

  // An int32 value saturated to the node's out_dtype and cast to it (named as the node).
  NodeEntry saturated(const NodeEntry &y) const {
    int outType = *dtypeFromName(node->parsed.getStr("out_dtype"));
    if (outType == kInt32)
      return y;
    IntRange range = intRange(outType);
    NodeEntry c = mk("clip", name("_saturated"), {y},
                     {{"a_min", std::to_string(range.lo)}, {"a_max", std::to_string(range.hi)}});
    return mk("cast", node->name, {c}, {{"dtype", std::string(dtypeName(outType))}});
  }

  bool floatCompute() const { return node->parsed.getStr("compute_dtype") == "float32"; }

  // Input x (scale input si, zero point input zi) less its zero point, in float32, times the
  // float32 ratio of si to scale input so (a constant along `ax` when per channel): the
  // unrounded value in the output's steps. `what` names the new nodes.
  NodeEntry floatRescaled(size_t x, size_t si, size_t zi, size_t so, int r, int ax,
                          const std::string &what) const {
    std::vector<float> m =
        floatScaleRatios(constant(si, "the input scale"), constant(so, "the output scale"),
                         node->name + " (" + node->op->name + ")");
    Tensor ratio = perChannel(m.size(), r, ax, kFloat32);
    for (size_t k = 0; k < m.size(); ++k)
      ratio.data[k] = m[k];
    NodeEntry c = centred(x, zi, r, ax, what.empty() ? "input" : what.substr(1));
    return mk(
        "broadcast_mul", name(what + "_multiplied"),
        {cast(c, "float32", what + "_float"), {constantNode(ratio, name(what + "_ratio")), 0, 0}});
  }

  // A float32 value in the output's steps rounded half to even, plus the output zero point
  // (input zo, along `ax`), saturated to the out_dtype and cast to it.
  NodeEntry floatSaturated(const NodeEntry &x, size_t zo, int r, int ax) const {
    NodeEntry y = mk("round", name("_rounded"), {x});
    if (!zero(zo))
      y = mk("broadcast_add", name("_shifted"),
             {y, along(cast(in(zo), "float32", "_output_zero_float"), zo, r, ax, "_output_zero")});
    return saturated(y);
  }

  NodeEntry requantize() const {
    int r = rank();
    if (floatCompute())
      return floatSaturated(floatRescaled(0, 1, 2, 3, r, axis(), ""), 4, r, axis());
    return saturated(rescaled(0, 1, 2, 3, 4, r, axis(), ""));
  }

  // qnn.add: each side in the output's steps with 16 fractional bits, summed, rounded once (a
  // fixed-point multiply by 2^-16), plus the output zero point (as the reference kernel).
  NodeEntry add() const {
    constexpr int32_t kFractionBits = 16;
    int r = rank();
    if (floatCompute()) // each side's product rounded to float32, then the sum (the reference's)
      return floatSaturated(
          mk("broadcast_add", name("_sum"),
             {floatRescaled(0, 2, 3, 6, r, 0, "_lhs"), floatRescaled(1, 4, 5, 6, r, 0, "_rhs")}),
          7, r, 0);
    NodeEntry a = rescaled(0, 2, 3, 6, std::nullopt, r, 0, "_lhs", kFractionBits);
    NodeEntry b = rescaled(1, 4, 5, 6, std::nullopt, r, 0, "_rhs", kFractionBits);
    NodeEntry y = fixedPoint(mk("broadcast_add", name("_sum"), {a, b}),
                             FixedPoint{1 << 30, 1 - kFractionBits}, "_rounded");
    if (!zero(7))
      y = mk("broadcast_add", name("_shifted"), {y, cast(in(7), "int32", "_output_zero_int32")});
    return saturated(y);
  }

  // Refuses, naming the node, a constant scale that is not positive and finite and a constant
  // zero point outside the range of the integers it shifts (the op's inputs by position: the
  // scales and each zero point with the input whose dtype bounds it, -1: the out_dtype).
  void checkParameters() const {
    const std::string &op = node->op->name;
    std::vector<size_t> scales;
    std::vector<std::pair<size_t, int>> zeros; // zero point input, the input it belongs to
    if (op == "qnn.quantize")
      scales = {1}, zeros = {{2, -1}};
    else if (op == "qnn.dequantize")
      scales = {1}, zeros = {{2, 0}};
    else if (op == "qnn.requantize")
      scales = {1, 3}, zeros = {{2, 0}, {4, -1}};
    else if (op == "qnn.add")
      scales = {2, 4, 6}, zeros = {{3, 0}, {5, 1}, {7, -1}};
    else if (op == "qnn.conv2d" || op == "qnn.dense")
      zeros = {{2, 0}, {3, 1}};
    for (size_t k : scales)
      if (std::optional<Tensor> t = v.value(source(k)))
        for (double x : t->data)
          if (!(x > 0) || !std::isfinite(x))
            fail(node->name, " (", op, "): the scale (input ", k,
                 ") must be positive and finite, got ", pyFloatRepr(x));
    for (auto [k, of] : zeros) {
      int dt = of < 0 ? dtypeFromName(node->parsed.getStr("out_dtype")).value_or(-1) : dtypeOf(of);
      std::optional<Tensor> t = v.value(source(k));
      if (!t || dt == -1 || dt == kInt32)
        continue;
      IntRange r = intRange(dt);
      for (double x : t->data)
        if (x < static_cast<double>(r.lo) || x > static_cast<double>(r.hi))
          fail(node->name, " (", op, "): the zero point (input ", k, ") ", pyFloatRepr(x),
               " is outside ", dtypeName(dt), "'s range [", r.lo, ", ", r.hi, "]");
    }
  }

  // The dtype of input k, from the graph's dtype attribute (-1: unknown).
  int dtypeOf(size_t k) const { return v.dtype(source(k)); }

  // The node's attributes but qnn's out_dtype: the plain op's.
  AttrDict plainAttrs() const {
    AttrDict attrs;
    for (const auto &[k, val] : node->attrs)
      if (k != "out_dtype")
        attrs.emplace_back(k, val);
    return attrs;
  }

  // qnn.conv2d of 8-bit data and int8 weights whose zero points are 0, both constant but the
  // data: the convolution of the operands as they are, summed in int32 (out_dtype), which the
  // CPU's dot-product instructions compute (VNNI multiplies uint8 by int8). The data's zero
  // point zd comes out of the sum as zd·Σw per output channel, subtracted through the bias; the
  // padding reads zd (a `pad` before the convolution), so that every tap's term is (x − zd)·w
  // as in the centred form (TVM's qnn conv2d canonicalization). Null when it does not apply.
  std::optional<NodeEntry> eightBitConv() const {
    int dt = dtypeOf(0), wt = dtypeOf(1);
    const Shape *ws = v.shape(source(1));
    std::optional<double> zd = v.uniform(source(2));
    if ((dt != kUint8 && dt != kInt8) || wt != kInt8 || !zero(3) || !zd || !ws || ws->size() != 4)
      return std::nullopt;
    const Attrs &a = node->parsed;
    AttrDict attrs = plainAttrs();
    NodeEntry x = in(0);
    const auto &pad = a.getTuple("padding");
    if (*zd != 0 && pad.size() == 2 && (pad[0] || pad[1])) {
      std::string h = std::to_string(pad[0]), c = std::to_string(pad[1]);
      x = mk("pad", name("_zero_point_pad"), {x},
             {{"pad_width", "((0, 0), (0, 0), (" + h + ", " + h + "), (" + c + ", " + c + "))"},
              {"pad_value", pyFloatRepr(*zd)}});
      setAttr(attrs, "padding", "(0, 0)");
    }
    return ofEightBitOperands("conv2d", x, *zd, attrs);
  }

  // `plain` (conv2d, dense) of data `x` (input 0, or its zero-point pad) and the weight as they
  // are, summed in int32, the data's zero point `zd` taken out through the bias.
  NodeEntry ofEightBitOperands(const char *plain, const NodeEntry &x, double zd,
                               AttrDict attrs) const {
    setAttr(attrs, "out_dtype", "int32");
    std::vector<NodeEntry> args = {x, in(1)};
    bool bias = node->inputs.size() > 4;
    if (zd != 0) {
      args.push_back(biasLessZeroPoint(zd, bias));
      setAttr(attrs, "use_bias", "True");
    } else if (bias) {
      args.push_back(in(4));
    }
    return mk(plain, node->name, args, attrs);
  }

  // qnn.dense of 8-bit data and a constant int8 weight whose zero point is 0: dense of the
  // operands as they are, summed in int32 (out_dtype), the data's zero point zd taken out through
  // the bias (bias - zd·Σw per unit) — so the weight stays one byte an element (a classifier's
  // 2048 x 1000 int32 weight was 8 MB read per run). Null when it does not apply.
  std::optional<NodeEntry> eightBitDense() const {
    int dt = dtypeOf(0), wt = dtypeOf(1);
    std::optional<double> zd = v.uniform(source(2));
    bool bias = node->inputs.size() > 4;
    if ((dt != kUint8 && dt != kInt8) || wt != kInt8 || !zero(3) || !zd || !v.value(source(1)) ||
        (bias && !v.value(source(4))))
      return std::nullopt;
    return ofEightBitOperands("dense", in(0), *zd, plainAttrs());
  }

  // The bias (input 4, or none) less zd·Σw per output channel (the sum over input 1's axes
  // after the first): a constant where the weight and the bias are, else the int32 ops that
  // compute it from them (PrecomputePrune folds those of params at build time).
  NodeEntry biasLessZeroPoint(double zd, bool bias) const {
    std::optional<Tensor> w = v.value(source(1));
    std::optional<Tensor> b = bias ? v.value(source(4)) : std::nullopt;
    if (w && (!bias || b)) {
      int64_t oc = w->shape[0], per = w->size() / std::max<int64_t>(oc, 1);
      Tensor t({oc}, kInt32);
      for (int64_t o = 0; o < oc; ++o) {
        double s = 0;
        for (int64_t i = 0; i < per; ++i)
          s += w->data[o * per + i];
        t.data[o] = (b ? b->data[o] : 0) - zd * s;
      }
      return {constantNode(t, name(b ? "_bias_less_zero_point" : "_zero_point_bias")), 0, 0};
    }
    Tensor z({1}, kInt32);
    z.data[0] = zd;
    NodeEntry sums = mk("broadcast_mul", name("_zero_point_sums"),
                        {mk("sum", name("_weight_sums"), {cast(in(1), "int32", "_weight_int32")},
                            {{"axis", "(1, 2, 3)"}}),
                         {constantNode(z, name("_data_zero")), 0, 0}});
    return bias ? mk("broadcast_sub", name("_bias_less_zero_point"), {in(4), sums})
                : mk("negative", name("_zero_point_bias"), {sums});
  }

  // qnn.conv2d and qnn.dense: the plain op on int32 operands less their zero points (the
  // weight's per output channel, its axis 0).
  NodeEntry integer(const char *plain) const {
    int wr = static_cast<int>(v.shape(source(1)) ? v.shape(source(1))->size() : 2);
    NodeEntry x = centred(0, 2, 1, 0, "data");
    NodeEntry w = centred(1, 3, wr, 0, "weight");
    std::vector<NodeEntry> args = {x, w};
    if (node->inputs.size() > 4)
      args.push_back(in(4));
    return mk(plain, node->name, args, plainAttrs());
  }
};

Graph qnnCanonicalize(const Graph &src, const PassContext &ctx) {
  PatternView v(src, ctx.params);
  return rewritePatterns(
      src,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        if (node->isVariable())
          return {};
        const std::string &op = node->op->name;
        Canonicalizer c{src, v, now, nid, node};
        if (op.rfind("qnn.", 0) == 0)
          c.checkParameters();
        if (op == "qnn.quantize")
          return {c.quantize()};
        if (op == "qnn.dequantize")
          return {c.dequantize()};
        if (op == "qnn.requantize")
          return {c.requantize()};
        if (op == "qnn.add")
          return {c.add()};
        if (op == "qnn.conv2d") {
          if (std::optional<NodeEntry> e = c.eightBitConv())
            return {*e};
          return {c.integer("conv2d")};
        }
        if (op == "qnn.dense") {
          if (std::optional<NodeEntry> e = c.eightBitDense())
            return {*e};
          return {c.integer("dense")};
        }
        return {};
      });
}

} // namespace

void registerQnnCanonicalizePass() {
  PassRegistry::get().add(
      {.name = "QnnCanonicalize",
       .summary = "qnn ops become plain ops: float quantize/dequantize, int32 convolutions of "
                  "zero-point-shifted operands, requantize as a fixed-point multiply",
       .optLevel = 0,
       .needs = {"shape", "dtype"},
       .changesGraph = true,
       .run = qnnCanonicalize});
}

} // namespace loupe
