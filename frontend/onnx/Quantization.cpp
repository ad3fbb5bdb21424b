// Quantization: the ONNX converters of linear quantization (QuantizeLinear, DequantizeLinear,
// DynamicQuantizeLinear) as compositions of rounding, scaling and casts.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"

#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// QuantizeLinear's and DequantizeLinear's scale or zero point (input k) against x (input 0): a
// scalar (per tensor) read as a one-element tensor; a 1-D one (opset 13, per axis) along `axis`.
NodeEntry quantizationOperand(Importer &im, const onnx::NodeProto &n, int k,
                              const std::string &suffix) {
  if (im.isScalar(n, k))
    return im.broadcastInput(n, k);
  Shape s = shapeNow(im, n, k, 1);
  if (s.size() != 1)
    fail(im.where(n), ": input ", k, " must be a scalar or 1-D, got ", shapeToList(s));
  if (s[0] == 1) // one element (a scalar computed in the graph): it broadcasts as it is
    return im.input(n, k);
  auto rank = static_cast<int64_t>(shapeNow(im, n, 0, 1).size());
  int64_t axis = axisOf(im, n, im.attrInt(n, "axis", 1), rank);
  return alongAxis(im, n, im.input(n, k), rank, axis, suffix);
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
Quantized quantizedType(Importer &im, const onnx::NodeProto &n) {
  int dt = im.hasInput(n, 2) ? im.knownDType(n, 2) : kUint8;
  if (dt == -1 && !im.isScalar(n, 2)) // computed in the graph (DynamicQuantizeLinear expanded)
    dt = im.inferredDType(im.input(n, 2));
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
    fail(im.where(n), ": y_zero_point must be of type uint8, int8, uint16 or int16");
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

std::vector<NodeEntry> quantizeLinear(Importer &im, const onnx::NodeProto &n) {
  // y = saturate(round(x / y_scale) + y_zero_point), halves to even, in y_zero_point's
  // type (uint8 without one). Opset 19's saturate is for float8 targets only.
  im.only(n, {"axis", "saturate"});
  Quantized q = quantizedType(im, n);
  NodeEntry x = im.input(n, 0);
  if (int dt = im.knownDType(n, 0); dt != kFloat32 && dt != kFloat64 && dt != -1)
    x = im.op(n, "cast", {{"dtype", "float32"}}, {x}, "_float");
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
  NodeEntry y = im.op(n, "cast", {{"dtype", "float32"}}, {im.input(n, 0)}, "_float");
  if (std::optional<NodeEntry> zero = zeroPointAsFloat(im, n))
    y = im.op(n, "broadcast_sub", {}, {y, *zero}, "_centred");
  return std::vector<NodeEntry>{
      im.op(n, "broadcast_mul", {}, {y, quantizationOperand(im, n, 1, "_scale")})};
}

} // namespace

ConverterList quantizationConverters() {
  return {
      {"QuantizeLinear", quantizeLinear},
      {"DynamicQuantizeLinear", dynamicQuantizeLinear},
      {"DequantizeLinear", dequantizeLinear},
  };
}

} // namespace loupe::frontend
