// Quantization: the ONNX converters of linear quantization — QuantizeLinear and DequantizeLinear
// with constant scales and zero points as qnn.quantize and qnn.dequantize (which the QDQ passes
// read), otherwise, and DynamicQuantizeLinear, as compositions of rounding, scaling and casts;
// ConvInteger,
// MatMulInteger, QLinearConv and QLinearMatMul as int32 arithmetic on zero-point-shifted operands,
// rescaled to the output's quantization.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// QuantizeLinear's and DequantizeLinear's scale or zero point (input k) against x (input 0): a
// scalar (per tensor) read as a one-element tensor; a 1-D one (opset 13, per axis) along `axis`.
// A scale (input k) that is a constant must be positive and finite: ONNX leaves a zero scale
// undefined, and its division would make infinities that look like results.
void checkScale(Importer &im, const onnx::NodeProto &n, int k) {
  const Tensor *t = im.constant(n, k);
  if (!t)
    return;
  for (int64_t i = 0; i < t->size(); ++i)
    if (!(t->data[i] > 0) || !std::isfinite(t->data[i]))
      fail(im.where(n), ": input ", k, " (a scale) must be positive and finite, got ",
           floatText(t->data[i]), t->size() > 1 ? " at element " + std::to_string(i) : "");
}

// A quantization operand (input k: a scale or a zero point) of a value of rank `rank`: a scalar
// (per tensor) read as a one-element tensor; a 1-D one along `axis` (per axis: its length must be
// `length` when that is known, -1 when not).
NodeEntry operandAlong(Importer &im, const onnx::NodeProto &n, int k, int64_t rank, int64_t axis,
                       int64_t length, const std::string &suffix) {
  if (im.isScalar(n, k))
    return im.broadcastInput(n, k);
  Shape s = shapeNow(im, n, k, 1);
  if (s.size() != 1)
    fail(im.where(n), ": input ", k, " must be a scalar or 1-D, got ", shapeToList(s));
  if (s[0] == 1) // one element (a scalar computed in the graph): it broadcasts as it is
    return im.input(n, k);
  if (length >= 0 && s[0] != length)
    fail(im.where(n), ": input ", k, " has ", s[0], " elements, but axis ", axis, " has ", length);
  return alongAxis(im, n, im.input(n, k), rank, axis, suffix);
}

// QuantizeLinear's and DequantizeLinear's scale or zero point (input k) against x (input 0),
// along the node's `axis` (opset 13, per axis).
NodeEntry quantizationOperand(Importer &im, const onnx::NodeProto &n, int k,
                              const std::string &suffix) {
  if (k == 1)
    checkScale(im, n, k);
  if (im.isScalar(n, k) || shapeNow(im, n, k, 1) == Shape{1})
    return operandAlong(im, n, k, 0, 0, -1, suffix); // per tensor: no axis to read
  Shape x = shapeNow(im, n, 0, 1);
  auto rank = static_cast<int64_t>(x.size());
  int64_t axis = axisOf(im, n, im.attrInt(n, "axis", 1), rank);
  return operandAlong(im, n, k, rank, axis, x[axis], suffix);
}

// The zero point (input 2) of QuantizeLinear or DequantizeLinear as float32, if it has one.
std::optional<NodeEntry> zeroPointAsFloat(Importer &im, const onnx::NodeProto &n) {
  if (!im.hasInput(n, 2))
    return std::nullopt;
  return im.op(n, "cast", {{"dtype", "float32"}}, {quantizationOperand(im, n, 2, "_zero_point")},
               "_zero_float");
}

