// Qnn: the quantized op set, as Relay's `qnn` dialect had it — qnn.quantize, qnn.dequantize,
// qnn.requantize, qnn.add, qnn.conv2d and qnn.dense, whose scales and zero points are inputs (per
// tensor, or per channel along `axis`) — and fixed_point_multiply, the integer op requantization
// becomes. The qnn ops have reference kernels but no loops: QnnCanonicalize rewrites them into
// plain integer and float ops before a build, so that every kernel is checked against the reference
// interpreter bit for bit.
#include "core/ops/OpHelpers.h"

#include "core/DType.h"
#include "core/Quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace loupe::ops {

namespace {

using loop::ComputeRef;
using loop::Expr;

const std::vector<std::string> kQuantizedTypes = {"int8", "uint8", "int32"};

// The axis a per-channel operand runs along, normalised against a rank-`rank` value.
int channelAxis(const Attrs &a, size_t rank) {
  int64_t axis = a.getInt("axis");
  return static_cast<int>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// Checks that input k (a scale or zero point) is a 1-D tensor of one element (per tensor) or of
// data's length along `axis` (per channel).
void checkOperand(ShapeCtx &c, size_t k, const Shape &data, const char *what) {
  const Shape &s = c.in[k];
  if (!s.rankKnown())
    return;
  if (s.size() != 1)
    c.error(cat(what, " (input ", k, ") must be 1-D, got shape ", shapeToTuple(s)));
  if (s[0] == 1 || !data.rankKnown())
    return;
  int axis = channelAxis(c.attrs, data.size());
  if (axis < 0 || axis >= static_cast<int>(data.size()))
    c.error(cat("axis ", c.attrs.getInt("axis"), " is out of range for rank ", data.size()));
  if (data[axis] > 0 && s[0] != data[axis])
    c.error(cat(what, " (input ", k, ") has ", s[0], " elements, but axis ", axis, " has ",
                data[axis]));
}

// The same shape as the data; the other inputs per tensor or along `axis`.
InferShapeFn elementwiseQuantization(std::vector<const char *> operands) {
  return [operands](ShapeCtx &c) {
    if (c.in[0].rankKnown())
      c.assignOut(0, c.in[0]);
    for (size_t k = 0; k < operands.size(); ++k)
      checkOperand(c, k + 1, c.in[0], operands[k]);
  };
}

// Element i's entry of a per-tensor or per-channel operand `p` for data of shape `s`.
double along(const Tensor &p, const Shape &s, int axis, int64_t i) {
  if (p.size() == 1)
    return p.data[0];
  return p.data[static_cast<size_t>((i / innerSize(s, axis)) % s[axis])];
}

int outType(const Attrs &a) { return *dtypeFromName(a.getStr("out_dtype")); }

// Whether a requantizing op computes in float32 (its compute_dtype), not in fixed point.
bool floatCompute(const Attrs &a) { return a.getStr("compute_dtype") == "float32"; }

// A requantizing op's result type; float32 arithmetic saturates only to 8-bit types (a float32
// sum is not exact over int32's range).
int requantizedType(const TypeCtx &c) {
  int t = outType(c.attrs);
  if (floatCompute(c.attrs) && t == kInt32)
    fail("operator ", c.node, " (", c.op, "): compute_dtype float32 needs an 8-bit out_dtype, got ",
         "int32");
  return t;
}

void quantizeKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                    std::vector<Tensor> &out) {
  const Tensor &x = *in[0], &scale = *in[1], &zero = *in[2];
  int axis = channelAxis(a, x.shape.size()), dt = outType(a);
  for (int64_t i = 0; i < x.size(); ++i)
    out[0].data[i] = quantizeValue(static_cast<float>(x.data[i]),
                                   static_cast<float>(along(scale, x.shape, axis, i)),
                                   static_cast<int64_t>(along(zero, x.shape, axis, i)), dt);
}

void dequantizeKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
  const Tensor &q = *in[0], &scale = *in[1], &zero = *in[2];
  int axis = channelAxis(a, q.shape.size());
  for (int64_t i = 0; i < q.size(); ++i)
    out[0].data[i] = dequantizeValue(q.data[i], static_cast<float>(along(scale, q.shape, axis, i)),
                                     static_cast<int64_t>(along(zero, q.shape, axis, i)));
}

void requantizeKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
  const Tensor &x = *in[0], &inZero = *in[2], &outZero = *in[4];
  int axis = channelAxis(a, x.shape.size());
  IntRange r = intRange(outType(a)), xr = intRange(x.dtype);
  int64_t inner = innerSize(x.shape, axis);
  auto channel = [&](size_t n, int64_t i) {
    return n == 1 ? 0 : static_cast<size_t>((i / inner) % x.shape[axis]);
  };
  if (floatCompute(a)) {
    std::vector<float> m = floatScaleRatios(*in[1], *in[3], "qnn.requantize");
    for (int64_t i = 0; i < x.size(); ++i) {
      auto zi = static_cast<int64_t>(along(inZero, x.shape, axis, i));
      double y = multiplyRound(static_cast<int64_t>(x.data[i]) - zi, m[channel(m.size(), i)]) +
                 along(outZero, x.shape, axis, i);
      out[0].data[i] = std::clamp(y, static_cast<double>(r.lo), static_cast<double>(r.hi));
    }
    return;
  }
  std::vector<FixedPoint> m = scaleRatios(*in[1], *in[3], "qnn.requantize");
  for (int64_t i = 0; i < x.size(); ++i) {
    auto zi = static_cast<int64_t>(along(inZero, x.shape, axis, i));
    const FixedPoint &f = m[channel(m.size(), i)];
    if (!multiplyShiftFits(std::max(std::abs(xr.lo - zi), std::abs(xr.hi - zi)), f.multiplier,
                           f.shift))
      fail("qnn.requantize: the multiplier's shift (", f.shift, ") overflows 64 bits for ",
           dtypeName(x.dtype), " input");
    int64_t y = multiplyShift(static_cast<int64_t>(x.data[i]) - zi, f.multiplier, f.shift) +
                static_cast<int64_t>(along(outZero, x.shape, axis, i));
    out[0].data[i] = static_cast<double>(std::clamp(y, r.lo, r.hi));
  }
}

// The plain op `plainOp` (conv2d, dense) on the operands less their zero points: qnn.conv2d's
// and qnn.dense's reference, so that the arithmetic of the convolution stays in one place. The
// weight's zero point runs along its axis 0 (output channels, units).
void integerKernel(const char *plainOp, const Attrs &a, const std::vector<const Tensor *> &in,
                   std::vector<Tensor> &out) {
  const OpDef &def = *OpRegistry::get().find(plainOp);
  AttrDict plain;
  for (const ParamSpec &p : def.params)
    plain.emplace_back(p.name, a.raw(p.name));
  Attrs pa = def.parse(plain, false);
  Tensor x = *in[0], w = *in[1];
  const Tensor &zx = *in[2], &zw = *in[3];
  for (int64_t i = 0; i < x.size(); ++i)
    x.data[i] -= zx.data[0];
  for (int64_t i = 0; i < w.size(); ++i)
    w.data[i] -= along(zw, w.shape, 0, i);
  x.dtype = w.dtype = kInt32;
  std::vector<const Tensor *> args = {&x, &w};
  if (in.size() > 4)
    args.push_back(in[4]);
  def.compute(pa, args, out);
}

// qnn.add keeps this many fractional bits of each side's rescaled steps, so that the sum is
// rounded once (as PyTorch's and ONNX Runtime's float arithmetic rounds it), not each side.
constexpr int32_t kAddFractionBits = 16;

