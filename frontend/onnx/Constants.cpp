// Constants: the ONNX converters of operators whose result import computes as a constant
// (Constant, ConstantOfShape, EyeLike, Range, the signal windows).
#include "frontend/onnx/Converters.h"
#include "frontend/onnx/Tensors.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Memory.h"
#include "core/Shape.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

namespace loupe::frontend {

namespace {

// Constants an operator makes at import from a shape (ConstantOfShape, EyeLike) are held by the
// importer: more than 2^24 elements (128 MB as the reference's doubles) from a few bytes of
// model is refused (found by fuzzing: a 6 KB file made an 8 GB ConstantOfShape).
void requireConstantSize(Importer &im, const onnx::NodeProto &n, const Shape &shape) {
  if (checkedNumElements(shape) > (int64_t{1} << 24))
    fail(im.where(n), ": shape ", shapeToList(shape),
         " makes a constant of more than 2^24 elements, which import does not make");
}

// EyeLike: a constant of the input's shape (2-D), ones on the k-th diagonal.
std::vector<NodeEntry> eyeLike(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"dtype", "k"});
  std::optional<Shape> s = im.inferredShape(im.input(n, 0));
  if (!s || s->size() != 2)
    fail(im.where(n), ": the input's shape must be known and 2-D");
  int dt = im.attr(n, "dtype")
               ? dtypeOf(static_cast<int32_t>(im.attrInt(n, "dtype", 1)), im.where(n) + ": dtype")
               : std::max(im.knownDType(n, 0), 0);
  int64_t k = im.attrInt(n, "k", 0);
  requireConstantSize(im, n, *s);
  Tensor t(*s, dt);
  for (int64_t r = 0; r < (*s)[0]; ++r)
    if (r + k >= 0 && r + k < (*s)[1])
      t.data[r * (*s)[1] + r + k] = 1;
  return im.constantOutput(n, std::move(t));
}

// Range of constant bounds: a constant of start + i * delta for i < ceil((limit - start) /
// delta), in start's dtype.
std::vector<NodeEntry> range(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  double start = scalarInput(im, n, 0, "start"), limit = scalarInput(im, n, 1, "limit"),
         delta = scalarInput(im, n, 2, "delta");
  if (delta == 0)
    fail(im.where(n), ": delta must not be 0");
  double count = std::ceil((limit - start) / delta);
  if (!(count >= 1) || count > (1 << 24))
    fail(im.where(n), ": the range [", floatText(start), ", ", floatText(limit), ") step ",
         floatText(delta), " must hold 1 … 2^24 elements (empty tensors have no shape here)");
  Tensor t({static_cast<int64_t>(count)}, im.constant(n, 0)->dtype);
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = roundToDType(start + static_cast<double>(i) * delta, t.dtype);
  return im.constantOutput(n, std::move(t));
}

// HannWindow, HammingWindow and BlackmanWindow of a constant size: a constant of the
// generalised cosine window a0 - a1 cos(2πn/N) + a2 cos(4πn/N), N the size (periodic) or the
// size - 1 (symmetric).
Converter window(double a0, double a1, double a2) {
  return [=](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"periodic", "output_datatype"});
    int64_t size = integral(im, n, scalarInput(im, n, 0, "size"), "size", 1, 1 << 24);
    int dt = dtypeOf(static_cast<int32_t>(im.attrInt(n, "output_datatype", 1)),
                     im.where(n) + ": output_datatype");
    double period = static_cast<double>(im.attrInt(n, "periodic", 1) ? size : size - 1);
    Tensor t({size}, dt);
    for (int64_t i = 0; i < size; ++i) {
      double x = 2 * M_PI * static_cast<double>(i) / period;
      t.data[i] = roundToDType(a0 - a1 * std::cos(x) + a2 * std::cos(2 * x), dt);
    }
    return im.constantOutput(n, std::move(t));
  };
}

std::vector<NodeEntry> constantOfShape(Importer &im, const onnx::NodeProto &n) {
  // A constant: the shape must be known now, and the result becomes a param.
  im.only(n, {"value"});
  Tensor value(Shape{1}, kFloat32);
  if (const auto *a = im.attr(n, "value"))
    value = toTensor(a->t(), im.where(n) + ": value");
  if (value.data.size() != 1)
    fail(im.where(n), ": value must hold one element");
  // A shape computed from the size symbols (a mask of (batch*heads, 1, seq)): a fill of that
  // symbolic shape, made when the graph runs.
  if (const Importer::SymValue *v = im.symbolicInput(n, 0)) {
    std::string dims;
    for (const SymExpr &e : v->elems)
      dims += (dims.empty() ? "" : ", ") + e.str();
    return std::vector<NodeEntry>{
        im.op(n, "full",
              {{"shape", "(" + dims + (v->elems.size() == 1 ? ",)" : ")")},
               {"fill_value", floatText(value.data[0])},
               {"dtype", std::string(dtypeName(value.dtype))}},
              {})};
  }
  Shape shape;
  for (int64_t d : im.constInts(n, 0, "shape"))
    shape.push_back(d);
  for (int64_t d : shape)
    if (d <= 0)
      fail(im.where(n), ": shape ", shapeToList(shape),
           " must have positive dimensions (0 means unknown here)");
  requireConstantSize(im, n, shape);
  Tensor t(shape, value.dtype);
  std::fill(t.data.begin(), t.data.end(), value.data[0]);
  return im.constantOutput(n, std::move(t));
}

std::vector<NodeEntry> constant(Importer &im, const onnx::NodeProto &n) {
  // A tensor, or (opset 12) a float or int64 scalar or list.
  im.only(n, {"value", "value_float", "value_floats", "value_int", "value_ints"});
  if (n.attribute_size() != 1)
    fail(im.where(n), ": needs exactly one of value, value_float, value_floats, "
                      "value_int, value_ints");
  const onnx::AttributeProto &a = n.attribute(0);
  if (a.name() == "value") {
    im.addParam(n.output(0), toTensor(a.t(), im.where(n)));
    return std::vector<NodeEntry>{}; // the output is now a param
  }
  bool isFloat = a.name().rfind("value_float", 0) == 0;
  bool list = a.name().back() == 's';
  std::vector<double> v;
  if (!list)
    v = {isFloat ? static_cast<double>(a.f()) : static_cast<double>(a.i())};
  else if (isFloat)
    v.assign(a.floats().begin(), a.floats().end());
  else
    v.assign(a.ints().begin(), a.ints().end());
  if (list && v.empty())
    fail(im.where(n), ": ", a.name(), " is empty");
  Tensor t(list ? Shape{static_cast<int64_t>(v.size())} : Shape{}, isFloat ? kFloat32 : kInt64);
  t.data = std::move(v);
  if (isFloat)
    for (double &x : t.data)
      x = roundToDType(x, kFloat32);
  im.addParam(n.output(0), std::move(t));
  return std::vector<NodeEntry>{};
}

} // namespace

ConverterList constantsConverters() {
  return {
      {"ConstantOfShape", constantOfShape},
      {"EyeLike", eyeLike},
      {"Range", range},
      {"HannWindow", window(0.5, 0.5, 0)},
      {"HammingWindow", window(25.0 / 46.0, 21.0 / 46.0, 0)},
      {"BlackmanWindow", window(0.42, 0.5, 0.08)},
      {"Constant", constant},
  };
}

} // namespace loupe::frontend
