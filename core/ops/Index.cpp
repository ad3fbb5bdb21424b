// Indexing ops: take picks slices along an axis by an index tensor (ONNX's Gather);
// gather_elements picks one element per index (ONNX's GatherElements, Relay's gather);
// strided_slice takes every step-th element of a range per axis (ONNX's Slice); gather_nd picks
// slices by index tuples; scatter_elements and scatter_nd write updates at indices;
// one_hot expands indices into one-hot rows.
#include "core/loop/SizeVars.h"
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

// The offset of element `p` (by `strides`) with its `axis` coordinate replaced by `j`.
int64_t offsetAt(const std::vector<int64_t> &strides, const std::vector<int64_t> &p, int axis,
                 int64_t j) {
  int64_t off = 0;
  for (size_t d = 0; d < p.size(); ++d)
    off += strides[d] * (static_cast<int>(d) == axis ? j : p[d]);
  return off;
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

// take's output: data[:axis] + indices + data[axis+1:]. Dims is Shape (the concrete rule) or
// SymDims (the symbolic one).
template <class Dims>
Dims takeDims(const Attrs &a, const Dims &data, const Dims &idx, const std::string &node) {
  int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(data.size()), node);
  Dims o(data.begin(), data.begin() + axis);
  o.insert(o.end(), idx.begin(), idx.end());
  o.insert(o.end(), data.begin() + axis + 1, data.end());
  return o;
}