// The integer types QuantizeLinear writes and the range it saturates to.
struct Quantized {
  int dtype;
  double lo, hi;
};
// The type of zero point input `k` (uint8 without one).
Quantized quantizedType(Importer &im, const onnx::NodeProto &n, int k = 2) {
  int dt = im.hasInput(n, k) ? im.knownDType(n, k) : kUint8;
  if (dt == -1 && !im.isScalar(n, k)) // computed in the graph (DynamicQuantizeLinear expanded)
    dt = im.inferredDType(im.input(n, k));
  switch (dt) {
  case kUint8:
    return {dt, 0, 255};
  case kInt8:
    return {dt, -128, 127};
  case kUint16:
    return {dt, 0, 65535};
  case kInt16:
    return {dt, -32768, 32767};
  default:
    fail(im.where(n), ": the zero point (input ", k, ") must be of type uint8, int8, ",
         "uint16 or int16");
  }
}

// saturate(round(x / scale) + zero) in q's type: QuantizeLinear's and DynamicQuantizeLinear's
// arithmetic (round halves to even), `zero` already a float tensor or null. Its nodes are named
// with `what` (the result: the node's own name when empty).
NodeEntry quantized(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                    const NodeEntry &scale, const NodeEntry *zero, const Quantized &q,
                    const std::string &what = "") {
  NodeEntry y = im.op(n, "round", {}, {im.op(n, "broadcast_div", {}, {x, scale}, what + "_scaled")},
                      what + "_rounded");
  if (zero)
    y = im.op(n, "broadcast_add", {}, {y, *zero}, what + "_shifted");
  y = im.op(n, "clip", {{"a_min", floatText(q.lo)}, {"a_max", floatText(q.hi)}}, {y},
            what + "_saturated");
  return im.op(n, "cast", {{"dtype", std::string(dtypeName(q.dtype))}}, {y}, what);
}

// A quantization operand (input k: the scale or the zero point) as the qnn ops take it: 1-D,
// one element per tensor (a scalar becomes a (1,) param) or one per channel.
NodeEntry qnnOperand(Importer &im, const onnx::NodeProto &n, int k) {
  return im.isScalar(n, k) ? im.broadcastInput(n, k) : im.input(n, k);
}

// The zero point (input 2) as the qnn ops take it: a constant of type `dtype` (zero without one).
NodeEntry qnnZeroPoint(Importer &im, const onnx::NodeProto &n, int dtype) {
  if (im.hasInput(n, 2))
    return qnnOperand(im, n, 2);
  return im.constantParam(n, "_zero_point", Tensor({1}, dtype));
}

// Whether QuantizeLinear or DequantizeLinear `n` becomes a qnn op: its scale and zero point are
// constants (the passes read them; DynamicQuantizeLinear's computed ones stay arithmetic) and
// the integers are 8-bit (or int32 for a dequantized bias).
bool asQnnOp(Importer &im, const onnx::NodeProto &n, int integerType) {
  if (!im.constant(n, 1) || (im.hasInput(n, 2) && !im.constant(n, 2)))
    return false;
  return integerType == kUint8 || integerType == kInt8 || integerType == kInt32;
}

std::vector<NodeEntry> quantizeLinear(Importer &im, const onnx::NodeProto &n) {
  // y = saturate(round(x / y_scale) + y_zero_point), halves to even, in y_zero_point's
  // type (uint8 without one). Opset 19's saturate is for float8 targets only.
  im.only(n, {"axis", "saturate"});
  Quantized q = quantizedType(im, n);
  NodeEntry x = im.input(n, 0);
  if (int dt = im.knownDType(n, 0); dt != kFloat32 && dt != kFloat64 && dt != -1)
    x = im.op(n, "cast", {{"dtype", "float32"}}, {x}, "_float");
  if (q.dtype != kInt32 && asQnnOp(im, n, q.dtype)) {
    quantizationOperand(im, n, 1, "_scale"); // checks the scale and its length along the axis
    return {im.op(n, "qnn.quantize",
                  {{"axis", std::to_string(im.attrInt(n, "axis", 1))},
                   {"out_dtype", std::string(dtypeName(q.dtype))}},
                  {x, qnnOperand(im, n, 1), qnnZeroPoint(im, n, q.dtype)})};
  }
  std::optional<NodeEntry> zero = zeroPointAsFloat(im, n);
  return std::vector<NodeEntry>{
      quantized(im, n, x, quantizationOperand(im, n, 1, "_scale"), zero ? &*zero : nullptr, q)};
}

