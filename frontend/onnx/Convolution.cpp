// Convolution: the ONNX converters of windowed operators — Conv, ConvTranspose, the pools and
// MaxUnpool — over 1-D (lifted to 2-D), 2-D and 3-D data, with ONNX's pads and auto_pad.
#include "frontend/onnx/Converters.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Shape.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace loupe::frontend {

namespace {

// A convolution's or pool's pads as ONNX orders them (the begins of every spatial axis, then
// the ends), for kernel `k`, strides `s` and dilations `d` of one value per spatial axis.
// `auto_pad` SAME_UPPER / SAME_LOWER pads so that each output size is the input's divided by the
// stride, rounded up, the odd cell at the end (UPPER) or the start (LOWER); that needs the
// input's shape.
std::vector<int64_t> windowPads(Importer &im, const onnx::NodeProto &n,
                                const std::vector<int64_t> &k, const std::vector<int64_t> &s,
                                const std::vector<int64_t> &d) {
  size_t rank = k.size();
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  if (autoPad == "VALID")
    return std::vector<int64_t>(2 * rank, 0);
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    std::optional<Shape> x = im.inferredShape(im.input(n, 0));
    if (!x || x->size() != rank + 2)
      fail(im.where(n), ": auto_pad ", autoPad, " needs the input's shape, known and ", rank + 2,
           "-D");
    std::vector<int64_t> p(2 * rank);
    for (size_t a = 0; a < rank; ++a) {
      int64_t in = (*x)[2 + a], out = (in + s[a] - 1) / s[a];
      int64_t total = std::max<int64_t>(0, (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in);
      p[a] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      p[a + rank] = total - p[a];
    }
    return p;
  }
  if (autoPad != "NOTSET")
    fail(im.where(n), ": auto_pad ", autoPad,
         " is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  std::vector<int64_t> p = im.attrInts(n, "pads");
  if (p.empty())
    return std::vector<int64_t>(2 * rank, 0);
  if (p.size() != 2 * rank)
    fail(im.where(n), ": pads ", tupleText(p), " must have ", 2 * rank, " values for a ", rank,
         "-D kernel");
  return p;
}

// windowPads of a 2-D operator, (top, left, bottom, right), from its lifted 2-D kernel, strides
// and dilations; with `oneD`, a 1-D operator's (begin, end) becomes the (0, begin, 0, end) of its
// lift. Symmetric pads go into the op.
std::vector<int64_t> pads2d(Importer &im, const onnx::NodeProto &n, const std::vector<int64_t> &k,
                            const std::vector<int64_t> &s, const std::vector<int64_t> &d,
                            bool oneD = false) {
  if (!oneD)
    return windowPads(im, n, k, s, d);
  std::vector<int64_t> p = windowPads(im, n, {k[1]}, {s[1]}, {d[1]});
  return {0, p[0], 0, p[1]};
}

// A 1-D attribute (strides, dilations) lifted to 2-D: (v) -> (1, v); `dflt` when absent.
std::vector<int64_t> lifted(std::vector<int64_t> v, bool oneD, int64_t dflt) {
  if (v.empty())
    return {dflt, dflt};
  if (oneD && v.size() == 1)
    return {1, v[0]};
  return v;
}

// 1-D convolutions and pools run as 2-D ones on (N, C, 1, L): the input gains an axis of 1
// before H, and the result loses it.
NodeEntry liftTo2d(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                   const std::string &suffix) {
  return im.op(n, "expand_dims", {{"axis", "2"}}, {x}, suffix);
}

// A window attribute (strides, dilations) of a `rank`-D operator: one value per spatial axis,
// 1 each when absent.
std::vector<int64_t> windowAttr(Importer &im, const onnx::NodeProto &n, const char *key,
                                size_t rank) {
  std::vector<int64_t> v = im.attrInts(n, key);
  if (v.empty())
    return std::vector<int64_t>(rank, 1);
  if (v.size() != rank)
    fail(im.where(n), ": ", key, " ", tupleText(v), " must have ", rank, " values");
  return v;
}

// pad's pad_width for (N, C, H, W) data padded on H by (top, bottom) and on W by (left, right).
std::string spatialPadWidth(int64_t top, int64_t bottom, int64_t left, int64_t right) {
  return "((0, 0), (0, 0), (" + std::to_string(top) + ", " + std::to_string(bottom) + "), (" +
         std::to_string(left) + ", " + std::to_string(right) + "))";
}

// The padding attribute of a volume op from ONNX pads: (d, h, w) when symmetric, else all six.
std::string volumePadding(const std::vector<int64_t> &p) {
  bool symmetric = std::equal(p.begin(), p.begin() + 3, p.begin() + 3);
  return tupleText(symmetric ? std::vector<int64_t>(p.begin(), p.begin() + 3) : p);
}

void need2d(Importer &im, const onnx::NodeProto &n, const std::vector<int64_t> &kernel) {
  if (kernel.size() != 2)
    fail(im.where(n), ": only 1-D, 2-D and 3-D kernels are supported, got ", tupleText(kernel));
}

std::vector<NodeEntry> conv(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"});
  const Shape &w = convWeightShape(im, n, 1);
  std::optional<NodeEntry> bias;
  if (im.hasInput(n, 2))
    bias = im.input(n, 2);
  return {convolutionOf(im, n, im.input(n, 0), im.input(n, 1), w, bias, "")};
}

// ONNX's output size of a 2-D pool per axis (ceil_mode: a last window must start inside the
// padded input), its window dilated.
std::vector<int64_t> poolOutput(Importer &im, const onnx::NodeProto &n, const Shape &in,
                                const std::vector<int64_t> &k, const std::vector<int64_t> &s,
                                const std::vector<int64_t> &d, const std::vector<int64_t> &p,
                                bool ceil) {
  std::vector<int64_t> out(2);
  for (size_t a = 0; a < 2; ++a) {
    int64_t span = (k[a] - 1) * d[a] + 1, total = in[2 + a] + p[a] + p[a + 2] - span;
    if (total < 0)
      fail(im.where(n), ": the window is larger than the padded input");
    out[a] = (ceil ? (total + s[a] - 1) / s[a] : total / s[a]) + 1;
    if (ceil && (out[a] - 1) * s[a] >= in[2 + a] + p[a])
      --out[a];
  }
  return out;
}

// A 2-D max pool as the maximum of one strided slice of the padded input per tap of a small
// window (at most 64 cells), and with `indices` also where each maximum was: the flat index of
// its cell in the input (each image's rows one after another, or with `columnMajor` its
// columns), the first of equal maxima in row order — MaxPool's dilations and its Indices
// output, which max_pool2d has not.
std::vector<NodeEntry> tappedMaxPool(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                                     const Shape &in, const std::vector<int64_t> &k,
                                     const std::vector<int64_t> &s, const std::vector<int64_t> &d,
                                     const std::vector<int64_t> &p, bool ceil, bool indices,
                                     bool columnMajor = false) {
  if (k[0] * k[1] > 64)
    fail(im.where(n), ": dilations, or the Indices output, are supported for windows of at most ",
         "64 cells (and for dilated windows on every d-th cell), got ", tupleText(k));
  std::vector<int64_t> out = poolOutput(im, n, in, k, s, d, p, ceil);
  // Padding (and, for ceil_mode, room for the last window) that no maximum takes.
  std::vector<int64_t> after(2);
  for (size_t a = 0; a < 2; ++a)
    after[a] = std::max(p[a + 2], (k[a] - 1) * d[a] + (out[a] - 1) * s[a] + 1 - in[2 + a] - p[a]);
  NodeEntry padded =
      im.op(n, "pad",
            {{"pad_width", spatialPadWidth(p[0], after[0], p[1], after[1])}, {"pad_value", "-inf"}},
            {x}, "_pad");
  std::optional<NodeEntry> m, at;
  for (int64_t i = 0; i < k[0]; ++i)
    for (int64_t j = 0; j < k[1]; ++j) {
      std::string tap = "_tap" + std::to_string(i) + "_" + std::to_string(j);
      NodeEntry t = im.op(n, "strided_slice",
                          {{"begin", tupleText({i * d[0], j * d[1]})},
                           {"end", tupleText({i * d[0] + (out[0] - 1) * s[0] + 1,
                                              j * d[1] + (out[1] - 1) * s[1] + 1})},
                           {"strides", tupleText(s)},
                           {"axes", "(2, 3)"}},
                          {padded}, tap);
      std::optional<NodeEntry> where;
      if (indices) { // the tap's cell for every output, as a flat index into the input
        Tensor cell({in[0], in[1], out[0], out[1]}, kInt64);
        size_t e = 0;
        for (int64_t b = 0; b < in[0] * in[1]; ++b)
          for (int64_t oh = 0; oh < out[0]; ++oh)
            for (int64_t ow = 0; ow < out[1]; ++ow) {
              int64_t h = oh * s[0] + i * d[0] - p[0], w = ow * s[1] + j * d[1] - p[1];
              bool inside = h >= 0 && h < in[2] && w >= 0 && w < in[3];
              int64_t at = columnMajor ? w * in[2] + h : h * in[3] + w;
              cell.data[e++] = inside ? static_cast<double>(b * in[2] * in[3] + at) : 0;
            }
        where = im.constantParam(n, tap + "_cell", std::move(cell));
      }
      if (!m) {
        m = t, at = where;
        continue;
      }
      if (indices) // a strictly larger tap takes over: the first of equal maxima stays
        at = im.op(n, "where", {},
                   {im.op(n, "broadcast_greater", {}, {t, *m}, tap + "_larger"), *where, *at},
                   tap + "_at");
      m = im.op(n, "broadcast_max", {}, {*m, t}, tap + "_max");
    }
  std::vector<NodeEntry> result = {*m};
  if (indices)
    result.push_back(*at);
  return result;
}

// A dilated 2-D max pool (MaxPool's dilations). Where the stride and the padding are multiples
// of the dilation (PyTorch's usual dilated pools), every tap lies on the grid of every d-th
// cell: a plain max_pool2d over x[::d] with the window k, stride s / d and padding p / d —
// checked to give ONNX's output size. Otherwise tappedMaxPool.
NodeEntry dilatedMaxPool(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                         const Shape &in, const std::vector<int64_t> &k,
                         const std::vector<int64_t> &s, const std::vector<int64_t> &d,
                         const std::vector<int64_t> &p, bool ceil) {
  std::vector<int64_t> out = poolOutput(im, n, in, k, s, d, p, ceil);
  bool onGrid = true;
  for (size_t a = 0; a < 2; ++a) {
    int64_t cells = (in[2 + a] + d[a] - 1) / d[a];
    onGrid = onGrid && s[a] % d[a] == 0 && p[a] % d[a] == 0 && p[a + 2] % d[a] == 0 &&
             (cells + (p[a] + p[a + 2]) / d[a] - k[a]) / (s[a] / d[a]) + 1 == out[a];
  }
  if (!onGrid)
    return tappedMaxPool(im, n, x, in, k, s, d, p, ceil, false)[0];
  NodeEntry grid = im.op(n, "strided_slice",
                         {{"begin", "(0, 0)"},
                          {"end", tupleText({in[2], in[3]})},
                          {"strides", tupleText(d)},
                          {"axes", "(2, 3)"}},
                         {x}, "_every_dilation");
  return im.op(n, "max_pool2d",
               {{"pool_size", tupleText(k)},
                {"strides", tupleText({s[0] / d[0], s[1] / d[1]})},
                {"padding", tupleText({p[0] / d[0], p[1] / d[1], p[2] / d[0], p[3] / d[1]})}},
               {grid}, "_on_grid");
}

Converter pool(const char *op, bool isMax) {
  return [op, isMax](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"kernel_shape", "strides", "pads", "ceil_mode", "auto_pad",
                isMax ? "storage_order" : "count_include_pad", "dilations"});
    // Dilations (MaxPool's since opset 10, AveragePool's since 19) of 1 are the plain window;
    // MaxPool's others are made of max_pool2d or slices (dilatedMaxPool).
    bool dilated = false;
    for (int64_t d : im.attrInts(n, "dilations"))
      dilated = dilated || d != 1;
    if (dilated && (!isMax || im.attrInts(n, "kernel_shape").size() > 2))
      fail(im.where(n), ": dilations other than 1 are not supported",
           isMax ? " for 3-D pools" : " for average pools", ", got ",
           tupleText(im.attrInts(n, "dilations")));
    bool withIndices = n.output_size() > 1 && !n.output(1).empty();
    if (withIndices && im.attrInts(n, "kernel_shape").size() != 2)
      fail(im.where(n), ": the Indices output is supported for 2-D pools");
    std::vector<int64_t> k = im.attrInts(n, "kernel_shape");
    std::string ceil = im.attrInt(n, "ceil_mode", 0) ? "True" : "False",
                includePad = im.attrInt(n, "count_include_pad", 0) ? "True" : "False";
    if (k.size() == 3) {
      std::vector<int64_t> s = windowAttr(im, n, "strides", 3);
      AttrDict a = {{"pool_size", tupleText(k)},
                    {"strides", tupleText(s)},
                    {"padding", volumePadding(windowPads(im, n, k, s, {1, 1, 1}))},
                    {"ceil_mode", ceil}};
      if (!isMax)
        a.push_back({"count_include_pad", includePad});
      return std::vector<NodeEntry>{
          im.op(n, isMax ? "max_pool3d" : "avg_pool3d", a, {im.input(n, 0)})};
    }
    bool oneD = k.size() == 1;
    if (oneD)
      k = {1, k[0]};
    need2d(im, n, k);
    std::vector<int64_t> s = lifted(im.attrInts(n, "strides"), oneD, 1);
    if (dilated || withIndices) {
      std::vector<int64_t> d = lifted(im.attrInts(n, "dilations"), oneD, 1);
      Shape in = shapeNow(im, n, 0, oneD ? 3 : 4);
      if (oneD)
        in.insert(in.begin() + 2, 1); // lifted to (N, C, 1, L)
      NodeEntry x = oneD ? liftTo2d(im, n, im.input(n, 0), "_2d") : im.input(n, 0);
      std::vector<int64_t> p = pads2d(im, n, k, s, d, oneD);
      bool ceilMode = im.attrInt(n, "ceil_mode", 0) != 0;
      std::vector<NodeEntry> ys =
          withIndices ? tappedMaxPool(im, n, x, in, k, s, d, p, ceilMode, true,
                                      im.attrInt(n, "storage_order", 0) != 0)
                      : std::vector<NodeEntry>{dilatedMaxPool(im, n, x, in, k, s, d, p, ceilMode)};
      if (oneD)
        for (size_t i = 0; i < ys.size(); ++i)
          ys[i] = im.op(n, "squeeze", {{"axis", "2"}}, {ys[i]}, "_1d" + std::to_string(i));
      return ys;
    }
    std::vector<int64_t> p = pads2d(im, n, k, s, {1, 1}, oneD);
    AttrDict a = {{"pool_size", tupleText(k)},
                  {"strides", tupleText(s)},
                  {"padding", tupleText(p)},
                  {"ceil_mode", ceil}};
    if (!isMax)
      a.push_back({"count_include_pad", includePad});
    if (!oneD)
      return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0)})};
    NodeEntry y = im.op(n, op, a, {liftTo2d(im, n, im.input(n, 0), "_2d")}, "_pool2d");
    return std::vector<NodeEntry>{im.op(n, "squeeze", {{"axis", "2"}}, {y})};
  };
}