void registerTake() {
  indexOp("take", "slices of data along `axis` at the positions in indices: out shape "
                  "data[:axis] + indices + data[axis+1:] (ONNX's Gather)")
      .shape([](ShapeCtx &c) {
        if (c.in[0].rankKnown() && c.in[1].rankKnown())
          c.assignOut(0, takeDims(c.attrs, Shape(c.in[0]), Shape(c.in[1]), c.node));
      })
      .symbolic([](const SymShapeCtx &c) {
        return std::vector<SymDims>{takeDims(c.attrs, c.in[0], c.in[1], c.node)};
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
      // Indices of any symbolic shape; the axis taken from bounds them, so it is a size.
      .lowerSymbolic([](const Attrs &a, const std::vector<ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &types) {
        ComputeRef x = in[0], idx = in[1];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "take");
        if (x->shape.isSymbolic() && !x->shape.dim(axis).isConstant())
          fail("take: the axis taken from is symbolic (", x->shape.dimText(axis),
               "); a generic kernel takes from an axis of a size");
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
        if (!c.in[0].rankKnown() || !c.in[1].rankKnown())
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
      .symbolic([](const SymShapeCtx &c) {
        // Shaped as the indices; the sizes each index may not exceed are checked at run time.
        if (c.in[0].size() != c.in[1].size())
          c.error(cat("indices ", shapeToList(Shape::symbolic(c.in[1])),
                      " must have the rank of data ", shapeToList(Shape::symbolic(c.in[0]))));
        return std::vector<SymDims>{c.in[1]};
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0], &idx = *in[1];
        int axis =
            normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "gather_elements");
        bool wrap = a.getStr("mode") == "wrap";
        std::vector<int64_t> strides = stridesOf(x.shape);
        int64_t k = 0;
        forEachIndex(idx.shape, [&](const std::vector<int64_t> &i) {
          out[0].data[k] =
              x.data[offsetAt(strides, i, axis, indexOf(idx.data[k], x.shape[axis], wrap))];
          ++k;
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

// A slice's ends: sizes, or (in a symbolic graph) expressions of the size symbols — a slice of
// a fixed table to `seq` rows, as Hugging Face's position_ids[:, :seq].
SymDims sliceEnds(const Attrs &a) { return parseShape(a.getStr("end")).dims(); }

// The sliced axes whose ends are expressions of the size symbols, with those ends (input of
// rank `rank`).
std::vector<std::pair<size_t, SymExpr>> symbolicEnds(const Attrs &a, size_t rank) {
  std::vector<std::pair<size_t, SymExpr>> out;
  SymDims ends = sliceEnds(a);
  std::vector<int64_t> axes = a.getTuple("axes");
  for (size_t k = 0; k < ends.size(); ++k)
    if (!ends[k].isConstant())
      out.push_back(
          {static_cast<size_t>(normalizeAxis(axes.empty() ? static_cast<int64_t>(k) : axes[k],
                                             static_cast<int>(rank), "strided_slice")),
           ends[k]});
  return out;
}

// The ends as sizes, each symbolic one `standIn` (or an error when none is given).
std::vector<int64_t> endSizes(const Attrs &a, const std::string &what,
                              std::optional<int64_t> standIn = std::nullopt) {
  std::vector<int64_t> out;
  for (const SymExpr &e : sliceEnds(a)) {
    if (!e.isConstant() && !standIn)
      fail(what, ": end ", a.getStr("end"),
           " has size symbols; bind them to slice (:run SYMBOL=N)");
    out.push_back(e.isConstant() ? e.constant() : *standIn);
  }
  return out;
}

std::vector<AxisSlice> slicesOf(const Attrs &a, const Shape &x, const std::string &what,
                                std::optional<int64_t> symbolicEnd = std::nullopt) {
  std::vector<AxisSlice> out;
  for (int64_t n : x)
    out.push_back({0, 1, n});
  const auto &begin = a.getTuple("begin");
  const std::vector<int64_t> end = endSizes(a, what, symbolicEnd);
  auto strides = a.getTuple("strides"), axes = a.getTuple("axes");
  if (begin.size() != end.size())
    fail(what, ": begin ", shapeToTuple(begin), " and end ", a.getStr("end"), " differ in length");
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

// strided_slice over symbolic dimensions: a constant axis as slicesOf slices it; a symbolic axis
// of size n sliced with step 1 from a begin in [-n, n) to the end (ONNX's INT64_MAX, or any end
// past 2^31) or to a negative end: n - begin, or end - begin with both counted from the end.
std::vector<SymDims> symStridedSlice(const SymShapeCtx &c) {
  SymDims o = c.in[0];
  const auto &begin = c.attrs.getTuple("begin");
  const SymDims ends = sliceEnds(c.attrs);
  const std::vector<int64_t> end = endSizes(c.attrs, c.node, INT64_MAX);
  auto strides = c.attrs.getTuple("strides"), axes = c.attrs.getTuple("axes");
  if (axes.empty())
    for (size_t k = 0; k < begin.size(); ++k)
      axes.push_back(static_cast<int64_t>(k));
  if (begin.size() != end.size() || axes.size() != begin.size() ||
      (!strides.empty() && strides.size() != begin.size()))
    c.error("axes, strides, begin and end must have one entry per sliced axis");
  // slicesOf checks the constant axes; a symbolic one stands in as a size no slice the rule
  // allows empties (2^31: an end from it is "to the end", which a larger stand-in would cut
  // short of a negative begin).
  Shape constant;
  for (const SymExpr &d : o)
    constant.push_back(d.isConstant() ? d.constant() : int64_t{1} << 31);
  std::vector<AxisSlice> sl = slicesOf(c.attrs, constant, c.node, INT64_MAX);
  for (size_t k = 0; k < axes.size(); ++k) {
    int axis = normalizeAxis(axes[k], static_cast<int>(o.size()), c.node);
    // An end of size symbols: from a begin at or after the start, step 1, to that end (which
    // the run checks is within the axis: Symbols' sizeLimits).
    if (!ends[k].isConstant()) {
      int64_t step = strides.empty() ? 1 : strides[k];
      if (step != 1 || begin[k] < 0)
        c.error(cat("slicing to end ", ends[k].str(), " from ", begin[k], " step ", step,
                    " (a symbolic end slices from a begin ≥ 0, step 1)"));
      o[axis] = ends[k] - SymExpr(begin[k]);
      continue;
    }
    if (o[axis].isConstant()) {
      o[axis] = sl[axis].length;
      continue;
    }
    int64_t step = strides.empty() ? 1 : strides[k], b = begin[k], e = end[k];
    bool toEnd = e >= (int64_t{1} << 31);
    if (step != 1 || (!toEnd && e >= 0))
      c.error(cat("slicing symbolic dimension ", o[axis].str(), " from ", b, " to ", e,
                  " (bind its size to slice it so)"));
    SymExpr first = b >= 0 ? SymExpr(b) : o[axis] + SymExpr(b);
    SymExpr last = toEnd ? o[axis] : o[axis] + SymExpr(e);
    o[axis] = last - first;
  }
  return {o};
}

void registerStridedSlice() {
  OpRegistry::get()
      .add("strided_slice")
      .symbolic(symStridedSlice)
      // An end of size symbols reads up to it: within the axis sliced.
      .limits([](const Attrs &a, const std::vector<SymDims> &in) {
        std::vector<std::pair<SymExpr, SymExpr>> out;
        if (!in.empty())
          for (const auto &[axis, end] : symbolicEnds(a, in[0].size()))
            out.push_back({end, in[0][axis]});
        return out;
      })
      .describe("every stride-th element of [begin, end) on each listed axis (all axes in order "
                "when `axes` is empty), ONNX's Slice rules for negative and out-of-range bounds")
      .param("begin", ParamKind::Tuple, std::nullopt, "first index per sliced axis")
      .param("end", ParamKind::SizeTuple, std::nullopt,
             "one past the last index per sliced axis (expressions of size symbols in a "
             "symbolic graph)")
      .param("strides", ParamKind::Tuple, "()", "step per sliced axis (default 1)")
      .param("axes", ParamKind::Tuple, "()", "the sliced axes (default 0, 1, …)")
      .setPattern(kInjective)
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        Shape o;
        for (const AxisSlice &s : slicesOf(c.attrs, c.in[0], c.node))
          o.push_back(s.length);
        c.assignOut(0, o);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        // An end of size symbols (a generic build's body, run at sizes): the output, shaped at
        // those sizes, says how far the slice goes from its begin.
        std::vector<AxisSlice> sl = slicesOf(a, x.shape, "strided_slice", INT64_MAX);
        for (const auto &[axis, end] : symbolicEnds(a, x.shape.size())) {
          sl[axis].length = out[0].shape[axis];
          if (sl[axis].begin + sl[axis].length > x.shape[axis])
            fail("strided_slice: slicing axis ", axis, " of ", x.shape[axis], " to ", end.str(),
                 " = ", sl[axis].begin + sl[axis].length, " reads past it");
        }
        std::vector<int64_t> strides = stridesOf(x.shape);
        int64_t k = 0;
        forEachIndex(out[0].shape, [&](const std::vector<int64_t> &i) {
          int64_t off = 0;
          for (size_t d = 0; d < i.size(); ++d)
            off += strides[d] * (sl[d].begin + i[d] * sl[d].step);
          out[0].data[k++] = x.data[off];
        });
      })
      .lowerSymbolic([](const Attrs &a, const std::vector<ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &types) {
        ComputeRef x = in[0];
        // Over symbolic shapes, a symbolic axis stands in as a size no slice empties (as the
        // symbolic shape rule checks it) and starts where its begin says, counted from its
        // end when negative: the rule allows it only step 1.
        Shape sizes = x->shape;
        if (x->shape.isSymbolic())
          for (size_t d = 0; d < sizes.size(); ++d)
            if (!x->shape.dim(d).isConstant())
              sizes[d] = int64_t{1} << 31; // (an end from 2^31 is ONNX's "to the end")
        // (An end of size symbols slices from its begin: its length is the output's.)
        std::vector<AxisSlice> sl = slicesOf(a, sizes, "strided_slice", INT64_MAX);
        std::vector<Expr> first;
        for (size_t d = 0; d < sl.size(); ++d)
          first.push_back(sizes[d] == x->shape[d] || sl[d].begin < (int64_t{1} << 30)
                              ? intImm(sl[d].begin)
                              : dimExtent(x->shape, d) - ((int64_t{1} << 31) - sl[d].begin));
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> src;
              for (size_t d = 0; d < i.size(); ++d)
                src.push_back(i[d] * sl[d].step + first[d]);
              return read(x, src);
            },
            "compute", "injective", "ax")};
      })
      .layout(layoutFixed(1, false));
}

// gather_nd (ONNX's GatherND): indices (..., q) pick slices data[b…, t0, …, t(q-1), :] where the
// first `batch_dims` axes of data and indices are shared; out shape
// indices.shape[:-1] + data.shape[batch_dims+q:]. Negative indices count from the end.
struct GatherNd {
  int batch = 0, q = 0, r = 0; // shared axes, index tuple length, indices' rank - 1
};

GatherNd gatherNdOf(const Attrs &a, const Shape &data, const Shape &idx, const std::string &what) {
  GatherNd g;
  g.batch = static_cast<int>(a.getInt("batch_dims"));
  if (idx.empty())
    fail(what, ": indices must have rank 1 or more");
  g.q = static_cast<int>(idx.back());
  g.r = static_cast<int>(idx.size()) - 1;
  if (g.batch < 0 || g.batch > g.r || g.batch + g.q > static_cast<int>(data.size()) || g.q < 1)
    fail(what, ": indices ", shapeToList(idx), " with batch_dims ", g.batch, " do not index data ",
         shapeToList(data));
  for (int d = 0; d < g.batch; ++d)
    if (idx[d] != data[d])
      fail(what, ": batch dim ", d, " of indices ", shapeToList(idx), " and data ",
           shapeToList(data), " differ");
  return g;
}

void registerGatherNd() {
  OpRegistry::get()
      .add("gather_nd")
      .describe("slices of data at the index tuples in the last axis of indices, the first "
                "batch_dims axes shared (ONNX's GatherND)")
      .arguments({"data", "indices"})
      .param("batch_dims", ParamKind::Int, "0", "leading axes shared by data and indices")
      .setPattern(kInjective)
      .type(indexType)
      .layout(layoutFixed(2, false))
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown() || !c.in[1].rankKnown())
          return;
        GatherNd g = gatherNdOf(c.attrs, c.in[0], c.in[1], c.node);
        Shape o(c.in[1].begin(), c.in[1].end() - 1);
        o.insert(o.end(), c.in[0].begin() + g.batch + g.q, c.in[0].end());
        c.assignOut(0, o.empty() ? Shape{1} : o);
      })
      .symbolic([](const SymShapeCtx &c) {
        // The index tuples' length (indices' last axis) says which data axes are sliced: it must
        // be a size.
        const SymDims &data = c.in[0], &idx = c.in[1];
        if (idx.empty() || !idx.back().isConstant())
          c.error(cat("the index tuples' length (the last axis of indices ",
                      shapeToList(Shape::symbolic(idx)), ") must be a size"));
        auto batch = static_cast<size_t>(std::max<int64_t>(0, c.attrs.getInt("batch_dims")));
        auto q = static_cast<size_t>(std::max<int64_t>(1, idx.back().constant()));
        if (batch + q > data.size())
          c.error(cat("indices ", shapeToList(Shape::symbolic(idx)), " do not index data ",
                      shapeToList(Shape::symbolic(data))));
        SymDims o(idx.begin(), idx.end() - 1);
        o.insert(o.end(), data.begin() + static_cast<std::ptrdiff_t>(batch + q), data.end());
        if (o.empty())
          o.emplace_back(1);
        return std::vector<SymDims>{o};
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0], &idx = *in[1];
        GatherNd g = gatherNdOf(a, x.shape, idx.shape, "gather_nd");
        std::vector<int64_t> xs = stridesOf(x.shape), is = stridesOf(idx.shape);
        Shape outShape(idx.shape.begin(), idx.shape.end() - 1);
        outShape.insert(outShape.end(), x.shape.begin() + g.batch + g.q, x.shape.end());
        int64_t k = 0;
        forEachIndex(outShape, [&](const std::vector<int64_t> &i) {
          int64_t off = 0, base = 0;
          for (int d = 0; d < g.r; ++d)
            base += is[d] * i[d];
          for (int d = 0; d < g.batch; ++d)
            off += xs[d] * i[d];
          for (int j = 0; j < g.q; ++j)
            off += xs[g.batch + j] * indexOf(idx.data[base + j], x.shape[g.batch + j], true);
          for (size_t d = g.r; d < i.size(); ++d)
            off += xs[d - g.r + g.batch + g.q] * i[d];
          out[0].data[k++] = x.data[off];
        });
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0], idx = in[1];
        GatherNd g = gatherNdOf(a, x->shape, idx->shape, "gather_nd");
        ComputeRef y = compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> at(i.begin(), i.begin() + g.r), src(i.begin(), i.begin() + g.batch);
              at.push_back(intImm(0));
              for (int j = 0; j < g.q; ++j) {
                at.back() = intImm(j);
                src.push_back(indexExpr(read(idx, at), x->shape[g.batch + j], true));
              }
              src.insert(src.end(), i.begin() + std::min<size_t>(g.r, i.size()), i.end());
              return read(x, src);
            },
            "compute", "injective", "ax");
        return std::vector<ComputeRef>{y};
      });
}

