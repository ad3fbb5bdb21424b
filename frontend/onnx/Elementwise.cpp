// Elementwise: the ONNX converters of elementwise operators — unary math and activations, the
// broadcasting arithmetic, comparison and logic ops, and the variadic Sum, Max, Min, Mean.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"

#include <algorithm>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// Before opset 7 the arithmetic ops broadcast only when `broadcast` is 1, the second operand's
// axes matching the first's from `axis` on (by default its trailing ones, as NumPy's suffix
// rule): it gets unit axes after its own up to the first's rank. Without the flag the shapes
// must be equal, which the broadcasting op checks.
NodeEntry legacyBroadcastOperand(Importer &im, const onnx::NodeProto &n) {
  NodeEntry b = im.broadcastInput(n, 1);
  const Tensor *scalar = im.constant(n, 1);
  if (im.opset() >= 7 || !im.attrInt(n, "broadcast", 0) || !im.attr(n, "axis") ||
      (scalar && scalar->shape.empty()))
    return b;
  Shape a = shapeNow(im, n, 0, 1), bs = shapeNow(im, n, 1, 1);
  auto rank = static_cast<int64_t>(a.size());
  int64_t axis = im.attrInt(n, "axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  int64_t trailing = rank - axis - static_cast<int64_t>(bs.size());
  bool fits = axis >= 0 && trailing >= 0;
  for (size_t i = 0; fits && i < bs.size(); ++i)
    fits = bs[i] == 1 || bs[i] == a[static_cast<size_t>(axis) + i];
  if (!fits)
    fail(im.where(n), ": operand B ", shapeToTuple(bs), " does not fit into A ", shapeToTuple(a),
         " from axis ", im.attrInt(n, "axis", 0));
  if (trailing == 0)
    return b;
  return im.op(n, "expand_dims",
               {{"axis", std::to_string(bs.size())}, {"num_newaxis", std::to_string(trailing)}},
               {b}, "_aligned");
}

Converter binary(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    if (im.opset() < 7)
      im.only(n, {"broadcast", "axis"});
    else
      im.only(n, {});
    return std::vector<NodeEntry>{
        im.op(n, op, {}, {im.broadcastInput(n, 0), legacyBroadcastOperand(im, n)})};
  };
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
std::vector<NodeEntry> shrink(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"lambd", "bias"});
  double lambd = im.attrFloat(n, "lambd", 0.5), bias = im.attrFloat(n, "bias", 0);
  NodeEntry x = im.input(n, 0);
  auto c = [&](const std::string &suffix, double v) {
    Tensor t(Shape{1}, std::max(im.knownDType(n, 0), 0));
    t.data[0] = roundToDType(v, t.dtype);
    return im.constantParam(n, suffix, std::move(t));
  };
  NodeEntry below = im.op(n, "broadcast_less", {}, {x, c("_neg_lambd", -lambd)}, "_below");
  NodeEntry above = im.op(n, "broadcast_greater", {}, {x, c("_lambd", lambd)}, "_above");
  NodeEntry b = c("_bias", bias);
  NodeEntry up = im.op(n, "broadcast_add", {}, {x, b}, "_up");
  NodeEntry down = im.op(n, "broadcast_sub", {}, {x, b}, "_down");
  NodeEntry zero = im.op(n, "zeros_like", {}, {x}, "_zero");
  NodeEntry inner = im.op(n, "where", {}, {above, down, zero}, "_inner");
  return {im.op(n, "where", {}, {below, up, inner})};
}

// A unary op with float attributes: each (ONNX name, op name, ONNX default).
struct FloatAttr {
  const char *onnx, *op;
  double dflt;
};
Converter unaryWith(const char *op, std::vector<FloatAttr> attrs) {
  return [op, attrs](Importer &im, const onnx::NodeProto &n) {
    std::vector<const char *> known;
    AttrDict a;
    for (const FloatAttr &f : attrs) {
      known.push_back(f.onnx);
      a.push_back({f.op, floatText(im.attrFloat(n, f.onnx, f.dflt))});
    }
    im.only(n, known);
    return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0)})};
  };
}