// ConvTranspose: conv2d_transpose, whose padding is symmetric; asymmetric pads (given, or from
// output_shape or auto_pad SAME, which fix the output size instead) take the smaller side's
// padding there and a slice crops the rest.
std::vector<NodeEntry> convTranspose(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"kernel_shape", "strides", "pads", "dilations", "group", "output_padding", "auto_pad",
              "output_shape"});
  const Shape *w = im.knownShape(n, 1);
  if (!w || (w->size() != 4 && w->size() != 3))
    fail(im.where(n), ": the weight's shape must be known and 3-D or 4-D (an initializer or a "
                      "graph input)");
  // A 1-D one runs as a 2-D one on (N, C, 1, L), as Conv does.
  bool oneD = w->size() == 3;
  std::vector<int64_t> k = im.attrInts(n, "kernel_shape");
  if (k.empty())
    k = std::vector<int64_t>(w->begin() + 2, w->end());
  if (oneD && k.size() == 1)
    k = {1, k[0]};
  need2d(im, n, k);
  std::vector<int64_t> s = lifted(im.attrInts(n, "strides"), oneD, 1),
                       d = lifted(im.attrInts(n, "dilations"), oneD, 1),
                       op = lifted(im.attrInts(n, "output_padding"), oneD, 0),
                       out = im.attrInts(n, "output_shape");
  if (oneD && out.size() == 1)
    out = {1, out[0]};
  if (s.size() != 2 || d.size() != 2 || op.size() != 2)
    fail(im.where(n), ": strides, dilations and output_padding need 2 values each");
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  std::vector<int64_t> p; // (top, left, bottom, right)
  if (!out.empty() || same) {
    // The output size decides the total padding, split as ONNX's spec splits it: SAME_UPPER
    // puts the odd cell at the end, anything else at the start.
    Shape x = shapeNow(im, n, 0, oneD ? 3 : 4);
    if (oneD)
      x.insert(x.begin() + 2, 1);
    if (out.size() > 2)
      out.erase(out.begin(), out.end() - 2);
    if (out.empty())
      out = {x[2] * s[0], x[3] * s[1]};
    if (out.size() != 2)
      fail(im.where(n), ": output_shape needs the 2 spatial sizes, got ", tupleText(out));
    p.assign(4, 0);
    for (size_t i = 0; i < 2; ++i) {
      int64_t total = s[i] * (x[2 + i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - out[i];
      // Python's floor division, as ONNX's reference splits a negative total (an output larger
      // than the full convolution's) too.
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      p[i] = autoPad == "SAME_UPPER" ? half : total - half;
      p[i + 2] = total - p[i];
      // Cells past the full output's end are what output_padding adds; before its start there
      // are none to add.
      if (p[i] < 0)
        fail(im.where(n), ": output_shape ", tupleText(out),
             " would add cells before the convolution's output");
      if (p[i + 2] < 0) {
        op[i] -= p[i + 2];
        p[i + 2] = 0;
      }
    }
  } else {
    if (autoPad != "NOTSET" && autoPad != "VALID")
      fail(im.where(n), ": auto_pad ", autoPad,
           " is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
    p = pads2d(im, n, k, {1, 1}, {1, 1}, oneD);
  }
  int64_t group = im.attrInt(n, "group", 1);
  bool bias = im.hasInput(n, 2);
  std::vector<NodeEntry> ins = {im.input(n, 0), im.input(n, 1)};
  if (oneD)
    ins = {liftTo2d(im, n, ins[0], "_2d"), liftTo2d(im, n, ins[1], "_weight_2d")};
  if (bias)
    ins.push_back(im.input(n, 2));
  int64_t ph = std::min(p[0], p[2]), pw = std::min(p[1], p[3]);
  bool crop = p[0] != p[2] || p[1] != p[3];
  // ONNX's weight is (C_in, C_out / group, kh, kw), as conv2d_transpose's.
  NodeEntry y = im.op(n, "conv2d_transpose",
                      {{"channels", std::to_string((*w)[1] * group)},
                       {"kernel_size", tupleText(k)},
                       {"strides", tupleText(s)},
                       {"padding", tupleText({ph, pw})},
                       {"output_padding", tupleText(op)},
                       {"dilation", tupleText(d)},
                       {"groups", std::to_string(group)},
                       {"use_bias", bias ? "True" : "False"}},
                      ins,
                      crop   ? "_full"
                      : oneD ? "_2d_out"
                             : "");
  if (crop) {
    std::optional<Shape> full = im.inferredShape(y);
    if (!full)
      fail(im.where(n), ": the output's shape must be known to crop its asymmetric pads");
    y = im.op(n, "strided_slice",
              {{"begin", tupleText({p[0] - ph, p[1] - pw})},
               {"end", tupleText({(*full)[2] - (p[2] - ph), (*full)[3] - (p[3] - pw)})},
               {"axes", "(2, 3)"}},
              {y}, oneD ? "_cropped" : "");
  }
  if (oneD)
    y = im.op(n, "squeeze", {{"axis", "2"}}, {y});
  return {y};
}

// GlobalAveragePool and GlobalMaxPool: the 2-D op on 4-D data (N, C, H, W), as NNVM had it;
// on 3-D and 5-D data (a 1-D signal, a video) the mean or max over every axis after the channels,
// kept as size 1 — the same numbers, at every opt level.
Converter globalPool(const char *op2d, const char *reduce) {
  return [op2d, reduce](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {});
    NodeEntry x = im.input(n, 0);
    std::optional<Shape> s = im.inferredShape(x);
    if (!s || s->size() == 4)
      return std::vector<NodeEntry>{im.op(n, op2d, {}, {x})};
    if (s->size() < 3)
      fail(im.where(n), ": data must be (N, C, D1, …) with at least one spatial axis, got ",
           shapeToTuple(*s));
    std::vector<int64_t> axes;
    for (size_t d = 2; d < s->size(); ++d)
      axes.push_back(static_cast<int64_t>(d));
    return std::vector<NodeEntry>{
        im.op(n, reduce, {{"axis", tupleText(axes)}, {"keepdims", "True"}}, {x})};
  };
}

} // namespace