// How a scatter combines an update with what is there: none (the update replaces it; of
// several updates to one place the last wins), add, mul, max, min.
enum class Combine { None, Add, Mul, Max, Min };

Combine combineOf(const Attrs &a) {
  const std::string &r = a.getStr("reduction");
  return r == "add"   ? Combine::Add
         : r == "mul" ? Combine::Mul
         : r == "max" ? Combine::Max
         : r == "min" ? Combine::Min
                      : Combine::None;
}

double combined(Combine c, double old, double v) {
  switch (c) {
  case Combine::Add:
    return old + v;
  case Combine::Mul:
    return old * v;
  case Combine::Max:
    return std::max(old, v);
  case Combine::Min:
    return std::min(old, v);
  default:
    return v;
  }
}

// What a scatter's lowering says about output element i and update r (the reduction axes'
// variables): whether the update lands on i, its value, and r as one linear index.
struct ScatterTerms {
  Expr match, update, linear;
};
using ScatterFn =
    std::function<ScatterTerms(const std::vector<Expr> &i, const std::vector<Expr> &r)>;

// out[i] from data[i] and the updates matching it, one stage per reduction (a stage's body has
// its reduction at the top): the sum or product of the matching updates, their max or min and
// count, or (reduction none) the last matching update's linear index, read back by `updateAt`.
ComputeRef
scatterLower(Combine c, const ComputeRef &x, const Shape &updates, int dt, const ScatterFn &terms,
             const std::function<Expr(const std::vector<Expr> &, const Expr &)> &updateAt) {
  auto stage = [&](const std::string &name, int type, auto body) {
    std::vector<IterVar> r;
    std::vector<Expr> vars;
    for (size_t d = 0; d < updates.size(); ++d) {
      r.push_back(reduceAxis(updates[d], "k" + std::to_string(d)));
      vars.push_back(r.back().var);
    }
    return compute(
        x->shape, type, [&](const std::vector<Expr> &i) { return body(terms(i, vars), r); }, name,
        "reduce", "ax");
  };
  using R = const std::vector<IterVar> &;
  auto finish = [&](auto fn) { return compute(x->shape, dt, fn, "compute", "injective", "ax"); };
  switch (c) {
  case Combine::Add:
  case Combine::Mul: {
    bool add = c == Combine::Add;
    ComputeRef s = stage(add ? "sum" : "product", dt, [&](const ScatterTerms &t, R r) {
      return reduce(add ? Combiner::Sum : Combiner::Prod,
                    select(t.match, t.update, constant(add ? 0 : 1, dt)), r);
    });
    return finish([&](const std::vector<Expr> &i) {
      return add ? read(x, i) + read(s, i) : read(x, i) * read(s, i);
    });
  }
  case Combine::Max:
  case Combine::Min: {
    bool isMax = c == Combine::Max;
    ComputeRef hits = stage("hits", kInt32, [&](const ScatterTerms &t, R r) {
      return reduce(Combiner::Sum, select(t.match, intImm(1), intImm(0)), r);
    });
    ComputeRef m = stage("extreme", dt, [&](const ScatterTerms &t, R r) {
      return reduce(isMax ? Combiner::Max : Combiner::Min, t.update, r, t.match);
    });
    return finish([&](const std::vector<Expr> &i) {
      Expr old = read(x, i), e = read(m, i);
      return select(gt(read(hits, i), intImm(0)), isMax ? max(old, e) : min(old, e), old);
    });
  }
  default: {
    ComputeRef last = stage("last", kInt32, [&](const ScatterTerms &t, R r) {
      return reduce(Combiner::Max, select(t.match, t.linear, intImm(-1)), r);
    });
    return finish([&](const std::vector<Expr> &i) {
      Expr l = read(last, i);
      return select(ge(l, intImm(0)), updateAt(i, max(l, intImm(0))), read(x, i));
    });
  }
  }
}