// The fixed-point ratio of scale `from` to scale `to` (one element each), with
// kAddFractionBits more bits, checked for 64-bit room against `dtype`'s values less `zero`.
FixedPoint ratioOf(const Tensor &from, const Tensor &to, int dtype, int64_t zero) {
  FixedPoint f = scaleRatios(from, to, "qnn.add").at(0);
  f.shift += kAddFractionBits;
  IntRange r = intRange(dtype);
  if (!multiplyShiftFits(std::max(std::abs(r.lo - zero), std::abs(r.hi - zero)), f.multiplier,
                         f.shift))
    fail("qnn.add: the multiplier's shift (", f.shift, ") overflows 64 bits for ", dtypeName(dtype),
         " input");
  return f;
}

// qnn.add: each side's steps less its zero point times the ratio of its scale to the output's,
// summed and rounded once, plus the output zero point, saturated. In fixed point
// (compute_dtype int64): kAddFractionBits fractional bits kept of each side, the sum rounded ties
// upward by a fixed-point multiply by 2^-kAddFractionBits. In float32: each side's product and
// the sum rounded to float32, the sum rounded half to even (ONNX Runtime's QLinearAdd).
void addKernel(const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
  const Tensor &l = *in[0], &r = *in[1];
  auto za = static_cast<int64_t>(in[3]->data[0]), zb = static_cast<int64_t>(in[5]->data[0]),
       zo = static_cast<int64_t>(in[7]->data[0]);
  IntRange range = intRange(outType(a));
  Tensor &y = out[0];
  int64_t i = 0;
  auto store = [&](auto sum) {
    forEachIndex(y.shape, [&](const std::vector<int64_t> &idx) {
      auto x0 = static_cast<int64_t>(l.data[broadcastOffset(l.shape, idx)]);
      auto x1 = static_cast<int64_t>(r.data[broadcastOffset(r.shape, idx)]);
      int64_t v = zo + sum(x0 - za, x1 - zb);
      y.data[i++] = static_cast<double>(std::clamp(v, range.lo, range.hi));
    });
  };
  if (floatCompute(a)) {
    float ra = floatScaleRatios(*in[2], *in[6], "qnn.add").at(0);
    float rb = floatScaleRatios(*in[4], *in[6], "qnn.add").at(0);
    store([&](int64_t x0, int64_t x1) {
      // Two statements: each product rounded to float32 before the sum, never contracted.
      float pa = static_cast<float>(x0) * ra;
      float pb = static_cast<float>(x1) * rb;
      float s = pa + pb;
      return static_cast<int64_t>(std::nearbyint(s));
    });
    return;
  }
  FixedPoint fa = ratioOf(*in[2], *in[6], l.dtype, za);
  FixedPoint fb = ratioOf(*in[4], *in[6], r.dtype, zb);
  store([&](int64_t x0, int64_t x1) {
    int64_t sum =
        multiplyShift(x0, fa.multiplier, fa.shift) + multiplyShift(x1, fb.multiplier, fb.shift);
    return multiplyShift(sum, 1 << 30, 1 - kAddFractionBits);
  });
}

// qnn.conv2d's and qnn.dense's shapes and types: the plain op's rule on (data, weight[, bias]);
// the zero points per tensor (data) and per tensor or per output channel (weight).
InferShapeFn integerShape(const char *plainOp) {
  return [plainOp](ShapeCtx &c) {
    const OpDef &def = *OpRegistry::get().find(plainOp);
    std::vector<Shape> in = {c.in[0], c.in[1]};
    if (c.in.size() > 4)
      in.push_back(c.in[4]);
    std::vector<Shape> out = c.out;
    ShapeCtx inner{c.node, c.op, c.attrs, in, out, c.argNames};
    def.inferShape(inner);
    c.assignIn(0, in[0]);
    c.assignIn(1, in[1]);
    if (c.in.size() > 4)
      c.assignIn(4, in[2]);
    c.assignOut(0, out[0]);
    for (size_t k : {2, 3})
      if (c.in[k].rankKnown() && c.in[k].size() != 1)
        c.error(
            cat("the zero point (input ", k, ") must be 1-D, got shape ", shapeToTuple(c.in[k])));
    if (c.in[2].rankKnown() && c.in[2][0] != 1)
      c.error("the data's zero point (input 2) must hold one value");
    if (c.in[3].rankKnown() && c.in[1].rankKnown() && c.in[3][0] != 1 && c.in[3][0] != c.in[1][0])
      c.error(cat("the weight's zero point (input 3) has ", c.in[3][0],
                  " elements, but the weight ", c.in[1][0], " output channels"));
  };
}

