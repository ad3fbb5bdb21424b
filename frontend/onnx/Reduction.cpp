// Reduction: the ONNX converters of reductions along axes — the Reduce family, ArgMax and
// ArgMin, CumSum and TopK.
#include "frontend/onnx/Converters.h"

#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

std::vector<NodeEntry> cumSum(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"exclusive", "reverse"});
  int64_t axis = integral(im, n, scalarInput(im, n, 1, "axis"), "axis", -64, 64);
  return {im.op(n, "cumsum",
                {{"axis", std::to_string(axis)},
                 {"exclusive", im.attrInt(n, "exclusive", 0) ? "True" : "False"},
                 {"reverse", im.attrInt(n, "reverse", 0) ? "True" : "False"}},
                {im.input(n, 0)})};
}

std::vector<NodeEntry> topK(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis", "largest", "sorted", "k"});
  // The output is sorted either way (sorted=0 leaves the order to the implementation).
  int64_t k = im.opset() < 10 ? im.attrInt(n, "k", 0)
                              : integral(im, n, scalarInput(im, n, 1, "K"), "K", 1, 1 << 30);
  return im.opOutputs(n, "topk",
                      {{"k", std::to_string(k)},
                       {"axis", std::to_string(im.attrInt(n, "axis", -1))},
                       {"largest", im.attrInt(n, "largest", 1) ? "True" : "False"}},
                      {im.input(n, 0)});
}

// ArgMax/ArgMin: one axis, keepdims (default 1) and select_last_index.
Converter argReduce(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axis", "keepdims", "select_last_index"});
    AttrDict a = {{"axis", std::to_string(im.attrInt(n, "axis", 0))},
                  {"keepdims", im.attrInt(n, "keepdims", 1) ? "True" : "False"},
                  {"select_last_index", im.attrInt(n, "select_last_index", 0) ? "True" : "False"}};
    return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0)})};
  };
}

Converter reduce(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axes", "keepdims", "noop_with_empty_axes"});
    std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
    if (axes.empty() && im.attrInt(n, "noop_with_empty_axes", 0))
      return std::vector<NodeEntry>{im.op(n, "copy", {}, {im.input(n, 0)})};
    return std::vector<NodeEntry>{im.op(
        n, op,
        {{"axis", tupleText(axes)}, {"keepdims", im.attrInt(n, "keepdims", 1) ? "True" : "False"}},
        {im.input(n, 0)})};
  };
}

// ReduceSumSquare, ReduceL2, ReduceLogSum, ReduceLogSumExp: an elementwise step before the
// sum ("square" or "exp") and one after it ("sqrt" or "log"), each named after the ONNX node.
Converter composedSum(const char *before, const char *after) {
  std::string pre = before ? before : "", post = after ? after : "";
  return [pre, post](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axes", "keepdims", "noop_with_empty_axes"});
    std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
    NodeEntry x = im.input(n, 0);
    // Opset 18: with no axes and noop_with_empty_axes the input passes through untouched
    // (not even squared: ONNX's reference returns the data as it is).
    if (axes.empty() && im.attrInt(n, "noop_with_empty_axes", 0))
      return std::vector<NodeEntry>{im.op(n, "copy", {}, {x})};
    if (pre == "square")
      x = im.op(n, "elemwise_mul", {}, {x, x}, "_square");
    else if (!pre.empty())
      x = im.op(n, pre, {}, {x}, "_" + pre);
    NodeEntry y = im.op(
        n, "sum",
        {{"axis", tupleText(axes)}, {"keepdims", im.attrInt(n, "keepdims", 1) ? "True" : "False"}},
        {x}, post.empty() ? "" : "_sum");
    if (!post.empty())
      y = im.op(n, post, {}, {y});
    return std::vector<NodeEntry>{y};
  };
}

} // namespace

ConverterList reductionConverters() {
  return {
      {"ReduceSum", reduce("sum")},
      {"ReduceMean", reduce("mean")},
      {"ReduceMax", reduce("max")},
      {"ReduceMin", reduce("min")},
      {"ReduceProd", reduce("prod")},
      {"ReduceSumSquare", composedSum("square", nullptr)},
      {"ReduceL2", composedSum("square", "sqrt")},
      {"ReduceLogSum", composedSum(nullptr, "log")},
      {"ReduceLogSumExp", composedSum("exp", "log")},
      {"ReduceL1", composedSum("abs", nullptr)},
      {"CumSum", cumSum},
      {"TopK", topK},
      {"ArgMax", argReduce("argmax")},
      {"ArgMin", argReduce("argmin")},
  };
}

} // namespace loupe::frontend
