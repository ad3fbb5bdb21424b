// Indexing: the ONNX converters that read or write a tensor at indices — the Gathers, the
// Scatters, Compress and OneHot.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"

#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// Gather and GatherElements: negative indices count from the end (mode wrap).
Converter indexing(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axis"});
    int64_t axis = im.attrInt(n, "axis", 0);
    AttrDict a = {{"axis", std::to_string(axis)}, {"mode", "wrap"}};
    const Tensor *index = im.constant(n, 1);
    if (!index || !index->shape.empty())
      return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0), im.input(n, 1)})};
    // A scalar index drops the axis. PyTorch's exports read a dimension so (`x.shape[0]`:
    // Gather of a Shape at a scalar): from a known 1-D value the result is a scalar constant.
    const Tensor *data = im.constant(n, 0);
    if (data && data->shape.size() == 1) {
      int64_t len = data->shape[0], i = static_cast<int64_t>(index->data[0]);
      if (i < -len || i >= len)
        fail(im.where(n), ": index ", i, " is out of range for length ", len);
      Tensor value(Shape{}, data->dtype);
      value.data[0] = data->data[i < 0 ? i + len : i];
      im.addParam(n.output(0), std::move(value));
      return std::vector<NodeEntry>{};
    }
    NodeEntry taken = im.op(n, op, a, {im.input(n, 0), im.broadcastInput(n, 1)}, "_taken");
    return std::vector<NodeEntry>{
        im.op(n, "squeeze", {{"axis", "(" + std::to_string(axis) + ",)"}}, {taken})};
  };
}

std::vector<NodeEntry> oneHot(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis"});
  int64_t depth = integral(im, n, scalarInput(im, n, 1, "depth"), "depth", 1, 1 << 24);
  return {
      im.op(n, "one_hot",
            {{"depth", std::to_string(depth)}, {"axis", std::to_string(im.attrInt(n, "axis", -1))}},
            {im.input(n, 0), im.input(n, 2)})};
}

// ScatterElements (and opset 9's Scatter, the same without reduction) and ScatterND.
Converter scatter(bool nd) {
  return [nd](Importer &im, const onnx::NodeProto &n) {
    std::string reduction = im.attrString(n, "reduction", "none");
    if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
        reduction != "min")
      fail(im.where(n), ": reduction '", reduction, "' is not none, add, mul, max or min");
    AttrDict a = {{"reduction", reduction}};
    if (nd) {
      im.only(n, {"reduction"});
    } else {
      im.only(n, {"reduction", "axis"});
      a.push_back({"axis", std::to_string(im.attrInt(n, "axis", 0))});
    }
    return std::vector<NodeEntry>{im.op(n, nd ? "scatter_nd" : "scatter_elements", a,
                                        {im.input(n, 0), im.input(n, 1), im.input(n, 2)})};
  };
}

// Compress: the slices along `axis` (along the flattened input without one) where the condition
// holds — a take at those positions. The output's size depends on the condition, so it must be
// a constant; positions past its end are dropped, as the spec says.
std::vector<NodeEntry> compress(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis"});
  const Tensor *cond = im.constant(n, 1);
  if (!cond)
    fail(im.where(n), ": condition must be a constant (an initializer or Constant): the "
                      "output's shape depends on it");
  if (cond->shape.size() != 1)
    fail(im.where(n), ": condition must be 1-D, got shape ", shapeToList(cond->shape));
  Shape s = shapeNow(im, n, 0, 1);
  NodeEntry x = im.input(n, 0);
  int64_t axis = 0, len;
  if (im.attr(n, "axis")) {
    axis = axisOf(im, n, im.attrInt(n, "axis", 0), static_cast<int64_t>(s.size()));
    len = s[static_cast<size_t>(axis)];
  } else {
    len = checkedNumElements(s);
    x = im.op(n, "reshape", {{"shape", tupleText({len})}}, {x}, "_flat");
  }
  if (cond->shape[0] > len)
    fail(im.where(n), ": condition has ", cond->shape[0], " values for an axis of ", len);
  std::vector<double> at;
  for (int64_t i = 0; i < cond->shape[0]; ++i)
    if (cond->data[static_cast<size_t>(i)] != 0)
      at.push_back(static_cast<double>(i));
  if (at.empty())
    fail(im.where(n), ": the condition selects nothing (an empty output)");
  Tensor positions({static_cast<int64_t>(at.size())}, kInt64);
  positions.data = std::move(at);
  return {im.op(n, "take", {{"axis", std::to_string(axis)}, {"mode", "clip"}},
                {x, im.constantParam(n, "_positions", std::move(positions))})};
}

std::vector<NodeEntry> gatherNd(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"batch_dims"});
  return std::vector<NodeEntry>{
      im.op(n, "gather_nd", {{"batch_dims", std::to_string(im.attrInt(n, "batch_dims", 0))}},
            {im.input(n, 0), im.input(n, 1)})};
}

} // namespace

ConverterList indexingConverters() {
  return {
      {"Gather", indexing("take")}, {"GatherElements", indexing("gather_elements")},
      {"OneHot", oneHot},           {"Compress", compress},
      {"GatherND", gatherNd},       {"ScatterElements", scatter(false)},
      {"Scatter", scatter(false)},  {"ScatterND", scatter(true)},
  };
}

} // namespace loupe::frontend