std::vector<NodeEntry> dynamicQuantizeLinear(Importer &im, const onnx::NodeProto &n) {
  // uint8 with a scale and zero point from x's range stretched to hold 0: scale =
  // (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(-min / scale)).
  // The scale and zero point are rank 0 in ONNX: one element each here.
  im.only(n, {});
  NodeEntry x = im.input(n, 0);
  NodeEntry lo = im.op(n, "clip", {{"a_min", "-3.4e38"}, {"a_max", "0"}},
                       {im.op(n, "min", {}, {x}, "_min")}, "_low");
  NodeEntry hi = im.op(n, "clip", {{"a_min", "0"}, {"a_max", "3.4e38"}},
                       {im.op(n, "max", {}, {x}, "_max")}, "_high");
  NodeEntry scale = im.op(n, "__div_scalar__", {{"scalar", "255"}},
                          {im.op(n, "broadcast_sub", {}, {hi, lo}, "_range")}, "_scale");
  Quantized u8{kUint8, 0, 255};
  NodeEntry zero = quantized(im, n, im.op(n, "negative", {}, {lo}, "_negated_low"), scale, nullptr,
                             u8, "_zero_point");
  NodeEntry zeroFloat = im.op(n, "cast", {{"dtype", "float32"}}, {zero}, "_zero_float");
  return std::vector<NodeEntry>{quantized(im, n, x, scale, &zeroFloat, u8), scale, zero};
}

std::vector<NodeEntry> dequantizeLinear(Importer &im, const onnx::NodeProto &n) {
  // y = (x - x_zero_point) * x_scale, in float32.
  im.only(n, {"axis"});
  int dt = im.knownDType(n, 0);
  if (dt == -1)
    dt = im.inferredDType(im.input(n, 0));
  if (asQnnOp(im, n, dt)) {
    quantizationOperand(im, n, 1, "_scale"); // checks the scale and its length along the axis
    return {im.op(n, "qnn.dequantize", {{"axis", std::to_string(im.attrInt(n, "axis", 1))}},
                  {im.input(n, 0), qnnOperand(im, n, 1), qnnZeroPoint(im, n, dt)})};
  }
  NodeEntry y = im.op(n, "cast", {{"dtype", "float32"}}, {im.input(n, 0)}, "_float");
  if (std::optional<NodeEntry> zero = zeroPointAsFloat(im, n))
    y = im.op(n, "broadcast_sub", {}, {y, *zero}, "_centred");
  return std::vector<NodeEntry>{
      im.op(n, "broadcast_mul", {}, {y, quantizationOperand(im, n, 1, "_scale")})};
}

// --- integer arithmetic: ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul ---

// Integer input `k` as int32 less its zero point (input `zk`, when the node has one and it is not
// a constant zero), the zero point per tensor or along `axis` of a rank-`rank` value whose axis
// has `length` elements (-1: not known). Named `what` and suffixes.
NodeEntry shifted(Importer &im, const onnx::NodeProto &n, int k, int zk, int64_t rank, int64_t axis,
                  int64_t length, const std::string &what) {
  int dt = im.knownDType(n, k);
  if (dt != -1 && dt != kUint8 && dt != kInt8)
    fail(im.where(n), ": input ", k, " must be of type uint8 or int8, got ", dtypeName(dt));
  NodeEntry v = im.op(n, "cast", {{"dtype", "int32"}}, {im.input(n, k)}, what + "_int32");
  if (!im.hasInput(n, zk))
    return v;
  if (const Tensor *z = im.constant(n, zk);
      z && std::all_of(z->data.begin(), z->data.end(), [](double d) { return d == 0; }))
    return v;
  if (int zt = im.knownDType(n, zk); zt != -1 && dt != -1 && zt != dt)
    fail(im.where(n), ": input ", zk, " (input ", k, "'s zero point) must be of its type ",
         dtypeName(dt), ", got ", dtypeName(zt));
  NodeEntry z = im.op(n, "cast", {{"dtype", "int32"}},
                      {operandAlong(im, n, zk, rank, axis, length, what + "_zero_point")},
                      what + "_zero_int32");
  return im.op(n, "broadcast_sub", {}, {v, z}, what + "_centred");
}

