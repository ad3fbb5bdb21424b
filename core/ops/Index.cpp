// Indexing ops: take picks slices along an axis by an index tensor (ONNX's Gather);
// gather_elements picks one element per index (ONNX's GatherElements, Relay's gather);
// strided_slice takes every step-th element of a range per axis (ONNX's Slice).
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <cmath>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

// An index into an axis of `n` by the mode: "wrap" counts negatives from the end (once, as
// ONNX's -n … n-1, and further by wrapping around); "clip" clamps into [0, n).
int64_t indexOf(double v, int64_t n, bool wrap) {
  auto i = static_cast<int64_t>(v);
  if (wrap)
    return ((i % n) + n) % n;
  return std::clamp(i, int64_t{0}, n - 1);
}

Expr indexExpr(const Expr &v, int64_t n, bool wrap) {
  Expr i = cast(kInt32, v);
  if (wrap)
    return ((i % intImm(n)) + intImm(n)) % intImm(n);
  return min(max(i, intImm(0)), intImm(n - 1));
}

void indexType(TypeCtx &c) {
  if (c.in[0] != -1)
    c.assignOut(0, c.in[0]);
  else if (c.out[0] != -1)
    c.assignIn(0, c.out[0]);
}

// What take and gather_elements share: data and indices, an axis and a mode, the data's dtype.
OpDef &indexOp(const char *name, const char *doc) {
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .arguments({"data", "indices"})
      .param("axis", ParamKind::Int, "0", "the axis indexed")
      .param("mode", ParamKind::Enum, "clip", "out-of-range indices: clip or wrap",
             {"clip", "wrap"})
      .setPattern(kInjective)
      .type(indexType)
      .layout(layoutFixed(2, false));
}

void registerTake() {
  indexOp("take", "slices of data along `axis` at the positions in indices: out shape "
                  "data[:axis] + indices + data[axis+1:] (ONNX's Gather)")
      .shape([](ShapeCtx &c) {
        if (c.in[0].empty() || c.in[1].empty())
          return;
        int axis = normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()), c.node);
        Shape o(c.in[0].begin(), c.in[0].begin() + axis);
        o.insert(o.end(), c.in[1].begin(), c.in[1].end());
        o.insert(o.end(), c.in[0].begin() + axis + 1, c.in[0].end());
        c.assignOut(0, o);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0], &idx = *in[1];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "take");
        bool wrap = a.getStr("mode") == "wrap";
        int64_t n = x.shape[axis], inner = 1, outer = 1;
        for (size_t d = axis + 1; d < x.shape.size(); ++d)
          inner *= x.shape[d];
        for (int d = 0; d < axis; ++d)
          outer *= x.shape[d];
        int64_t k = 0;
        for (int64_t o = 0; o < outer; ++o)
          for (double v : idx.data) {
            int64_t j = indexOf(v, n, wrap);
            for (int64_t i = 0; i < inner; ++i)
              out[0].data[k++] = x.data[(o * n + j) * inner + i];
          }
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0], idx = in[1];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "take");
        bool wrap = a.getStr("mode") == "wrap";
        size_t ri = idx->shape.size();
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> at(i.begin() + axis, i.begin() + axis + ri);
              std::vector<Expr> src(i.begin(), i.begin() + axis);
              src.push_back(indexExpr(read(idx, at), x->shape[axis], wrap));
              src.insert(src.end(), i.begin() + axis + ri, i.end());
              return read(x, src);
            },
            "compute", "injective", "ax")};
      });
}

void registerGatherElements() {
  indexOp("gather_elements", "out[i] = data[i with i[axis] replaced by indices[i]], shaped as "
                             "indices (Relay's gather, ONNX's GatherElements)")
      .shape([](ShapeCtx &c) {
        if (c.in[0].empty() || c.in[1].empty())
          return;
        if (c.in[0].size() != c.in[1].size())
          c.error(cat("indices ", shapeToList(c.in[1]), " must have the rank of data ",
                      shapeToList(c.in[0])));
        int axis = normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()), c.node);
        for (size_t d = 0; d < c.in[0].size(); ++d)
          if (static_cast<int>(d) != axis && c.in[1][d] > c.in[0][d])
            c.error(cat("indices ", shapeToList(c.in[1]), " exceed data ", shapeToList(c.in[0]),
                        " in dim ", d));
        c.assignOut(0, c.in[1]);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0], &idx = *in[1];
        int axis =
            normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "gather_elements");
        bool wrap = a.getStr("mode") == "wrap";
        std::vector<int64_t> strides = stridesOf(x.shape);
        int64_t k = 0;
        forEachIndex(idx.shape, [&](const std::vector<int64_t> &i) {
          int64_t off = 0;
          for (size_t d = 0; d < i.size(); ++d)
            off += strides[d] *
                   (static_cast<int>(d) == axis ? indexOf(idx.data[k], x.shape[axis], wrap) : i[d]);
          out[0].data[k++] = x.data[off];
        });
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0], idx = in[1];
        int axis =
            normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "gather_elements");
        bool wrap = a.getStr("mode") == "wrap";
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> src = i;
              src[axis] = indexExpr(read(idx, i), x->shape[axis], wrap);
              return read(x, src);
            },
            "compute", "injective", "ax")};
      });
}