// Max, Min, Sum, Mean: the inputs folded left to right with a broadcasting binary op (the last
// node takes the ONNX node's name); one input is a copy. Mean divides the sum by the count.
Converter variadic(const char *op, bool mean = false) {
  return [op, mean](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {});
    int count = n.input_size();
    NodeEntry acc = im.input(n, 0);
    for (int k = 1; k < count; ++k)
      acc = im.op(n, op, {}, {acc, im.broadcastInput(n, k)},
                  k + 1 < count || mean ? "_" + std::string(op) + std::to_string(k) : "");
    if (count == 1 && !mean)
      acc = im.op(n, "copy", {}, {acc});
    if (mean)
      acc = im.op(n, "__div_scalar__", {{"scalar", std::to_string(count)}}, {acc});
    return std::vector<NodeEntry>{acc};
  };
}

std::vector<NodeEntry> mod(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"fmod"});
  // fmod=0: the sign of the divisor (Python's %), integers only; fmod=1: C's fmod.
  const char *op = im.attrInt(n, "fmod", 0) ? "broadcast_mod" : "broadcast_floor_mod";
  return std::vector<NodeEntry>{im.op(n, op, {}, {im.input(n, 0), im.input(n, 1)})};
}

std::vector<NodeEntry> where(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  return std::vector<NodeEntry>{im.op(
      n, "where", {}, {im.broadcastInput(n, 0), im.broadcastInput(n, 1), im.broadcastInput(n, 2)})};
}

std::vector<NodeEntry> isInf(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"detect_positive", "detect_negative"});
  AttrDict a = {{"detect_positive", im.attrInt(n, "detect_positive", 1) ? "True" : "False"},
                {"detect_negative", im.attrInt(n, "detect_negative", 1) ? "True" : "False"}};
  return std::vector<NodeEntry>{im.op(n, "isinf", a, {im.input(n, 0)})};
}

std::vector<NodeEntry> gelu(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"approximate"});
  return std::vector<NodeEntry>{im.op(
      n, "gelu", {{"approximate", im.attrString(n, "approximate", "none")}}, {im.input(n, 0)})};
}

std::vector<NodeEntry> prelu(Importer &im, const onnx::NodeProto &n) {
  // x where x >= 0, slope * x elsewhere, the slope broadcast to x (ONNX's PRelu is
  // broadcast from the slope's side only; NNVM's prelu takes one channel axis): relu(x)
  // + slope * (x - relu(x)), which fuses into one kernel.
  im.only(n, {});
  NodeEntry x = im.input(n, 0), slope = im.input(n, 1);
  // Before opset 7 a slope of C values is per channel (axis 1), not broadcast from
  // the right: it gets unit axes for the ones after the channels.
  if (im.opset() < 7) {
    Shape xs = shapeNow(im, n, 0, 1), ss = shapeNow(im, n, 1, 1);
    if (ss.size() == 1 && ss[0] != 1)
      slope = alongChannels(im, n, slope, xs.size(), "_per_channel");
  }
  NodeEntry pos = im.op(n, "relu", {}, {x}, "_pos");
  NodeEntry neg = im.op(n, "elemwise_sub", {}, {x, pos}, "_neg");
  NodeEntry scaled = im.op(n, "broadcast_mul", {}, {neg, slope}, "_scaled");
  NodeEntry y = im.op(n, "broadcast_add", {}, {pos, scaled});
  return std::vector<NodeEntry>{y};
}

std::vector<NodeEntry> reciprocal(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  return std::vector<NodeEntry>{im.op(n, "__rdiv_scalar__", {{"scalar", "1"}}, {im.input(n, 0)})};
}

std::vector<NodeEntry> softplus(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  return std::vector<NodeEntry>{softplusOf(im, n, im.input(n, 0), "")};
}

std::vector<NodeEntry> hardSigmoid(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"alpha", "beta"});
  return std::vector<NodeEntry>{hardSigmoidOf(im, n, im.input(n, 0), im.attrFloat(n, "alpha", 0.2),
                                              im.attrFloat(n, "beta", 0.5), "")};
}

std::vector<NodeEntry> leakyRelu(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"alpha"});
  return std::vector<NodeEntry>{im.op(
      n, "leaky_relu", {{"alpha", floatText(im.attrFloat(n, "alpha", 0.01))}}, {im.input(n, 0)})};
}