OpDef &scatterOp(const char *name, const char *doc) {
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .arguments({"data", "indices", "updates"})
      .param("reduction", ParamKind::Enum, "none",
             "how an update combines with the element: none (replace), add, mul, max, min",
             {"none", "add", "mul", "max", "min"})
      .setPattern(kOpaque) // every output element searches the updates
      .type([](TypeCtx &c) {
        int t = c.in[0] != -1 ? c.in[0] : c.in[2] != -1 ? c.in[2] : c.out[0];
        if (t == -1)
          return;
        c.assignIn(0, t);
        c.assignIn(2, t);
        c.assignOut(0, t);
      })
      .layout(layoutFixed(3, false));
}

// ScatterElements' indices and updates: one shape, data's rank, no larger than data off axis.
int scatterElementsAxis(const Attrs &a, const Shape &data, const Shape &idx, const Shape &upd,
                        const std::string &what) {
  if (idx != upd || idx.size() != data.size())
    fail(what, ": indices ", shapeToList(idx), " and updates ", shapeToList(upd),
         " must have one shape of data's rank ", data.size());
  int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(data.size()), what);
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int>(d) != axis && idx[d] > data[d])
      fail(what, ": indices ", shapeToList(idx), " exceed data ", shapeToList(data), " in dim ", d);
  return axis;
}

