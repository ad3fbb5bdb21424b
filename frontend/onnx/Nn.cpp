// Nn: the ONNX converters of the other neural-network operators — Gemm and MatMul, the
// softmaxes and Hardmax, LRN and Dropout.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Memory.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// LRN across channels: x / (bias + alpha / size * Σ x²)^beta, the sum over the `size`
// channels around each (floor((size-1)/2) before, the rest after), as the sum of `size`
// channel-shifted slices of x² padded with zeros.
std::vector<NodeEntry> lrn(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"alpha", "beta", "bias", "size"});
  int64_t size = im.attrInt(n, "size", 0);
  if (size < 1 || size > 64)
    fail(im.where(n), ": size ", size, " must be 1 … 64");
  NodeEntry x = im.input(n, 0);
  std::optional<Shape> s = im.inferredShape(x);
  if (!s || s->size() < 3)
    fail(im.where(n), ": the input's shape must be known, with a channel axis and more");
  int64_t before = (size - 1) / 2, after = size - 1 - before, channels = (*s)[1];
  NodeEntry sq = im.op(n, "elemwise_mul", {}, {x, x}, "_square");
  std::string widths = "((0, 0), (" + std::to_string(before) + ", " + std::to_string(after) + ")";
  for (size_t d = 2; d < s->size(); ++d)
    widths += ", (0, 0)";
  NodeEntry padded = im.op(n, "pad", {{"pad_width", widths + ")"}}, {sq}, "_padded");
  std::optional<NodeEntry> sum;
  for (int64_t k = 0; k < size; ++k) {
    NodeEntry slice = im.op(n, "strided_slice",
                            {{"begin", "(" + std::to_string(k) + ",)"},
                             {"end", "(" + std::to_string(k + channels) + ",)"},
                             {"axes", "(1,)"}},
                            {padded}, "_window" + std::to_string(k));
    sum = sum ? im.op(n, "elemwise_add", {}, {*sum, slice}, "_sum" + std::to_string(k)) : slice;
  }
  double alpha = im.attrFloat(n, "alpha", 1e-4), beta = im.attrFloat(n, "beta", 0.75),
         bias = im.attrFloat(n, "bias", 1);
  NodeEntry scaled =
      im.op(n, "__mul_scalar__", {{"scalar", floatText(alpha / static_cast<double>(size))}}, {*sum},
            "_scaled");
  NodeEntry base = im.op(n, "__add_scalar__", {{"scalar", floatText(bias)}}, {scaled}, "_base");
  NodeEntry denom = im.op(n, "__pow_scalar__", {{"scalar", floatText(beta)}}, {base}, "_denom");
  return {im.op(n, "elemwise_div", {}, {x, denom})};
}

// Hardmax: 1 where an element is the first maximum along the axis, else 0 — argmax compared
// with the axis's positions (a constant). Before opset 13 the input counts as 2-D, flattened
// at the axis.
std::vector<NodeEntry> hardmax(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis"});
  Shape d = shapeNow(im, n, 0, 1);
  auto rank = static_cast<int64_t>(d.size());
  int64_t axis = axisOf(im, n, im.attrInt(n, "axis", im.opset() >= 13 ? -1 : 1), rank);
  NodeEntry x = im.input(n, 0);
  Shape work = d;
  if (im.opset() < 13) {
    checkedNumElements(d); // so that its parts' products cannot overflow
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= d[static_cast<size_t>(i)];
    work = {outer, inner};
    x = im.op(n, "reshape", {{"shape", tupleText(work)}}, {x}, "_2d");
    axis = 1;
  }
  Shape at(work.size(), 1);
  at[static_cast<size_t>(axis)] = work[static_cast<size_t>(axis)];
  Tensor positions(at, kInt64);
  for (size_t i = 0; i < positions.data.size(); ++i)
    positions.data[i] = static_cast<double>(i);
  NodeEntry arg =
      im.op(n, "argmax", {{"axis", std::to_string(axis)}, {"keepdims", "True"}}, {x}, "_argmax");
  NodeEntry hit = im.op(n, "broadcast_equal", {},
                        {arg, im.constantParam(n, "_positions", std::move(positions))}, "_hit");
  NodeEntry y =
      im.op(n, "where", {},
            {hit, im.op(n, "ones_like", {}, {x}, "_one"), im.op(n, "zeros_like", {}, {x}, "_zero")},
            im.opset() < 13 ? "_2d_hardmax" : "");
  if (im.opset() < 13)
    y = im.op(n, "reshape", {{"shape", tupleText(d)}}, {y});
  return {y};
}

