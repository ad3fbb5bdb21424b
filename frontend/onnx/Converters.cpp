// Converters: the converter table built from the families' registrations, and the helpers
// the families share.
#include "frontend/onnx/Converters.h"

#include "core/Error.h"
#include "core/Shape.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

namespace loupe::frontend {

const ConverterTable &converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    for (auto family :
         {elementwiseConverters, convolutionConverters, nnConverters, normalizationConverters,
          shapingConverters, indexingConverters, constantsConverters, reductionConverters,
          quantizationConverters, imageConverters, einsumConverters, lossesConverters,
          recurrentConverters, signalConverters})
      for (auto &[name, convert] : family())
        if (!t.emplace(name, std::move(convert)).second)
          fail("ONNX operator ", name, " has two converters"); // a programming error
    return t;
  }();
  return table;
}

std::string tupleText(const std::vector<int64_t> &v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string floatText(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

Converter unary(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {});
    return std::vector<NodeEntry>{im.op(n, op, {}, {im.input(n, 0)})};
  };
}

Shape shapeNow(Importer &im, const onnx::NodeProto &n, int k, size_t minRank) {
  std::optional<Shape> s = im.inferredShape(im.input(n, k));
  if (!s || s->size() < minRank)
    fail(im.where(n), ": the shape of input ", k, " must be known and of rank ", minRank,
         " or more");
  return *s;
}

double scalarInput(Importer &im, const onnx::NodeProto &n, int k, const char *what) {
  const Tensor *t = im.constant(n, k);
  if (!t)
    im.notConstant(n, k, what);
  if (t->data.size() != 1)
    fail(im.where(n), ": ", what, " must hold one value, got shape ", shapeToList(t->shape));
  if (!std::isfinite(t->data[0]))
    fail(im.where(n), ": ", what, " must be finite");
  return t->data[0];
}

int64_t integral(Importer &im, const onnx::NodeProto &n, double v, const char *what, double lo,
                 double hi) {
  if (!(v >= lo && v <= hi) || v != std::floor(v))
    fail(im.where(n), ": ", what, " ", floatText(v), " must be an integer in ", floatText(lo),
         " … ", floatText(hi));
  return static_cast<int64_t>(v);
}

int64_t axisOf(Importer &im, const onnx::NodeProto &n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(im.where(n), ": axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> distinctAxes(Importer &im, const onnx::NodeProto &n,
                                  const std::vector<int64_t> &axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t at = a < 0 ? a + rank : a;
    if (at < 0 || at >= rank || std::find(out.begin(), out.end(), at) != out.end())
      fail(im.where(n), ": axis ", a, " is out of range for rank ", rank, " or repeated");
    out.push_back(at);
  }
  return out;
}

NodeEntry softplusOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                     const std::string &suffix) {
  NodeEntry e = im.op(n, "exp", {}, {x}, suffix + "_exp");
  e = im.op(n, "__add_scalar__", {{"scalar", "1"}}, {e}, suffix + "_plus1");
  return im.op(n, "log", {}, {e}, suffix);
}

NodeEntry hardSigmoidOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x, double alpha,
                        double beta, const std::string &suffix) {
  NodeEntry e = im.op(n, "__mul_scalar__", {{"scalar", floatText(alpha)}}, {x}, suffix + "_alpha");
  e = im.op(n, "__add_scalar__", {{"scalar", floatText(beta)}}, {e}, suffix + "_beta");
  return im.op(n, "clip", {{"a_min", "0"}, {"a_max", "1"}}, {e}, suffix);
}

NodeEntry alongAxis(Importer &im, const onnx::NodeProto &n, const NodeEntry &v, int64_t rank,
                    int64_t axis, const std::string &suffix) {
  int64_t after = rank - 1 - axis;
  if (after <= 0)
    return v;
  return im.op(n, "expand_dims", {{"axis", "1"}, {"num_newaxis", std::to_string(after)}}, {v},
               suffix);
}

NodeEntry alongChannels(Importer &im, const onnx::NodeProto &n, const NodeEntry &v, size_t rank,
                        const std::string &suffix) {
  return alongAxis(im, n, v, static_cast<int64_t>(rank), 1, suffix);
}

} // namespace loupe::frontend