std::vector<NodeEntry> clip(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"min", "max"});
  double lo = im.attrFloat(n, "min", -3.4028234663852886e38),
         hi = im.attrFloat(n, "max", 3.4028234663852886e38);
  if (const Tensor *t = im.constant(n, 1))
    lo = t->data.at(0);
  else if (im.hasInput(n, 1))
    fail(im.where(n), ": min must be a constant");
  if (const Tensor *t = im.constant(n, 2))
    hi = t->data.at(0);
  else if (im.hasInput(n, 2))
    fail(im.where(n), ": max must be a constant");
  return std::vector<NodeEntry>{
      im.op(n, "clip", {{"a_min", floatText(lo)}, {"a_max", floatText(hi)}}, {im.input(n, 0)})};
}

// BitShift: left_shift or right_shift by its direction, on unsigned integers.
std::vector<NodeEntry> bitShift(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"direction"});
  std::string direction = im.attrString(n, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    fail(im.where(n), ": direction must be LEFT or RIGHT, got '", direction, "'");
  return std::vector<NodeEntry>{im.op(n, direction == "LEFT" ? "left_shift" : "right_shift", {},
                                      {im.broadcastInput(n, 0), im.broadcastInput(n, 1)})};
}

} // namespace

ConverterList elementwiseConverters() {
  return {
      {"Relu", unary("relu")},
      {"Sigmoid", unary("sigmoid")},
      {"Tanh", unary("tanh")},
      {"Exp", unary("exp")},
      {"Log", unary("log")},
      {"Sqrt", unary("sqrt")},
      {"Neg", unary("negative")},
      {"Add", binary("broadcast_add")},
      {"Sub", binary("broadcast_sub")},
      {"Mul", binary("broadcast_mul")},
      {"Div", binary("broadcast_div")},
      {"Pow", binary("broadcast_pow")},
      {"Mod", mod},
      {"BitShift", bitShift},
      {"Equal", binary("broadcast_equal")},
      {"Greater", binary("broadcast_greater")},
      {"Less", binary("broadcast_less")},
      {"GreaterOrEqual", binary("broadcast_greater_equal")},
      {"LessOrEqual", binary("broadcast_less_equal")},
      {"And", binary("logical_and")},
      {"Or", binary("logical_or")},
      {"Xor", binary("logical_xor")},
      {"Not", unary("logical_not")},
      {"Where", where},
      {"Abs", unary("abs")},
      {"Sign", unary("sign")},
      {"Floor", unary("floor")},
      {"Ceil", unary("ceil")},
      {"Round", unary("round")},
      {"Erf", unary("erf")},
      {"Sin", unary("sin")},
      {"Cos", unary("cos")},
      {"Tan", unary("tan")},
      {"Asin", unary("asin")},
      {"Acos", unary("acos")},
      {"Atan", unary("atan")},
      {"Sinh", unary("sinh")},
      {"Cosh", unary("cosh")},
      {"Asinh", unary("asinh")},
      {"Acosh", unary("acosh")},
      {"Atanh", unary("atanh")},
      {"Softsign", unary("softsign")},
      {"HardSwish", unary("hard_swish")},
      {"Mish", unary("mish")},
      {"IsNaN", unary("isnan")},
      {"Elu", unaryWith("elu", {{"alpha", "alpha", 1.0}})},
      {"Celu", unaryWith("celu", {{"alpha", "alpha", 1.0}})},
      {"ThresholdedRelu", unaryWith("thresholded_relu", {{"alpha", "alpha", 1.0}})},
      {"Selu", unaryWith("selu", {{"alpha", "alpha", 1.67326319217681884765625},
                                  {"gamma", "gamma", 1.05070102214813232421875}})},
      {"IsInf", isInf},
      {"Gelu", gelu},
      {"PRelu", prelu},
      {"Shrink", shrink},
      {"Reciprocal", reciprocal},
      {"Softplus", softplus},
      {"HardSigmoid", hardSigmoid},
      {"Sum", variadic("broadcast_add")},
      {"Max", variadic("broadcast_max")},
      {"Min", variadic("broadcast_min")},
      {"Mean", variadic("broadcast_add", true)},
      {"LeakyRelu", leakyRelu},
      {"Clip", clip},
  };
}

} // namespace loupe::frontend