void integerType(TypeCtx &c) {
  for (size_t k = 0; k < 4; ++k)
    requireInteger(c, k, k < 2 ? "an operand" : "a zero point");
  if (c.in.size() > 4)
    c.assignIn(4, kInt32);
  c.assignOut(0, outType(c.attrs));
}

// qnn.conv2d's and qnn.dense's symbolic shapes: the plain op's symbolic rule on (data, weight[,
// bias]).
SymShapeFn integerSymShape(const char *plainOp) {
  return [plainOp](const SymShapeCtx &c) {
    std::vector<SymDims> in = {c.in[0], c.in[1]};
    if (c.in.size() > 4)
      in.push_back(c.in[4]);
    SymShapeCtx inner{c.node, c.op, c.attrs, in, 1};
    return OpRegistry::get().find(plainOp)->symShape(inner);
  };
}

// fixed_point_multiply's shape: the data's; the multiplier and shift broadcast against it.
void fixedPointShape(ShapeCtx &c) {
  if (!c.in[0].rankKnown())
    return;
  for (size_t k = 1; k < c.in.size(); ++k)
    if (c.in[k].rankKnown() &&
        (c.in[k].size() > c.in[0].size() || broadcastShape(c, c.in[0], c.in[k]) != c.in[0]))
      c.error(cat("input ", k, " of shape ", shapeToTuple(c.in[k]), " does not broadcast to ",
                  shapeToTuple(c.in[0])));
  c.assignOut(0, c.in[0]);
}

// fixed_point_multiply's multiplier and shift are attributes (TVM's per-tensor form) or inputs 1
// and 2, broadcast against the data (per channel).
bool attributeForm(const Attrs &a) { return a.getInt("multiplier") != 0; }

void fixedPointKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
  const Tensor &x = *in[0];
  bool attrs = attributeForm(a);
  auto m0 = static_cast<int32_t>(a.getInt("multiplier"));
  auto s0 = static_cast<int32_t>(a.getInt("shift"));
  int64_t i = 0;
  forEachIndex(x.shape, [&](const std::vector<int64_t> &idx) {
    auto mi = attrs ? m0 : static_cast<int32_t>(in[1]->data[broadcastOffset(in[1]->shape, idx)]);
    auto si = attrs ? s0 : static_cast<int32_t>(in[2]->data[broadcastOffset(in[2]->shape, idx)]);
    out[0].data[i] = static_cast<double>(multiplyShift(static_cast<int64_t>(x.data[i]), mi, si));
    ++i;
  });
}

// With the attribute form the multiplier and shift are constants of the loops, which LLVM folds
// into the multiply and the shifts (a rounding by 2^-16 becomes an add and a shift).
std::vector<ComputeRef> fixedPointLower(const Attrs &a, const std::vector<ComputeRef> &in,
                                        const std::vector<Shape> &shapes,
                                        const std::vector<int> &types) {
  ComputeRef x = in[0];
  bool attrs = attributeForm(a);
  int64_t m0 = a.getInt("multiplier"), s0 = a.getInt("shift");
  return {loop::compute(
      shapes[0], types[0],
      [&](const std::vector<Expr> &i) {
        Expr m = attrs ? loop::intImm(m0) : read(in[1], broadcastIndices(in[1]->shape, i));
        Expr s = attrs ? loop::intImm(s0) : read(in[2], broadcastIndices(in[2]->shape, i));
        return loop::call("q_multiply_shift", {read(x, i), m, s}, types[0]);
      },
      "compute", "broadcast")};
}

} // namespace