// A scale (input k) per tensor or along `axis` of a rank-`rank` value.
NodeEntry scaleAlong(Importer &im, const onnx::NodeProto &n, int k, int64_t rank, int64_t axis,
                     int64_t length, const std::string &what) {
  checkScale(im, n, k);
  return operandAlong(im, n, k, rank, axis, length, what);
}

// The QLinear ops' output: the int32 accumulator `acc` times `multiplier` (the input scales'
// product over the output's scale), the output's zero point (input `zk`) added, rounded half to
// even, saturated to the zero point's type — ONNX's reference order (the zero point is added
// before rounding).
NodeEntry requantized(Importer &im, const onnx::NodeProto &n, const NodeEntry &acc,
                      const NodeEntry &multiplier, int zk) {
  Quantized q = quantizedType(im, n, zk);
  if (q.dtype != kUint8 && q.dtype != kInt8)
    fail(im.where(n), ": input ", zk, " (the output's zero point) must be of type uint8 or int8");
  NodeEntry y =
      im.op(n, "broadcast_mul", {},
            {im.op(n, "cast", {{"dtype", "float32"}}, {acc}, "_accumulated_float"), multiplier},
            "_rescaled");
  if (im.hasInput(n, zk))
    y = im.op(
        n, "broadcast_add", {},
        {y, im.op(n, "cast", {{"dtype", "float32"}}, {im.broadcastInput(n, zk)}, "_zero_float")},
        "_shifted");
  y = im.op(n, "round", {}, {y}, "_rounded");
  y = im.op(n, "clip", {{"a_min", floatText(q.lo)}, {"a_max", floatText(q.hi)}}, {y}, "_saturated");
  return im.op(n, "cast", {{"dtype", std::string(dtypeName(q.dtype))}}, {y});
}

// ConvInteger's and QLinearConv's int32 convolution of x (input xk) by w (input wk), each less
// its zero point (the input two after it: x's per tensor, w's per tensor or per output channel),
// with an optional int32 bias; the padding is zero after the shift, as ONNX's reference pads the
// shifted input. `w` is the weight's shape.
NodeEntry integerConvolution(Importer &im, const onnx::NodeProto &n, int xk, int wk, const Shape &w,
                             const std::optional<NodeEntry> &bias, const std::string &suffix) {
  auto rank = static_cast<int64_t>(w.size());
  NodeEntry x = shifted(im, n, xk, xk + 2, rank, 1, -1, "_x");
  NodeEntry k = shifted(im, n, wk, wk + 2, rank, 0, w[0], "_w");
  return convolutionOf(im, n, x, k, w, bias, suffix);
}