// strided_slice's range on one axis of size n: its first index, step and length, by ONNX's
// Slice rules (negative begin/end count from the end; both clamped, to [0, n] for a positive
// step and [-1, n-1] for a negative one).
struct AxisSlice {
  int64_t begin = 0, step = 1, length = 0;
};

std::vector<AxisSlice> slicesOf(const Attrs &a, const Shape &x, const std::string &what) {
  std::vector<AxisSlice> out;
  for (int64_t n : x)
    out.push_back({0, 1, n});
  const auto &begin = a.getTuple("begin"), &end = a.getTuple("end");
  auto strides = a.getTuple("strides"), axes = a.getTuple("axes");
  if (begin.size() != end.size())
    fail(what, ": begin ", shapeToTuple(begin), " and end ", shapeToTuple(end),
         " differ in length");
  if (axes.empty())
    for (size_t k = 0; k < begin.size(); ++k)
      axes.push_back(static_cast<int64_t>(k));
  if (axes.size() != begin.size() || (!strides.empty() && strides.size() != begin.size()))
    fail(what, ": axes, strides, begin and end must have one entry per sliced axis");
  for (size_t k = 0; k < axes.size(); ++k) {
    int axis = normalizeAxis(axes[k], static_cast<int>(x.size()), what);
    int64_t n = x[axis], step = strides.empty() ? 1 : strides[k];
    if (step == 0)
      fail(what, ": stride 0 on axis ", axis);
    // Saturating: ONNX writes "to the end" as INT64_MAX or INT64_MIN.
    auto norm = [n](int64_t v) { return v < 0 ? (v < -n ? -n - 1 : v) + n : v; };
    int64_t b = norm(begin[k]), e = norm(end[k]);
    if (step > 0) {
      b = std::clamp(b, int64_t{0}, n);
      e = std::clamp(e, int64_t{0}, n);
    } else {
      b = std::clamp(b, int64_t{0}, n - 1);
      e = std::clamp(e, int64_t{-1}, n - 1);
    }
    int64_t len = step > 0 ? (e - b + step - 1) / step : (b - e - step - 1) / -step;
    if (len <= 0)
      fail(what, ": the slice [", begin[k], ", ", end[k], ") step ", step, " of axis ", axis,
           " (size ", n, ") is empty");
    out[axis] = {b, step, len};
  }
  return out;
}

void registerStridedSlice() {
  OpRegistry::get()
      .add("strided_slice")
      .describe("every stride-th element of [begin, end) on each listed axis (all axes in order "
                "when `axes` is empty), ONNX's Slice rules for negative and out-of-range bounds")
      .param("begin", ParamKind::Tuple, std::nullopt, "first index per sliced axis")
      .param("end", ParamKind::Tuple, std::nullopt, "one past the last index per sliced axis")
      .param("strides", ParamKind::Tuple, "()", "step per sliced axis (default 1)")
      .param("axes", ParamKind::Tuple, "()", "the sliced axes (default 0, 1, …)")
      .setPattern(kInjective)
      .shape([](ShapeCtx &c) {
        if (c.in[0].empty())
          return;
        Shape o;
        for (const AxisSlice &s : slicesOf(c.attrs, c.in[0], c.node))
          o.push_back(s.length);
        c.assignOut(0, o);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        std::vector<AxisSlice> sl = slicesOf(a, x.shape, "strided_slice");
        std::vector<int64_t> strides = stridesOf(x.shape);
        int64_t k = 0;
        forEachIndex(out[0].shape, [&](const std::vector<int64_t> &i) {
          int64_t off = 0;
          for (size_t d = 0; d < i.size(); ++d)
            off += strides[d] * (sl[d].begin + i[d] * sl[d].step);
          out[0].data[k++] = x.data[off];
        });
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0];
        std::vector<AxisSlice> sl = slicesOf(a, x->shape, "strided_slice");
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> src;
              for (size_t d = 0; d < i.size(); ++d)
                src.push_back(i[d] * sl[d].step + sl[d].begin);
              return read(x, src);
            },
            "compute", "injective", "ax")};
      })
      .layout(layoutFixed(1, false));
}

} // namespace

void registerIndexOps() {
  registerTake();
  registerGatherElements();
  registerStridedSlice();
}

} // namespace loupe::ops