Converter softmax(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axis"});
    int64_t axis = im.attrInt(n, "axis", im.opset() >= 13 ? -1 : 1);
    // Before opset 13 the input was flattened to 2-D at `axis`; that equals a softmax over the
    // last axis only when `axis` is the last one, which InferShape confirms below.
    AttrDict a = {{"axis", std::to_string(im.opset() >= 13 ? axis : -1)}};
    NodeEntry e = im.op(n, op, a, {im.input(n, 0)});
    std::string notLast = im.where(n) + ": before opset 13 this softmax runs over the axes from " +
                          std::to_string(axis) + " on, flattened; only the last axis is supported";
    // A huge axis is out of range (axis + 1 overflowed; found by fuzzing); a negative one other
    // than -1 is not the last.
    if (im.opset() < 13 && axis > 1 << 20)
      fail(im.where(n), ": axis ", axis, " is out of range");
    if (im.opset() < 13 && axis < -1)
      fail(notLast);
    if (im.opset() < 13 && axis != -1)
      im.requireRank(e, 0, static_cast<size_t>(axis + 1), notLast);
    return std::vector<NodeEntry>{e};
  };
}

std::vector<NodeEntry> dropout(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"ratio", "seed", "is_test"});
  // Inference: the identity. Opset 12's training_mode input, when given, must be a
  // constant; training drops elements at random, which only a ratio of 0 (a constant) keeps
  // deterministic — the identity again, every element kept.
  if (im.hasInput(n, 2)) {
    const Tensor *training = im.constant(n, 2);
    if (!training || training->data.size() != 1)
      fail(im.where(n), ": training_mode must be a constant scalar");
    if (training->data[0] != 0) {
      const Tensor *ratio = im.hasInput(n, 1) ? im.constant(n, 1) : nullptr;
      double r = !im.hasInput(n, 1) ? 0.5 : ratio && ratio->data.size() == 1 ? ratio->data[0] : -1;
      if (r != 0)
        fail(im.where(n), ": training mode drops elements at random; only a constant ratio of 0 "
                          "is supported");
    }
  }
  std::vector<NodeEntry> outs = {im.op(n, "copy", {}, {im.input(n, 0)})};
  // The mask of what was kept: everything, in inference.
  if (n.output_size() > 1 && !n.output(1).empty())
    outs.push_back(im.op(n, "cast", {{"dtype", "bool"}},
                         {im.op(n, "ones_like", {}, {im.input(n, 0)}, "_ones")}, "_mask"));
  return outs;
}

std::vector<NodeEntry> gemm(Importer &im, const onnx::NodeProto &n) {
  // broadcast (before opset 7): C broadcasts, as it always does since.
  im.only(n, {"alpha", "beta", "transA", "transB", "broadcast"});
  double alpha = im.attrFloat(n, "alpha", 1), beta = im.attrFloat(n, "beta", 1);
  bool hasC = im.hasInput(n, 2);
  // The last node of the chain takes the ONNX node's name.
  bool last = !hasC && alpha == 1;
  NodeEntry y = im.op(n, "matmul",
                      {{"transpose_a", im.attrInt(n, "transA", 0) ? "True" : "False"},
                       {"transpose_b", im.attrInt(n, "transB", 0) ? "True" : "False"}},
                      {im.input(n, 0), im.input(n, 1)}, last ? "" : "_matmul");
  if (alpha != 1)
    y = im.op(n, "__mul_scalar__", {{"scalar", floatText(alpha)}}, {y}, hasC ? "_alpha" : "");
  if (!hasC)
    return std::vector<NodeEntry>{y};
  NodeEntry c = im.broadcastInput(n, 2);
  if (beta != 1)
    c = im.op(n, "__mul_scalar__", {{"scalar", floatText(beta)}}, {c}, "_beta");
  return std::vector<NodeEntry>{im.op(n, "broadcast_add", {}, {y, c})};
}