void registerScatterElements() {
  scatterOp("scatter_elements",
            "data with updates[p] written at p with p[axis] replaced by indices[p] (ONNX's "
            "ScatterElements)")
      .param("axis", ParamKind::Int, "0", "the axis indices address")
      .shape([](ShapeCtx &c) {
        if (c.in[0].rankKnown() && c.in[1].rankKnown() && c.in[2].rankKnown())
          scatterElementsAxis(c.attrs, c.in[0], c.in[1], c.in[2], c.node);
        if (c.in[0].rankKnown())
          c.assignOut(0, c.in[0]);
      })
      .symbolic(symSameShape)
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0], &idx = *in[1], &upd = *in[2];
        int axis = scatterElementsAxis(a, x.shape, idx.shape, upd.shape, "scatter_elements");
        Combine c = combineOf(a);
        out[0].data = x.data;
        std::vector<int64_t> strides = stridesOf(x.shape);
        int64_t k = 0;
        forEachIndex(idx.shape, [&](const std::vector<int64_t> &p) {
          int64_t off = offsetAt(strides, p, axis, indexOf(idx.data[k], x.shape[axis], true));
          out[0].data[off] = combined(c, out[0].data[off], upd.data[k]);
          ++k;
        });
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0], idx = in[1], upd = in[2];
        int axis = scatterElementsAxis(a, x->shape, idx->shape, upd->shape, "scatter_elements");
        // Update p: i off the axis (clamped in range: a miss reads a valid element), k on it.
        auto at = [&](const std::vector<Expr> &i, const Expr &k) {
          std::vector<Expr> p;
          for (size_t d = 0; d < i.size(); ++d)
            p.push_back(static_cast<int>(d) == axis ? k : min(i[d], intImm(idx->shape[d] - 1)));
          return p;
        };
        ScatterFn terms = [&](const std::vector<Expr> &i, const std::vector<Expr> &r) {
          Expr match = eq(indexExpr(read(idx, at(i, r[0])), x->shape[axis], true), i[axis]);
          for (size_t d = 0; d < i.size(); ++d)
            if (static_cast<int>(d) != axis && idx->shape[d] < x->shape[d])
              match = land(match, lt(i[d], intImm(idx->shape[d])));
          return ScatterTerms{match, read(upd, at(i, r[0])), r[0]};
        };
        return std::vector<ComputeRef>{scatterLower(
            combineOf(a), x, {idx->shape[axis]}, types[0], terms,
            [&](const std::vector<Expr> &i, const Expr &k) { return read(upd, at(i, k)); })};
      });
}