const Shape &convWeightShape(Importer &im, const onnx::NodeProto &n, int k) {
  const Shape *w = im.knownShape(n, k);
  if (!w)
    fail(im.where(n), ": the weight's shape must be known (an initializer or a graph input)");
  return *w;
}

NodeEntry convolutionOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x0,
                        const NodeEntry &weight, const Shape &wshape,
                        const std::optional<NodeEntry> &bias, const std::string &suffix) {
  const Shape *w = &wshape;
  std::vector<int64_t> k = im.attrInts(n, "kernel_shape");
  if (k.empty() && w->size() == 4)
    k = {(*w)[2], (*w)[3]};
  if (k.empty() && w->size() == 3)
    k = {(*w)[2]};
  if (k.empty() && w->size() == 5)
    k = {(*w)[2], (*w)[3], (*w)[4]};
  if (k.size() == 3) {
    std::vector<int64_t> s = windowAttr(im, n, "strides", 3), d = windowAttr(im, n, "dilations", 3);
    std::vector<NodeEntry> ins = {x0, weight};
    if (bias)
      ins.push_back(*bias);
    return im.op(n, "conv3d",
                 {{"channels", std::to_string((*w)[0])},
                  {"kernel_size", tupleText(k)},
                  {"strides", tupleText(s)},
                  {"padding", volumePadding(windowPads(im, n, k, s, d))},
                  {"dilation", tupleText(d)},
                  {"groups", std::to_string(im.attrInt(n, "group", 1))},
                  {"use_bias", bias ? "True" : "False"}},
                 ins, suffix);
  }
  bool oneD = k.size() == 1 && w->size() == 3;
  if (oneD)
    k = {1, k[0]};
  need2d(im, n, k);
  std::vector<int64_t> s = lifted(im.attrInts(n, "strides"), oneD, 1),
                       d = lifted(im.attrInts(n, "dilations"), oneD, 1),
                       p = pads2d(im, n, k, s, d, oneD);
  NodeEntry x = oneD ? liftTo2d(im, n, x0, suffix + "_2d") : x0;
  if (p[0] != p[2] || p[1] != p[3]) {
    x = im.op(n, "pad", {{"pad_width", spatialPadWidth(p[0], p[2], p[1], p[3])}}, {x},
              suffix + "_pad");
    p = {0, 0, 0, 0};
  }
  std::vector<NodeEntry> ins = {x, oneD ? liftTo2d(im, n, weight, suffix + "_weight_2d") : weight};
  if (bias)
    ins.push_back(*bias);
  NodeEntry y = im.op(n, "conv2d",
                      {{"channels", std::to_string((*w)[0])},
                       {"kernel_size", tupleText(k)},
                       {"strides", tupleText(s)},
                       {"padding", tupleText({p[0], p[1]})},
                       {"dilation", tupleText(d)},
                       {"groups", std::to_string(im.attrInt(n, "group", 1))},
                       {"use_bias", bias ? "True" : "False"}},
                      ins, oneD ? suffix + "_conv2d" : suffix);
  if (oneD)
    y = im.op(n, "squeeze", {{"axis", "2"}}, {y}, suffix);
  return y;
}