std::vector<NodeEntry> convInteger(Importer &im, const onnx::NodeProto &n) {
  // y (int32) = conv(x - x_zero_point, w - w_zero_point).
  im.only(n, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"});
  return {integerConvolution(im, n, 0, 1, convWeightShape(im, n, 1), std::nullopt, "")};
}

std::vector<NodeEntry> qlinearConv(Importer &im, const onnx::NodeProto &n) {
  // Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
  // (int32, at scale x_scale * w_scale). The accumulator is ConvInteger's plus B; the output
  // requantizes it by x_scale * w_scale / y_scale (w_scale per output channel or per tensor).
  im.only(n, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"});
  const Shape &w = convWeightShape(im, n, 3);
  auto rank = static_cast<int64_t>(w.size());
  std::optional<NodeEntry> bias;
  if (im.hasInput(n, 8)) {
    if (int bt = im.knownDType(n, 8); bt != -1 && bt != kInt32)
      fail(im.where(n), ": input 8 (the bias) must be of type int32, got ", dtypeName(bt));
    bias = im.input(n, 8);
  }
  NodeEntry acc = integerConvolution(im, n, 0, 3, w, bias, "_accumulated");
  NodeEntry xs = scaleAlong(im, n, 1, rank, 1, -1, "_x_scale");
  NodeEntry ws = scaleAlong(im, n, 4, rank, 1, w[0], "_w_scale");
  NodeEntry ys = scaleAlong(im, n, 6, rank, 1, -1, "_y_scale");
  NodeEntry m = im.op(n, "broadcast_div", {},
                      {im.op(n, "broadcast_mul", {}, {xs, ws}, "_input_scale"), ys}, "_multiplier");
  return {requantized(im, n, acc, m, 7)};
}

// MatMulInteger's and QLinearMatMul's int32 product of the shifted operands: a's zero point
// per tensor or per row, b's per tensor or per column.
NodeEntry integerProduct(Importer &im, const onnx::NodeProto &n, int a, int az, int b, int bz,
                         const std::string &suffix) {
  std::optional<Shape> sa = im.inferredShape(im.input(n, a)), sb = im.inferredShape(im.input(n, b));
  if (!sa || !sb)
    fail(im.where(n), ": the shapes of both operands must be known");
  auto ra = static_cast<int64_t>(sa->size()), rb = static_cast<int64_t>(sb->size());
  NodeEntry x = shifted(im, n, a, az, ra, ra - 2, ra >= 2 ? (*sa)[ra - 2] : -1, "_a");
  NodeEntry y = shifted(im, n, b, bz, rb, rb - 1, (*sb)[rb - 1], "_b");
  return matMulOf(im, n, x, y, suffix);
}

std::vector<NodeEntry> matMulInteger(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  return {integerProduct(im, n, 0, 2, 1, 3, "")};
}

std::vector<NodeEntry> qlinearMatMul(Importer &im, const onnx::NodeProto &n) {
  // Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point; scales
  // and zero points per tensor, or a's per row and b's per column.
  im.only(n, {});
  NodeEntry acc = integerProduct(im, n, 0, 2, 3, 5, "_accumulated");
  std::optional<Shape> sa = im.inferredShape(im.input(n, 0)), sb = im.inferredShape(im.input(n, 3));
  auto ra = static_cast<int64_t>(sa->size()), rb = static_cast<int64_t>(sb->size());
  NodeEntry as = scaleAlong(im, n, 1, ra, ra - 2, ra >= 2 ? (*sa)[ra - 2] : -1, "_a_scale");
  NodeEntry bs = scaleAlong(im, n, 4, rb, rb - 1, (*sb)[rb - 1], "_b_scale");
  NodeEntry ys = scaleAlong(im, n, 6, 1, 0, -1, "_y_scale");
  NodeEntry m = im.op(n, "broadcast_div", {},
                      {im.op(n, "broadcast_mul", {}, {as, bs}, "_input_scale"), ys}, "_multiplier");
  return {requantized(im, n, acc, m, 7)};
}

} // namespace

ConverterList quantizationConverters() {
  return {
      {"QuantizeLinear", quantizeLinear},     {"DynamicQuantizeLinear", dynamicQuantizeLinear},
      {"DequantizeLinear", dequantizeLinear}, {"ConvInteger", convInteger},
      {"MatMulInteger", matMulInteger},       {"QLinearConv", qlinearConv},
      {"QLinearMatMul", qlinearMatMul},
  };
}

} // namespace loupe::frontend