// ScatterND's shapes: indices I + (q,), updates I + data.shape[q:]; returns q.
int scatterNdDepth(const Shape &data, const Shape &idx, const Shape &upd, const std::string &what) {
  if (idx.size() < 2 || idx.back() < 1 || idx.back() > static_cast<int64_t>(data.size()))
    fail(what, ": indices ", shapeToList(idx), " must be a list of index tuples of length 1 … ",
         data.size(), " (rank 2 or more)");
  auto q = static_cast<int>(idx.back());
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.begin() + q, data.end());
  if (upd != want)
    fail(what, ": updates ", shapeToList(upd), " must have shape ", shapeToList(want));
  return q;
}

void registerScatterNd() {
  scatterOp("scatter_nd", "data with the slices updates[t] written at the index tuples "
                          "indices[t] (ONNX's ScatterND)")
      .shape([](ShapeCtx &c) {
        if (c.in[0].rankKnown() && c.in[1].rankKnown() && c.in[2].rankKnown())
          scatterNdDepth(c.in[0], c.in[1], c.in[2], c.node);
        if (c.in[0].rankKnown())
          c.assignOut(0, c.in[0]);
      })
      .symbolic(symSameShape)
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0], &idx = *in[1], &upd = *in[2];
        int q = scatterNdDepth(x.shape, idx.shape, upd.shape, "scatter_nd");
        Combine c = combineOf(a);
        out[0].data = x.data;
        std::vector<int64_t> strides = stridesOf(x.shape);
        int64_t slice = 1, tuples = static_cast<int64_t>(idx.data.size()) / q;
        for (size_t d = q; d < x.shape.size(); ++d)
          slice *= x.shape[d];
        for (int64_t t = 0; t < tuples; ++t) {
          int64_t off = 0;
          for (int j = 0; j < q; ++j)
            off += strides[j] * indexOf(idx.data[t * q + j], x.shape[j], true);
          for (int64_t e = 0; e < slice; ++e)
            out[0].data[off + e] = combined(c, out[0].data[off + e], upd.data[t * slice + e]);
        }
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0], idx = in[1], upd = in[2];
        int q = scatterNdDepth(x->shape, idx->shape, upd->shape, "scatter_nd");
        Shape tuples(idx->shape.begin(), idx->shape.end() - 1);
        auto updateAt = [&](const std::vector<Expr> &i, const std::vector<Expr> &t) {
          std::vector<Expr> p = t;
          p.insert(p.end(), i.begin() + q, i.end());
          return read(upd, p);
        };
        ScatterFn terms = [&](const std::vector<Expr> &i, const std::vector<Expr> &t) {
          Expr linear = intImm(0), match;
          for (size_t d = 0; d < t.size(); ++d)
            linear = linear * intImm(tuples[d]) + t[d];
          for (int j = 0; j < q; ++j) {
            std::vector<Expr> at = t;
            at.push_back(intImm(j));
            Expr m = eq(indexExpr(read(idx, at), x->shape[j], true), i[j]);
            match = j ? land(match, m) : m;
          }
          return ScatterTerms{match, updateAt(i, t), linear};
        };
        // The last matching tuple, decoded from its linear index.
        auto lastUpdate = [&](const std::vector<Expr> &i, const Expr &last) {
          std::vector<Expr> t(tuples.size());
          Expr rest = last;
          for (size_t d = tuples.size(); d-- > 0;) {
            t[d] = rest % intImm(tuples[d]);
            rest = rest / intImm(tuples[d]);
          }
          return updateAt(i, t);
        };
        return std::vector<ComputeRef>{
            scatterLower(combineOf(a), x, tuples, types[0], terms, lastUpdate)};
      });
}