// MaxUnpool: MaxPool's inverse — each input value written at the position its index names
// (flat over the whole pool input, as MaxPool's Indices are), zeros elsewhere: a scatter into a
// flat tensor of zeros, reshaped to the pool input's size the window implies, (in - 1)·stride +
// kernel - pads. An `output_shape` (input 2, a constant) larger than that pads it with zeros at
// the end of each axis, as ONNX's reference does (the indices keep their positions).
std::vector<NodeEntry> maxUnpool(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"kernel_shape", "strides", "pads"});
  std::vector<int64_t> k = im.attrInts(n, "kernel_shape");
  if (k.empty())
    fail(im.where(n), ": kernel_shape is required");
  size_t rank = k.size();
  Shape in = shapeNow(im, n, 0, static_cast<int>(rank + 2));
  std::vector<int64_t> s = windowAttr(im, n, "strides", rank);
  std::vector<int64_t> p = im.attrInts(n, "pads");
  if (p.empty())
    p.assign(2 * rank, 0);
  if (p.size() != 2 * rank)
    fail(im.where(n), ": pads ", tupleText(p), " must have ", 2 * rank, " values");
  Shape unpooled = {in[0], in[1]};
  for (size_t a = 0; a < rank; ++a) {
    unpooled.push_back((in[2 + a] - 1) * s[a] + k[a] - p[a] - p[a + rank]);
    if (unpooled.back() <= 0)
      fail(im.where(n), ": the window gives an empty output, shape ", shapeToList(unpooled));
  }
  Shape out = unpooled;
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const Tensor *given = im.constant(n, 2);
    if (!given)
      im.notConstant(n, 2, "output_shape");
    if (given->shape.size() != 1 || static_cast<size_t>(given->shape[0]) != rank + 2)
      fail(im.where(n), ": output_shape must have ", rank + 2, " values, got shape ",
           shapeToList(given->shape));
    out.clear();
    for (size_t a = 0; a < rank + 2; ++a) {
      out.push_back(static_cast<int64_t>(given->data[a]));
      if (out[a] < unpooled[a] || (a < 2 && out[a] != unpooled[a]))
        fail(im.where(n), ": output_shape ", shapeToList(out), " is smaller than the ",
             shapeToList(unpooled), " the window gives or changes N or C");
    }
  }
  int dtype = im.inferredDType(im.input(n, 0));
  NodeEntry zeros = im.op(n, "zeros",
                          {{"shape", tupleText({checkedNumElements(unpooled)})},
                           {"dtype", std::string(dtypeName(dtype < 0 ? kFloat32 : dtype))}},
                          {}, "_zeros");
  NodeEntry values = im.op(n, "reshape", {{"shape", "(-1,)"}}, {im.input(n, 0)}, "_values");
  NodeEntry at = im.op(n, "reshape", {{"shape", "(-1,)"}}, {im.input(n, 1)}, "_at");
  NodeEntry flat = im.op(n, "scatter_elements", {{"reduction", "none"}, {"axis", "0"}},
                         {zeros, at, values}, "_flat");
  if (out == unpooled)
    return {im.op(n, "reshape", {{"shape", shapeToTuple(out)}}, {flat})};
  NodeEntry y = im.op(n, "reshape", {{"shape", shapeToTuple(unpooled)}}, {flat}, "_unpooled");
  std::string width = "(";
  for (size_t a = 0; a < out.size(); ++a)
    width += (a ? ", (0, " : "(0, ") + std::to_string(out[a] - unpooled[a]) + ")";
  width += out.size() == 1 ? ",)" : ")";
  return {im.op(n, "pad", {{"pad_width", width}}, {y})};
}

ConverterList convolutionConverters() {
  return {
      {"Conv", conv},
      {"MaxPool", pool("max_pool2d", true)},
      {"AveragePool", pool("avg_pool2d", false)},
      {"GlobalAveragePool", globalPool("global_avg_pool2d", "mean")},
      {"GlobalMaxPool", globalPool("global_max_pool2d", "max")},
      {"ConvTranspose", convTranspose},
      {"MaxUnpool", maxUnpool},
  };
}

} // namespace loupe::frontend