void registerQnnOps() {
  OpRegistry &r = OpRegistry::get();
  // TVM's compute_dtype: how a requantizing op multiplies by the ratio of its scales.
  auto computeDtypeParam = [](OpDef &d) -> OpDef & {
    return d.param("compute_dtype", ParamKind::Enum, "int64",
                   "int64: a 31-bit fixed-point multiplier and a shift, ties rounded upward "
                   "(TVM's); float32: the float32 ratio, ties to even (ONNX Runtime's, fbgemm's); "
                   "float32 needs an 8-bit out_dtype",
                   {"int64", "float32"});
  };
  auto axisParam = [](OpDef &d) -> OpDef & {
    return d.param("axis", ParamKind::Int, "1",
                   "the axis per-channel scales and zero points run along");
  };
  OpDef &q = r.add("qnn.quantize")
                 .describe("float32 to integer steps: saturate(round_half_even(data / scale) + "
                           "zero_point), per tensor or per channel (ONNX QuantizeLinear)")
                 .arguments({"data", "scale", "zero_point"})
                 .setPattern(kOpaque);
  axisParam(q).param("out_dtype", ParamKind::Enum, "uint8", "the integer type", {"int8", "uint8"});
  q.shape(elementwiseQuantization({"the scale", "the zero point"}))
      .symbolic(symSameShape)
      .type([](TypeCtx &c) {
        c.assignIn(0, kFloat32);
        c.assignIn(1, kFloat32);
        requireInteger(c, 2, "the zero point");
        c.assignOut(0, outType(c.attrs));
      })
      .kernel(quantizeKernel);

  OpDef &dq = r.add("qnn.dequantize")
                  .describe("integer steps to float32: (data - zero_point) * scale, per tensor or "
                            "per channel (ONNX DequantizeLinear)")
                  .arguments({"data", "scale", "zero_point"})
                  .setPattern(kOpaque);
  axisParam(dq)
      .shape(elementwiseQuantization({"the scale", "the zero point"}))
      .symbolic(symSameShape)
      .type([](TypeCtx &c) {
        requireInteger(c, 0, "the data");
        c.assignIn(1, kFloat32);
        requireInteger(c, 2, "the zero point");
        c.assignOut(0, kFloat32);
      })
      .kernel(dequantizeKernel);

  OpDef &rq =
      r.add("qnn.requantize")
          .describe("integer steps of one quantization to another's: saturate(zero_point_out + "
                    "(data - zero_point_in) * input_scale / output_scale), the ratio as a "
                    "31-bit fixed-point multiplier and a shift, ties rounded upward (TVM's), or "
                    "in float32 (compute_dtype)")
          .arguments(
              {"data", "input_scale", "input_zero_point", "output_scale", "output_zero_point"})
          .setPattern(kOpaque);
  axisParam(rq).param("out_dtype", ParamKind::Enum, "int8", "the integer type", kQuantizedTypes);
  computeDtypeParam(rq);
  rq.symbolic(symSameShape);
  rq.shape(elementwiseQuantization({"the input scale", "the input zero point", "the output scale",
                                    "the output zero point"}))
      .type([](TypeCtx &c) {
        requireInteger(c, 0, "the data");
        c.assignIn(1, kFloat32);
        requireInteger(c, 2, "the input zero point");
        c.assignIn(3, kFloat32);
        requireInteger(c, 4, "the output zero point");
        c.assignOut(0, requantizedType(c));
      })
      .kernel(requantizeKernel);

  OpDef &add =
      r.add("qnn.add")
          .describe("the sum of two quantized values in a third quantization: each side's steps "
                    "rescaled to the output's in fixed point with 16 fractional bits (or in "
                    "float32: compute_dtype), summed and rounded once, plus its zero point, "
                    "saturated; the operands broadcast")
          .arguments({"lhs", "rhs", "lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point",
                      "output_scale", "output_zero_point"})
          .setPattern(kOpaque);
  add.param("out_dtype", ParamKind::Enum, "int8", "the integer type", kQuantizedTypes);
  computeDtypeParam(add);
  add.symbolic(symBroadcastBinary);
  add.shape([](ShapeCtx &c) {
       broadcastBinaryShape(c);
       for (size_t k = 2; k < 8; ++k)
         if (c.in[k].rankKnown() && (c.in[k].size() != 1 || c.in[k][0] != 1))
           c.error(cat("input ", k, " (a scale or zero point) must hold one value, got shape ",
                       shapeToTuple(c.in[k])));
     })
      .type([](TypeCtx &c) {
        for (size_t k : {0, 1, 3, 5, 7})
          requireInteger(c, k, k < 2 ? "an operand" : "a zero point");
        for (size_t k : {2, 4, 6})
          c.assignIn(k, kFloat32);
        c.assignOut(0, requantizedType(c));
      })
      .kernel(addKernel);

  // qnn.conv2d and qnn.dense take the plain op's attributes and its optional int32 bias, and
  // accumulate (data - zero point) * (weight - zero point) in int32.
  for (const char *plain : {"conv2d", "dense"}) {
    std::string name = std::string("qnn.") + plain;
    const OpDef &p = *r.find(plain);
    OpDef &d =
        r.add(name).describe(cat("the integer ", plain,
                                 " of (data - input_zero_point) and (weight - "
                                 "kernel_zero_point, per output channel), accumulated in int32"));
    for (const ParamSpec &s : p.params)
      if (s.name != "out_dtype") // the plain op's; qnn's own says int32
        d.params.push_back(s);
    d.param("out_dtype", ParamKind::Enum, "int32", "the accumulator's type", {"int32"});
    d.argsFn = [](const Attrs &a) {
      std::vector<std::string> args = {"data", "weight", "input_zero_point", "kernel_zero_point"};
      if (a.getBool("use_bias"))
        args.push_back("bias");
      return args;
    };
    d.setPattern(kOpaque).shape(integerShape(plain)).symbolic(integerSymShape(plain));
    d.type(integerType);
    d.kernel([plain](const Attrs &a, const std::vector<const Tensor *> &in,
                     std::vector<Tensor> &out) { integerKernel(plain, a, in, out); });
  }

  OpDef &fpm =
      r.add("fixed_point_multiply")
          .describe("round(data * multiplier * 2^(shift - 31)) in 64-bit integer arithmetic, "
                    "ties upward: requantization's multiply (TVM's q_multiply_shift); multiplier "
                    "and shift int32 attributes (per tensor) or inputs broadcast against the data "
                    "(per channel)")
          .param("multiplier", ParamKind::Int, "0",
                 "the multiplier in [2^30, 2^31) for every element; 0: input 1 gives it")
          .param("shift", ParamKind::Int, "0", "the shift with the multiplier attribute");
  fpm.argsFn = [](const Attrs &a) {
    return attributeForm(a) ? std::vector<std::string>{"data"}
                            : std::vector<std::string>{"data", "multiplier", "shift"};
  };
  fpm.setPattern(kBroadcast)
      // Per channel as broadcast_mul ((C, 1, 1) operands block as C16c); the attribute form is
      // elementwise.
      .layout([](const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &last,
                 std::vector<std::string> &out) {
        if (in.size() == 1)
          layoutArbitrary(a, in, last, out);
        else
          layoutBroadcast(a, in, last, out);
      })
      .shape(fixedPointShape)
      .symbolic(symSameShape)
      .type([](TypeCtx &c) {
        requireInteger(c, 0, "the data");
        for (size_t k = 1; k < c.in.size(); ++k)
          c.assignIn(k, kInt32);
        if (c.in[0] != -1)
          c.assignOut(0, c.in[0]);
      })
      .kernel(fixedPointKernel)
      .lower(fixedPointLower);
}

} // namespace loupe::ops