std::vector<NodeEntry> matMul(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  NodeEntry a = im.input(n, 0), b = im.input(n, 1);
  std::optional<Shape> sa = im.describedShape(a); // its rank
  // A product with a constant matrix (a linear layer's weight, as PyTorch exports it) is
  // dense over the last axis, as Relay's importer makes it, with the matrix transposed
  // here: dense's epilogue (the bias add, an activation) fuses into it.
  if (auto w = im.paramInput(n, 1); w && w->second.shape().size() == 2 && sa && sa->size() >= 2) {
    int64_t k = w->second.shape()[0], units = w->second.shape()[1];
    NodeEntry wt = im.derivedParam(n, "_weight", w->first, [&] {
      Tensor source = w->second.load();
      Tensor t({units, k}, source.dtype);
      // In 32 x 32 tiles: one element at a time, every write of a 3072-wide weight's column
      // missed the cache (a BERT's weights took a fifth of :load).
      constexpr int64_t T = 32;
      for (int64_t i0 = 0; i0 < k; i0 += T)
        for (int64_t j0 = 0; j0 < units; j0 += T)
          for (int64_t i = i0; i < std::min(k, i0 + T); ++i)
            for (int64_t j = j0; j < std::min(units, j0 + T); ++j)
              t.data[j * k + i] = source.data[i * units + j];
      return t;
    });
    return std::vector<NodeEntry>{
        im.op(n, "dense", {{"units", std::to_string(units)}, {"use_bias", "False"}}, {a, wt})};
  }
  return std::vector<NodeEntry>{matMulOf(im, n, a, b, "")};
}

} // namespace

NodeEntry matMulOf(Importer &im, const onnx::NodeProto &n, NodeEntry a, NodeEntry b,
                   const std::string &suffix) {
  std::optional<Shape> sa = im.describedShape(a), sb = im.describedShape(b); // their ranks
  // N-D: batch_matmul, the batch axes broadcast; a 1-D operand gets the unit axis NumPy
  // gives it, removed from the result.
  if (sa && sb && (sa->size() > 2 || sb->size() > 2)) {
    bool va = sa->size() == 1, vb = sb->size() == 1;
    if (va)
      a = im.op(n, "expand_dims", {{"axis", "0"}}, {a}, suffix + "_row");
    if (vb)
      b = im.op(n, "expand_dims", {{"axis", "1"}}, {b}, suffix + "_column");
    if (!va && !vb)
      return im.op(n, "batch_matmul", {}, {a, b}, suffix);
    NodeEntry p = im.op(n, "batch_matmul", {}, {a, b}, suffix + "_product");
    return im.op(n, "squeeze", {{"axis", va ? "(-2,)" : "(-1,)"}}, {p}, suffix);
  }
  NodeEntry e = im.op(n, "matmul", {}, {a, b}, suffix);
  for (uint32_t k : {0u, 1u})
    im.requireRank(e, k, 2, im.where(n) + ": 1-D operands are supported only with N-D ones");
  return e;
}

ConverterList nnConverters() {
  return {
      {"Hardmax", hardmax},
      {"LRN", lrn},
      {"Softmax", softmax("softmax")},
      {"LogSoftmax", softmax("log_softmax")},
      {"Dropout", dropout},
      {"Gemm", gemm},
      {"MatMul", matMul},
  };
}

} // namespace loupe::frontend