// one_hot's output shape: indices' with `depth` inserted at `axis` (of the output's rank).
int oneHotAxis(const Attrs &a, size_t rank, const std::string &what) {
  if (a.getInt("depth") < 1)
    fail(what, ": depth must be 1 or more, got ", a.getInt("depth"));
  return normalizeAxis(a.getInt("axis"), static_cast<int>(rank) + 1, what);
}

void registerOneHot() {
  OpRegistry::get()
      .add("one_hot")
      .describe("values[1] where the new axis equals the index (negative ones count from depth), "
                "values[0] elsewhere (ONNX's OneHot)")
      .arguments({"indices", "values"})
      .param("depth", ParamKind::Int, std::nullopt, "the size of the new axis")
      .param("axis", ParamKind::Int, "-1", "where the new axis goes")
      .setPattern(kInjective)
      .layout(layoutFixed(2, false))
      .type([](TypeCtx &c) {
        if (c.in[1] != -1)
          c.assignOut(0, c.in[1]);
      })
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        if (c.in[1].rankKnown() && numElements(c.in[1]) != 2)
          c.error(cat("values ", shapeToList(c.in[1]), " must hold two elements (off, on)"));
        Shape o = c.in[0];
        o.insert(o.begin() + oneHotAxis(c.attrs, c.in[0].size(), c.node), c.attrs.getInt("depth"));
        c.assignOut(0, o);
      })
      .symbolic([](const SymShapeCtx &c) {
        SymDims o = c.in[0];
        o.insert(o.begin() + oneHotAxis(c.attrs, o.size(), c.node),
                 SymExpr(c.attrs.getInt("depth")));
        return std::vector<SymDims>{o};
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &idx = *in[0], &values = *in[1];
        int axis = oneHotAxis(a, idx.shape.size(), "one_hot");
        int64_t depth = a.getInt("depth"), k = 0;
        forEachIndex(out[0].shape, [&](const std::vector<int64_t> &i) {
          std::vector<int64_t> at = i;
          at.erase(at.begin() + axis);
          auto v = static_cast<int64_t>(idx.data[broadcastOffset(idx.shape, at)]);
          out[0].data[k++] = values.data[(v < 0 ? v + depth : v) == i[axis] ? 1 : 0];
        });
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef idx = in[0], values = in[1];
        int axis = oneHotAxis(a, idx->shape.size(), "one_hot");
        int64_t depth = a.getInt("depth");
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> at = i;
              at.erase(at.begin() + axis);
              Expr v = cast(kInt32, read(idx, at));
              v = select(lt(v, intImm(0)), v + intImm(depth), v);
              return select(eq(v, i[axis]), read(values, {intImm(1)}), read(values, {intImm(0)}));
            },
            "compute", "injective", "ax")};
      });
}

} // namespace

void registerIndexOps() {
  registerTake();
  registerGatherElements();
  registerStridedSlice();
  registerGatherNd();
  registerScatterElements();
  registerScatterNd();
  registerOneHot();
}

} // namespace loupe::ops
