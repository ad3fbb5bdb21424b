// Transform ops: flatten, reshape(_like), transpose, concatenate, split, expand_dims,
// expand_like, squeeze and flip (the Injective family, plus expand_like).
#include "core/ops/OpHelpers.h"

#include "core/Layout.h"
#include "core/Memory.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace loupe::ops {

namespace {

// Ops that only reinterpret the shape keep the row-major data as it is.
void copyKernel(const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
  out[0].data = in[0]->data;
}

void checkSameCount(ShapeCtx &c, const Shape &from, const Shape &to) {
  if (shapeKnown(from) && shapeKnown(to) && numElements(from) != numElements(to))
    c.error(cat("cannot reshape ", shapeToList(from), " (", numElements(from), " elements) to ",
                shapeToList(to), " (", numElements(to), " elements)"));
}

// The symbolic shape rules of the transform ops (the concrete ones are in each registration).

SymExpr symProduct(const SymDims &d, size_t from = 0, size_t to = SIZE_MAX) {
  SymExpr p(1);
  for (size_t i = from; i < std::min(to, d.size()); ++i)
    p = p * d[i];
  return p;
}

std::vector<SymDims> symFlatten(const SymShapeCtx &c) {
  const SymDims &d = c.in[0];
  if (d.empty())
    c.error("flatten takes a tensor of rank 1 or more");
  return {{d[0], symProduct(d, 1)}};
}

// MXNet/NNVM reshape codes over dimensions that may be symbolic: 0 and -2 copy, -3 multiplies
// two, -4 splits one by a constant, and -1 is the element count over the other dimensions'
// product when that divides it exactly; a target size written as an expression of symbols
// (`(seq, batch, 768)`) is that size. The concrete rule (reshapeTarget) is this one over
// constants; `c` reports errors (ShapeCtx or SymShapeCtx).
template <class Ctx> SymDims reshapeDims(const Ctx &c, const SymDims &src, const SymDims &written) {
  std::vector<int64_t> spec;
  for (const SymExpr &d : written)
    spec.push_back(d.isConstant() ? d.constant() : 1);
  SymDims tgt;
  size_t si = 0;
  int inferAt = -1;
  auto srcDim = [&](size_t i) {
    if (i >= src.size())
      c.error(cat("shape ", shapeToTuple(Shape::symbolic(written)),
                  " uses more axes than the input ", shapeToList(Shape::symbolic(src)), " has"));
    return src[i];
  };
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (!written[i].isConstant()) {
      tgt.push_back(written[i]);
      ++si;
    } else if (v > 0) {
      tgt.push_back(v);
      ++si;
    } else if (v == 0) {
      tgt.push_back(srcDim(si++));
    } else if (v == -1) {
      if (inferAt >= 0)
        c.error("shape may contain only one -1");
      inferAt = static_cast<int>(tgt.size());
      tgt.push_back(1);
      ++si;
    } else if (v == -2) {
      while (si < src.size())
        tgt.push_back(src[si++]);
    } else if (v == -3) {
      tgt.push_back(srcDim(si) * srcDim(si + 1)); // checked: the dims can be anything a file held
      si += 2;
    } else if (v == -4) {
      if (i + 2 >= spec.size())
        c.error("-4 must be followed by two dimensions");
      SymExpr d = srcDim(si++);
      int64_t a = spec[i + 1], b = spec[i + 2];
      i += 2;
      if (!written[i - 1].isConstant() || !written[i].isConstant())
        c.error("-4 is followed by two constant sizes");
      if (a == -1 && b == -1)
        c.error("-4 cannot be followed by two -1");
      SymExpr part = a > 0 && b > 0 ? SymExpr(a) * SymExpr(b) : d;
      if (a <= 0 || b <= 0) {
        int64_t by = a == -1 ? b : a;
        if ((a != -1 && b != -1) || by <= 0 || !d.exactDiv(by, &part))
          c.error(cat("-4 split of ", d.str(), " into ", a, " x ", b, " does not match"));
      }
      SymExpr first = a == -1 ? part : SymExpr(a), second = b == -1 ? part : SymExpr(b);
      if (first * second != d)
        c.error(cat("-4 split of ", d.str(), " into ", a, " x ", b, " does not match"));
      tgt.push_back(first);
      tgt.push_back(second);
    } else {
      c.error(cat("invalid shape code ", v));
    }
  }
  if (inferAt >= 0) {
    SymDims others = tgt;
    others.erase(others.begin() + inferAt);
    SymExpr total = symProduct(src), rest, quotient;
    try {
      rest = symProduct(others);
    } catch (const Error &) { // found by fuzzing an ONNX Reshape
      fail("shape ", shapeToTuple(Shape::symbolic(others)),
           " has more elements than a 64-bit count holds");
    }
    if (!total.divideBy(rest, &quotient))
      c.error(cat("cannot infer -1: ", total.str(), " elements over ", rest.str()));
    tgt[inferAt] = quotient;
  }
  return tgt;
}

std::vector<SymDims> symReshape(const SymShapeCtx &c) {
  SymDims written = parseShape(c.attrs.getStr("shape")).dims();
  if (written.empty())
    return {SymDims{}};
  return {reshapeDims(c, c.in[0], written)};
}

std::vector<SymDims> symTranspose(const SymShapeCtx &c) {
  const SymDims &d = c.in[0];
  const auto &ax = c.attrs.getTuple("axes");
  int nd = static_cast<int>(d.size());
  if (!ax.empty() && static_cast<int>(ax.size()) != nd)
    c.error(cat("axes ", shapeToTuple(ax), " must list all ", nd, " axes"));
  SymDims o(nd);
  for (int i = 0; i < nd; ++i)
    o[i] = ax.empty() ? d[nd - 1 - i] : d[normalizeAxis(ax[i], nd, cat("operator ", c.node))];
  return {o};
}

std::vector<SymDims> symConcatenate(const SymShapeCtx &c) {
  int nd = static_cast<int>(c.in[0].size());
  int axis = normalizeAxis(c.attrs.getInt("axis"), nd, cat("operator ", c.node));
  SymDims o = c.in[0];
  o[axis] = 0;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (static_cast<int>(c.in[i].size()) != nd)
      c.error(cat("input ", i, " has rank ", c.in[i].size(), " instead of ", nd));
    for (int d = 0; d < nd; ++d)
      if (d != axis && c.in[i][d] != c.in[0][d] &&
          c.in[i][d].isConstant() == c.in[0][d].isConstant())
        c.error(cat("input ", i, " has dimension ", c.in[i][d].str(), " where input 0 has ",
                    c.in[0][d].str(), " outside axis ", axis));
    o[axis] = o[axis] + c.in[i][axis];
  }
  return {o};
}

std::vector<SymDims> symExpandDims(const SymShapeCtx &c) {
  int nd = static_cast<int>(c.in[0].size());
  int64_t ax = c.attrs.getInt("axis"), n = c.attrs.getInt("num_newaxis");
  if (ax < -nd - 1 || ax > nd || n < 0)
    c.error(cat("axis ", ax, " is out of range [", -nd - 1, ", ", nd, "]"));
  if (ax < 0)
    ax += nd + 1;
  SymDims o = c.in[0];
  o.insert(o.begin() + ax, n, SymExpr(1));
  return {o};
}

// squeeze's output dimensions (SymDims, constant for the concrete rule): the listed axes, each
// of size 1, or every axis of size 1 when none is listed; `c` reports errors (ShapeCtx or
// SymShapeCtx).
template <class Ctx> SymDims squeezeDims(const Ctx &c, const SymDims &d) {
  int nd = static_cast<int>(d.size());
  std::vector<bool> drop(nd, false);
  const auto &ax = c.attrs.getTuple("axis");
  for (int i = 0; i < nd && ax.empty(); ++i)
    drop[i] = d[i] == SymExpr(1);
  for (int64_t a : ax) {
    int i = normalizeAxis(a, nd, cat("operator ", c.node));
    if (d[i] != SymExpr(1))
      c.error(cat("axis ", a, " has size ", d[i].str(), ", not 1"));
    drop[i] = true;
  }
  SymDims o;
  for (int i = 0; i < nd; ++i)
    if (!drop[i])
      o.push_back(d[i]);
  if (o.empty())
    o = {SymExpr(1)};
  return o;
}

std::vector<SymDims> symSqueeze(const SymShapeCtx &c) { return {squeezeDims(c, c.in[0])}; }

// The reshape of `src` by codes `spec` (reshapeDims over constants).
Shape reshapeTarget(ShapeCtx &c, const Shape &src, const std::vector<int64_t> &spec) {
  numElements(src); // a count past 64 bits (found by fuzzing an ONNX Reshape) said as such
  return Shape::symbolic(reshapeDims(c, src.dims(), SymDims(spec.begin(), spec.end())));
}

void transposeKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                     std::vector<Tensor> &out) {
  const Tensor &x = *in[0];
  size_t nd = x.shape.size();
  std::vector<int> axes;
  for (int64_t v : a.getTuple("axes"))
    axes.push_back(normalizeAxis(v, static_cast<int>(nd), "transpose"));
  if (axes.empty())
    for (size_t d = 0; d < nd; ++d)
      axes.push_back(static_cast<int>(nd - 1 - d));
  auto st = stridesOf(x.shape);
  int64_t k = 0;
  forEachIndex(out[0].shape, [&](const std::vector<int64_t> &idx) {
    int64_t off = 0;
    for (size_t d = 0; d < nd; ++d)
      off += idx[d] * st[axes[d]];
    out[0].data[k++] = x.data[off];
  });
}

// Split points along the axis: "N" (no brackets) = N equal sections; a tuple = indices.
std::vector<int64_t> splitPoints(const Attrs &a, int64_t dim, ShapeCtx *c) {
  const std::string &raw = a.raw("indices_or_sections");
  const auto &v = a.getTuple("indices_or_sections");
  auto err = [&](const std::string &m) {
    if (c)
      c->error(m);
    fail(m);
  };
  std::vector<int64_t> pts{0};
  bool sections = raw.find_first_of("([") == std::string::npos;
  if (sections) {
    if (v.size() != 1 || v[0] <= 0)
      err("indices_or_sections must be a positive number of sections");
    if (dim % v[0] != 0)
      err(cat("axis of size ", dim, " cannot be split into ", v[0], " equal sections"));
    for (int64_t i = 1; i < v[0]; ++i)
      pts.push_back(i * dim / v[0]);
  } else {
    for (int64_t p : v) {
      if (p <= pts.back() || p >= dim)
        err(cat("split indices ", raw, " must increase strictly inside (0, ", dim, ")"));
      pts.push_back(p);
    }
  }
  pts.push_back(dim);
  return pts;
}

// split's parts over symbolic dimensions: a constant axis splits as the concrete rule does; a
// symbolic one into sections of an exact quotient where the expression divides (`seq*4` in 2:
// `seq*2`), else a floor division the bound sizes must make exact (the variant's InferShape says
// when they do not), or at indices, the last part what remains (`seq-8`).
std::vector<SymDims> symSplit(const SymShapeCtx &c) {
  int axis = normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()),
                           cat("operator ", c.node));
  const SymExpr &dim = c.in[0][axis];
  std::vector<SymExpr> sizes;
  if (dim.isConstant()) {
    std::vector<int64_t> pts = splitPoints(c.attrs, dim.constant(), nullptr);
    for (size_t i = 0; i + 1 < pts.size(); ++i)
      sizes.emplace_back(pts[i + 1] - pts[i]);
  } else if (c.attrs.raw("indices_or_sections").find_first_of("([") == std::string::npos) {
    int64_t n = c.attrs.getTuple("indices_or_sections").at(0);
    if (n <= 0)
      c.error("indices_or_sections must be a positive number of sections");
    SymExpr part;
    if (!dim.exactDiv(n, &part))
      part = SymExpr::floorDiv(dim, n);
    sizes.assign(static_cast<size_t>(n), part);
  } else {
    int64_t last = 0;
    for (int64_t p : c.attrs.getTuple("indices_or_sections")) {
      if (p <= last)
        c.error(cat("split indices ", c.attrs.raw("indices_or_sections"), " must increase"));
      sizes.emplace_back(p - last);
      last = p;
    }
    sizes.push_back(dim - SymExpr(last));
  }
  std::vector<SymDims> out;
  for (const SymExpr &s : sizes) {
    SymDims o = c.in[0];
    o[axis] = s;
    out.push_back(o);
  }
  return out;
}

int numSplitOutputs(const Attrs &a) {
  const std::string &raw = a.raw("indices_or_sections");
  const auto &v = a.getTuple("indices_or_sections");
  bool sections = raw.find_first_of("([") == std::string::npos;
  if (sections)
    return v.size() == 1 && v[0] > 0 ? static_cast<int>(v[0]) : 1;
  return static_cast<int>(v.size()) + 1;
}

// __layout_transform__ as a stage: each primal axis's full coordinate is rebuilt from the
// destination's axes (outer * block + inner), then cut as the source layout cuts it.
loop::ComputeRef layoutTransformCompute(const loop::ComputeRef &x, const std::string &src,
                                        const std::string &dst, const Shape &shape, int dtype) {
  auto sa = parseLayout(src), da = parseLayout(dst);
  auto blockOf = [](const std::vector<LayoutAxis> &l, char primal) {
    for (const LayoutAxis &a : l)
      if (a.name == std::tolower(primal))
        return a.factor;
    return int64_t{0};
  };
  return loop::compute(
      shape, dtype,
      [&](const std::vector<loop::Expr> &i) {
        std::map<char, loop::Expr> coord;
        for (size_t d = 0; d < da.size(); ++d)
          if (std::isupper(static_cast<unsigned char>(da[d].name))) {
            int64_t b = blockOf(da, da[d].name);
            loop::Expr c = i[d];
            if (b) {
              size_t inner = 0;
              while (da[inner].name != std::tolower(da[d].name))
                ++inner;
              c = c * b + i[inner];
            }
            coord[da[d].name] = c;
          }
        std::vector<loop::Expr> idx;
        for (const LayoutAxis &a : sa) {
          char p = static_cast<char>(std::toupper(a.name));
          int64_t b = blockOf(sa, p);
          if (std::isupper(static_cast<unsigned char>(a.name)))
            idx.push_back(b ? coord.at(p) / b : coord.at(p));
          else
            idx.push_back(coord.at(p) % b);
        }
        return loop::read(x, idx);
      },
      "T_layout_trans", "injective", "ax");
}

// Copies a block of `src` into `dst` at an offset along `axis` (concatenate / split).
void copyAlongAxis(const Tensor &src, Tensor &dst, int axis, int64_t srcStart, int64_t dstStart,
                   int64_t len) {
  int64_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < src.shape.size(); ++d)
    inner *= src.shape[d];
  for (int d = 0; d < axis; ++d)
    outer *= src.shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < len; ++j)
      for (int64_t i = 0; i < inner; ++i)
        dst.data[(o * dst.shape[axis] + dstStart + j) * inner + i] =
            src.data[(o * src.shape[axis] + srcStart + j) * inner + i];
}

// Ops that only reshape: the gradient is g reshaped like the data. NNVM's flatten gradient
// carried a dict with one empty key (seed 001 prints `reshape_like(%17, %4, ='')`).
GradientFn reshapeGrad(bool emptyKey) {
  return [emptyKey](const NodePtr &n, const std::vector<NodeEntry> &g) {
    AttrDict a;
    if (emptyKey)
      a.emplace_back("", "");
    return std::vector<NodeEntry>{mk("reshape_like", n->name + "_grad", {g[0], n->inputs[0]}, a)};
  };
}

} // namespace

namespace {
// tile's input shape and reps at one rank: the shorter padded with leading 1s.
// Dims is Shape (the concrete rule, the kernels) or SymDims (the symbolic rule).
template <class Dims>
std::pair<Dims, std::vector<int64_t>> tileAligned(Dims x, std::vector<int64_t> reps) {
  if (reps.size() < x.size())
    reps.insert(reps.begin(), x.size() - reps.size(), 1);
  if (x.size() < reps.size())
    x.insert(x.begin(), reps.size() - x.size(), typename Dims::value_type(1));
  return {x, reps};
}
} // namespace

void registerTransformOps() {
  OpRegistry &r = OpRegistry::get();
  r.add("flatten")
      .symbolic(symFlatten)
      .describe("collapses all axes but the first: (d0, d1·d2·…)")
      .layout(layoutFixed(1, false))
      .lowerSymbolic([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &) {
        return std::vector<loop::ComputeRef>{reshapeCompute(in[0], shapes[0])};
      })
      .setPattern(kInjective)
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        const Shape &d = c.in[0];
        int64_t rest = 1;
        for (size_t i = 1; i < d.size(); ++i)
          rest *= d[i];
        c.assignOut(0, {d[0], rest});
      })
      .kernel(copyKernel)
      .grad(reshapeGrad(true));

  r.add("reshape")
      .symbolic(symReshape)
      .describe("reshapes with codes 0 (copy), -1 (infer), -2 (rest), -3 (merge), -4 (split)")
      .param("shape", ParamKind::SizeTuple, std::nullopt,
             "the target shape (its sizes may be expressions of size symbols)")
      .layout(layoutFixed(1, false))
      .lowerSymbolic([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &) {
        return std::vector<loop::ComputeRef>{reshapeCompute(in[0], shapes[0])};
      })
      .setPattern(kInjective)
      .acceptScalars()
      .shape([](ShapeCtx &c) {
        if (!shapeKnown(c.in[0]))
          return;
        // shape=() is a scalar's (NumPy's reshape of one element to ()). A target with size
        // symbols is the symbolic rule's.
        Shape target = parseShape(c.attrs.getStr("shape"));
        if (target.isSymbolic())
          return;
        const std::vector<int64_t> &to = target;
        Shape t = to.empty() ? Shape::scalar() : reshapeTarget(c, c.in[0], to);
        checkSameCount(c, c.in[0], t);
        c.assignOut(0, t);
      })
      .kernel(copyKernel)
      .grad(reshapeGrad(false));

  r.add("reshape_like")
      .describe("reshapes lhs to the shape of rhs")
      .arguments({"lhs", "rhs"})
      .layout(layoutFixed(1, false))
      .setPattern(kInjective)
      .shape([](ShapeCtx &c) {
        if (!c.in[1].rankKnown())
          return;
        checkSameCount(c, c.in[0], c.in[1]);
        c.assignOut(0, c.in[1]);
      })
      .symbolic(symLikeInputs({1}))
      .lowerSymbolic([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &) {
        return std::vector<loop::ComputeRef>{reshapeCompute(in[0], shapes[0])};
      })
      .kernel(copyKernel)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("reshape_like", n->name + "_grad_0", {g[0], n->inputs[0]}),
                                      mk("zeros_like", n->name + "_grad_1", {n->inputs[1]})};
      });

  r.add("transpose")
      .symbolic(symTranspose)
      .describe("permutes axes; () reverses them")
      .param("axes", ParamKind::Tuple, "()", "the permutation")
      .layout(layoutFixed(1, false))
      .setPattern(kInjective)
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        const Shape &d = c.in[0];
        const auto &ax = c.attrs.getTuple("axes");
        int nd = static_cast<int>(d.size());
        Shape o(nd);
        if (ax.empty()) {
          for (int i = 0; i < nd; ++i)
            o[i] = d[nd - 1 - i];
        } else {
          if (static_cast<int>(ax.size()) != nd)
            c.error(cat("axes ", shapeToTuple(ax), " must list all ", nd, " axes"));
          std::vector<bool> seen(nd, false);
          for (int i = 0; i < nd; ++i) {
            int a = normalizeAxis(ax[i], nd, cat("operator ", c.node));
            if (seen[a])
              c.error(cat("axes ", shapeToTuple(ax), " repeat axis ", a));
            seen[a] = true;
            o[i] = d[a];
          }
        }
        c.assignOut(0, o);
      })
      .lowerSymbolic([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &types) {
        loop::ComputeRef x = in[0];
        const auto &ax = a.getTuple("axes");
        int nd = static_cast<int>(x->shape.size());
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &i) {
              std::vector<loop::Expr> idx(nd);
              for (int d = 0; d < nd; ++d)
                idx[ax.empty() ? nd - 1 - d : normalizeAxis(ax[d], nd, "transpose")] = i[d];
              return loop::read(x, idx);
            },
            "compute", "injective", "ax")};
      })
      .kernel(transposeKernel)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // The inverse permutation (NNVM reused the forward axes, right only when self-inverse).
        const auto &axes = n->parsed.getTuple("axes");
        std::vector<int64_t> inv(axes.size());
        for (size_t i = 0; i < axes.size(); ++i)
          inv[axes[i] < 0 ? axes[i] + static_cast<int64_t>(axes.size()) : axes[i]] =
              static_cast<int64_t>(i);
        AttrDict a;
        if (!axes.empty())
          a.emplace_back("axes", shapeToTuple(inv));
        return std::vector<NodeEntry>{mk("transpose", n->name + "_t", {g[0]}, a)};
      });

  OpDef &concat =
      r.add("concatenate")
          .symbolic(symConcatenate)
          .describe("joins inputs along an axis")
          .param("axis", ParamKind::Int, "1", "the axis")
          .layout(layoutConcatenate)
          .setPattern(kInjective)
          .shape([](ShapeCtx &c) {
            Shape o;
            int axis = 0;
            for (size_t i = 0; i < c.in.size(); ++i)
              if (!c.in[i].rankKnown())
                return;
            int nd = static_cast<int>(c.in[0].size());
            axis = normalizeAxis(c.attrs.getInt("axis"), nd, cat("operator ", c.node));
            o = c.in[0];
            o[axis] = 0;
            for (size_t i = 0; i < c.in.size(); ++i) {
              const Shape &s = c.in[i];
              if (static_cast<int>(s.size()) != nd)
                c.error(cat("input ", i, " has shape ", shapeToList(s), ", rank ", s.size(),
                            " instead of ", nd));
              for (int d = 0; d < nd; ++d)
                if (d != axis && s[d] != c.in[0][d])
                  c.error(cat("input ", i, " has shape ", shapeToList(s), ", which differs from ",
                              shapeToList(c.in[0]), " outside axis ", axis));
              o[axis] += s[axis];
            }
            c.assignOut(0, o);
          })
          // Other axes of any symbolic size; the one joined along is where the inputs start.
          .lowerSymbolic([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                            const std::vector<Shape> &shapes, const std::vector<int> &types) {
            int axis =
                normalizeAxis(a.getInt("axis"), static_cast<int>(shapes[0].size()), "concatenate");
            for (const auto &t : in)
              if (t->shape.isSymbolic() && !t->shape.dim(axis).isConstant())
                fail("concatenate: axis ", axis, " joined along is symbolic (",
                     t->shape.dimText(axis), "); a generic kernel joins along an axis of sizes");
            return std::vector<loop::ComputeRef>{loop::compute(
                shapes[0], types[0],
                [&](const std::vector<loop::Expr> &i) {
                  // The last input, then each earlier one where the index falls before it.
                  std::vector<int64_t> start;
                  int64_t at = 0;
                  for (const auto &t : in) {
                    start.push_back(at);
                    at += t->shape[axis];
                  }
                  auto piece = [&](size_t k) {
                    std::vector<loop::Expr> idx = i;
                    idx[axis] = i[axis] - start[k];
                    return loop::read(in[k], idx);
                  };
                  loop::Expr v = piece(in.size() - 1);
                  for (size_t k = in.size() - 1; k-- > 0;)
                    v = loop::call("tvm_if_then_else",
                                   {loop::lt(i[axis], loop::intImm(start[k + 1])), piece(k), v},
                                   types[0]);
                  return v;
                },
                "compute", "injective", "ax")};
          })
          .kernel(
              [](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
                int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(out[0].shape.size()),
                                         "concatenate");
                int64_t at = 0;
                for (const Tensor *t : in) {
                  copyAlongAxis(*t, out[0], axis, 0, at, t->shape[axis]);
                  at += t->shape[axis];
                }
              });
  concat.variadic = true;
  concat.grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
    // One node cuts g back into the inputs' pieces (it reads the inputs for their sizes).
    std::vector<NodeEntry> in = {g[0]};
    in.insert(in.end(), n->inputs.begin(), n->inputs.end());
    NodeEntry cut = mk("_concatenate_grad", n->name + "_grad", in,
                       {{"axis", std::to_string(n->parsed.getInt("axis"))},
                        {"num_args", std::to_string(n->inputs.size())}});
    std::vector<NodeEntry> out;
    for (uint32_t k = 0; k < n->inputs.size(); ++k)
      out.push_back(outOf(cut.node, k));
    return out;
  });

  OpDef &concatGrad =
      r.add("_concatenate_grad")
          .describe("gradient of concatenate: ograd cut into pieces shaped like the inputs")
          .param("axis", ParamKind::Int, "1", "the concatenation axis")
          .param("num_args", ParamKind::Int, std::nullopt, "number of concatenated inputs")
          .setPattern(kOpaque)
          .shape([](ShapeCtx &c) {
            if (c.attrs.getInt("num_args") + 1 != static_cast<int64_t>(c.in.size()))
              c.error(cat("num_args is ", c.attrs.getInt("num_args"), " but there are ",
                          c.in.size() - 1, " inputs besides ograd"));
            for (size_t i = 1; i < c.in.size(); ++i)
              if (c.in[i].rankKnown())
                c.assignOut(i - 1, c.in[i]);
          })
          .kernel(
              [](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
                const Tensor &g = *in[0];
                int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(g.shape.size()),
                                         "_concatenate_grad");
                int64_t at = 0;
                for (Tensor &piece : out) {
                  copyAlongAxis(g, piece, axis, at, 0, piece.shape[axis]);
                  at += piece.shape[axis];
                }
              })
          // Each piece reads ograd shifted along the axis by the pieces before it.
          .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                    const std::vector<Shape> &shapes, const std::vector<int> &types) {
            loop::ComputeRef g = in[0];
            int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(g->shape.size()),
                                     "_concatenate_grad");
            std::vector<loop::ComputeRef> out;
            int64_t at = 0;
            for (size_t k = 0; k < shapes.size(); ++k) {
              out.push_back(loop::compute(
                  shapes[k], types[k],
                  [&](const std::vector<loop::Expr> &i) {
                    std::vector<loop::Expr> idx = i;
                    idx[axis] = i[axis] + at;
                    return loop::read(g, idx);
                  },
                  "compute", "injective", "ax"));
              at += shapes[k][axis];
            }
            return out;
          });
  concatGrad.variadic = true;
  // Piece k is shaped like concatenated input k (input k + 1 here, after ograd).
  concatGrad.symbolic(
      [](const SymShapeCtx &c) { return std::vector<SymDims>(c.in.begin() + 1, c.in.end()); });
  concatGrad.arguments({"ograd"});
  concatGrad.numOutputsFn = [](const Attrs &a) {
    return static_cast<uint32_t>(std::max<int64_t>(a.getInt("num_args"), 1));
  };

  OpDef &split =
      r.add("split")
          .describe("splits along an axis into N equal parts or at indices")
          .param("indices_or_sections", ParamKind::Tuple, std::nullopt,
                 "N for N equal parts, or a tuple of split indices")
          .param("axis", ParamKind::Int, "1", "the axis")
          .layout(layoutConcatenate)
          .setPattern(kInjective)
          .symbolic(symSplit)
          .shape([](ShapeCtx &c) {
            if (!c.in[0].rankKnown())
              return;
            int axis = normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()),
                                     cat("operator ", c.node));
            auto pts = splitPoints(c.attrs, c.in[0][axis], &c);
            for (size_t i = 0; i + 1 < pts.size(); ++i) {
              Shape o = c.in[0];
              o[axis] = pts[i + 1] - pts[i];
              c.assignOut(i, o);
            }
          })
          // Other axes of any symbolic size; the one split is cut at sizes.
          .lowerSymbolic([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                            const std::vector<Shape> &shapes, const std::vector<int> &types) {
            loop::ComputeRef x = in[0];
            int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "split");
            if (x->shape.isSymbolic() && !x->shape.dim(axis).isConstant())
              fail("split: axis ", axis, " is symbolic (", x->shape.dimText(axis),
                   "); a generic kernel splits an axis of a size");
            auto pts = splitPoints(a, x->shape[axis], nullptr);
            std::vector<loop::ComputeRef> out;
            for (size_t k = 0; k + 1 < pts.size(); ++k)
              out.push_back(loop::compute(
                  shapes[k], types[k],
                  [&](const std::vector<loop::Expr> &i) {
                    std::vector<loop::Expr> idx = i;
                    idx[axis] = i[axis] + pts[k];
                    return loop::read(x, idx);
                  },
                  "compute", "injective", "ax"));
            return out;
          })
          .kernel([](const Attrs &a, const std::vector<const Tensor *> &in,
                     std::vector<Tensor> &out) {
            const Tensor &x = *in[0];
            int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "split");
            auto pts = splitPoints(a, x.shape[axis], nullptr);
            for (size_t i = 0; i + 1 < pts.size(); ++i)
              copyAlongAxis(x, out[i], axis, pts[i], 0, pts[i + 1] - pts[i]);
          });
  split.numOutputsFn = numSplitOutputs;
  split.grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
    // The pieces' gradients joined back together (unused pieces arrive as zeros).
    return std::vector<NodeEntry>{mk("concatenate", n->name + "_grad", g,
                                     {{"axis", std::to_string(n->parsed.getInt("axis"))}})};
  });

  r.add("expand_dims")
      .symbolic(symExpandDims)
      .describe("inserts num_newaxis axes of size 1 at axis")
      .param("axis", ParamKind::Int, std::nullopt, "where to insert (-ndim-1 … ndim)")
      .param("num_newaxis", ParamKind::Int, "1", "how many axes")
      .layout(layoutFixed(1, false))
      .setPattern(kBroadcast)
      .acceptScalars()
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        int nd = static_cast<int>(c.in[0].size());
        int64_t ax = c.attrs.getInt("axis"), n = c.attrs.getInt("num_newaxis");
        if (ax < -nd - 1 || ax > nd)
          c.error(cat("axis ", ax, " is out of range [", -nd - 1, ", ", nd, "]"));
        if (n < 0)
          c.error("num_newaxis must be non-negative");
        if (ax < 0)
          ax += nd + 1;
        Shape o = c.in[0];
        o.insert(o.begin() + ax, n, 1);
        c.assignOut(0, o);
      })
      .lowerSymbolic([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &) {
        return std::vector<loop::ComputeRef>{reshapeCompute(in[0], shapes[0])};
      })
      .kernel(copyKernel)
      .grad(reshapeGrad(false));

  r.add("shape_of")
      .describe("the input's shape as an int64 vector, dims [start, end) (Relay's shape_of; "
                "start/end as ONNX's Shape, negative counting from the end, clipped)")
      .param("start", ParamKind::Int, "0", "first dim")
      .param("end", ParamKind::Int, "2147483647", "one past the last dim")
      .setPattern(kOpaque)           // reads no element of its input
      .layout(layoutFixed(1, false)) // the shape of the layout the graph was written for
      .symbolic([](const SymShapeCtx &c) {
        // The shape's length is the rank, known however its sizes come.
        auto [start, end] = shapeRange(c.attrs, c.in[0].size());
        if (end <= start)
          c.error(cat("dims [", c.attrs.getInt("start"), ", ", c.attrs.getInt("end"),
                      ") select no dimension"));
        return std::vector<SymDims>{{SymExpr(end - start)}};
      })
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        auto [start, end] = shapeRange(c.attrs, c.in[0].size());
        // An empty range is refused rather than made a 0-length tensor (0 means unknown).
        if (end <= start)
          c.error(cat("dims [", c.attrs.getInt("start"), ", ", c.attrs.getInt("end"), ") of ",
                      shapeToList(c.in[0]), " are empty"));
        c.assignOut(0, {end - start});
      })
      .type([](TypeCtx &c) { c.assignOut(0, kInt64); })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        auto [start, end] = shapeRange(a, in[0]->shape.size());
        for (int64_t d = start; d < end; ++d)
          out[0].data[d - start] = static_cast<double>(in[0]->shape[d]);
      })
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        using namespace loop;
        const Shape &xs = in[0]->shape;
        // Plain variables: Clang 14 cannot capture structured bindings in the lambda below.
        const auto range = shapeRange(a, xs.size());
        const int64_t start = range.first, end = range.second;
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              // A select chain over the few dims: the shape is known when lowering.
              Expr v = constant(static_cast<double>(xs[end - 1]), types[0]);
              for (int64_t d = end - 2; d >= start; --d)
                v = select(eq(i[0], intImm(d - start)),
                           constant(static_cast<double>(xs[d]), types[0]), v);
              return v;
            },
            "compute", "injective", "ax")};
      })
      .grad(zeroGrad);

  r.add("tile")
      .symbolic([](const SymShapeCtx &c) {
        auto [x, reps] = tileAligned(c.in[0], c.attrs.getTuple("reps"));
        for (size_t d = 0; d < x.size(); ++d) {
          if (reps[d] <= 0)
            c.error(cat("reps ", shapeToTuple(c.attrs.getTuple("reps")), " must be positive"));
          x[d] = x[d] * SymExpr(reps[d]);
        }
        return std::vector<SymDims>{x};
      })
      .describe("the input repeated reps[d] times along each axis d (reps shorter than the rank "
                "is padded with leading 1s; longer, the input gains leading axes of 1)")
      .param("reps", ParamKind::Tuple, std::nullopt, "repetitions per axis")
      .layout(layoutFixed(1, false))
      .setPattern(kInjective)
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        auto [x, reps] = tileAligned(c.in[0], c.attrs.getTuple("reps"));
        Shape o;
        for (size_t d = 0; d < x.size(); ++d) {
          if (reps[d] <= 0)
            c.error(cat("reps ", shapeToTuple(c.attrs.getTuple("reps")), " must be positive"));
          // Checked: a huge repetition count overflowed (found by the onnx fuzzer).
          int64_t dim = 0;
          if (__builtin_mul_overflow(x[d], reps[d], &dim) || dim > kMaxElements)
            c.error(cat("axis ", d, " (", x[d], ") repeated ", reps[d],
                        " times has more elements than a tensor may have"));
          o.push_back(dim);
        }
        c.assignOut(0, o);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        Shape x = tileAligned(in[0]->shape, a.getTuple("reps")).first;
        std::vector<int64_t> strides = stridesOf(x);
        int64_t k = 0;
        forEachIndex(out[0].shape, [&](const std::vector<int64_t> &i) {
          int64_t off = 0;
          for (size_t d = 0; d < i.size(); ++d)
            off += strides[d] * (i[d] % x[d]);
          out[0].data[k++] = in[0]->data[off];
        });
      })
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        loop::ComputeRef x = in[0];
        const Shape aligned = tileAligned(x->shape, a.getTuple("reps")).first;
        size_t lead = aligned.size() - x->shape.size();
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &i) {
              std::vector<loop::Expr> src;
              for (size_t d = lead; d < i.size(); ++d)
                src.push_back(i[d] % aligned[d]);
              return loop::read(x, src);
            },
            "compute", "injective", "ax")};
      });

  r.add("expand_like")
      .describe("broadcasts lhs back to rhs's shape over the axes a reduction removed")
      .arguments({"lhs", "rhs"})
      .param("axis", ParamKind::Tuple, "()", "the reduced axes")
      .param("exclude", ParamKind::Bool, "False", "axis lists the kept axes instead")
      .layout(layoutFixed(1, false))
      .setPattern(kBroadcast)
      .shape([](ShapeCtx &c) {
        if (!c.in[1].rankKnown())
          return;
        c.assignOut(0, c.in[1]);
      })
      .symbolic(symLikeInputs({1}))
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        const Shape &ts = out[0].shape;
        int nd = static_cast<int>(ts.size());
        auto axes = reduceAxes(a.getTuple("axis"), a.getBool("exclude"), nd, "expand_like");
        std::vector<bool> red(nd, false);
        for (int ax : axes)
          red[ax] = true;
        // x either kept the reduced axes as 1 (same rank) or dropped them.
        bool sameRank = static_cast<int>(x.shape.size()) == nd;
        int64_t k = 0;
        forEachIndex(ts, [&](const std::vector<int64_t> &idx) {
          int64_t off = 0;
          if (sameRank) {
            off = broadcastOffset(x.shape, idx);
          } else if (x.size() > 1) {
            size_t j = 0;
            for (int d = 0; d < nd; ++d)
              if (!red[d])
                off = off * x.shape[j++] + idx[d];
          }
          out[0].data[k++] = x.data[off];
        });
      })
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        // As the kernel: same rank reads like broadcasting, else the kept axes in order.
        loop::ComputeRef x = in[0];
        int nd = static_cast<int>(shapes[0].size());
        auto axes = reduceAxes(a.getTuple("axis"), a.getBool("exclude"), nd, "expand_like");
        std::vector<bool> red(nd, false);
        for (int ax : axes)
          red[ax] = true;
        bool sameRank = static_cast<int>(x->shape.size()) == nd;
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &i) {
              if (sameRank)
                return loop::read(x, broadcastIndices(x->shape, i));
              std::vector<loop::Expr> idx;
              for (int d = 0; d < nd; ++d)
                if (!red[d])
                  idx.push_back(i[d]);
              if (idx.size() != x->shape.size()) // everything reduced: x holds one value
                idx.assign(x->shape.size(), loop::intImm(0));
              return loop::read(x, idx);
            },
            "compute", "broadcast", "ax")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // Sum g over the expanded axes (keeping them), then reshape like lhs.
        AttrDict a{{"axis", n->parsed.raw("axis")},
                   {"exclude", n->parsed.getBool("exclude") ? "1" : "0"},
                   {"keepdims", "1"}};
        NodeEntry s = mk("sum", n->name + "_grad_sub0", {g[0]}, a);
        return std::vector<NodeEntry>{mk("reshape_like", n->name + "_grad_0", {s, n->inputs[0]}),
                                      mk("zeros_like", n->name + "_grad_1", {n->inputs[1]})};
      });

  r.add("squeeze")
      .symbolic(symSqueeze)
      .describe("removes axes of size 1 (all of them when axis is ())")
      .param("axis", ParamKind::Tuple, "()", "axes to remove")
      .layout(layoutFixed(1, false))
      .setPattern(kInjective)
      .acceptScalars()
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        if (c.in[0].isScalar() && c.attrs.getTuple("axis").empty()) // NumPy: nothing to remove
          return c.assignOut(0, c.in[0]);
        c.assignOut(0, Shape::symbolic(squeezeDims(c, c.in[0].dims())));
      })
      .lowerSymbolic([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &) {
        return std::vector<loop::ComputeRef>{reshapeCompute(in[0], shapes[0])};
      })
      .kernel(copyKernel)
      .grad(reshapeGrad(false));

  r.add("flip")
      .describe("reverses the order of elements along an axis")
      .param("axis", ParamKind::Int, "0", "the axis")
      .layout(layoutFixed(1, false))
      .setPattern(kInjective)
      .shape([](ShapeCtx &c) {
        sameShapeRule(c);
        if (c.in[0].rankKnown())
          normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()),
                        cat("operator ", c.node));
      })
      .symbolic([](const SymShapeCtx &c) {
        normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()),
                      cat("operator ", c.node));
        return symSameShape(c);
      })
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        loop::ComputeRef x = in[0];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "flip");
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &i) {
              std::vector<loop::Expr> idx = i;
              idx[axis] = loop::intImm(x->shape[axis] - 1) - i[axis];
              return loop::read(x, idx);
            },
            "compute", "injective", "ax")};
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "flip");
        auto st = stridesOf(x.shape);
        int64_t k = 0;
        forEachIndex(x.shape, [&](const std::vector<int64_t> &idx) {
          int64_t off = 0;
          for (size_t d = 0; d < idx.size(); ++d)
            off += (static_cast<int>(d) == axis ? x.shape[d] - 1 - idx[d] : idx[d]) * st[d];
          out[0].data[k++] = x.data[off];
        });
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{
            mk("flip", n->name + "_grad", {g[0]}, {{"axis", n->parsed.raw("axis")}})};
      });

  // Inserted by CorrectLayout where a producer's layout differs from what a consumer needs.
  r.add("__layout_transform__")
      .describe("converts data between layouts such as NHWC, NCHW and NCHW16c")
      .param("src_layout", ParamKind::Str, std::nullopt, "the input's layout")
      .param("dst_layout", ParamKind::Str, std::nullopt, "the output's layout")
      .setPattern(kInjective)
      .layout([](const Attrs &a, std::vector<std::string> &in, const std::vector<std::string> &,
                 std::vector<std::string> &out) {
        in[0] = a.getStr("src_layout");
        out[0] = a.getStr("dst_layout");
      })
      .shape([](ShapeCtx &c) {
        try {
          const std::string &src = c.attrs.getStr("src_layout"),
                            &dst = c.attrs.getStr("dst_layout");
          parseLayout(src);
          parseLayout(dst);
          if (shapeKnown(c.in[0]))
            c.assignOut(0, convertLayoutShape(c.in[0], src, dst));
          else if (shapeKnown(c.out[0])) // e.g. a weight whose shape the consumer knows
            c.assignIn(0, convertLayoutShape(c.out[0], dst, src));
        } catch (const Error &e) {
          c.error(e.what());
        }
      })
      .symbolic([](const SymShapeCtx &c) {
        try {
          return std::vector<SymDims>{convertLayoutShape(Shape::symbolic(c.in[0]),
                                                         c.attrs.getStr("src_layout"),
                                                         c.attrs.getStr("dst_layout"))
                                          .dims()};
        } catch (const Error &e) {
          c.error(e.what());
        }
      })
      // The stage reads only the layouts' block factors: a symbolic axis passes through.
      .lowerSymbolic([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &types) {
        return std::vector<loop::ComputeRef>{layoutTransformCompute(
            in[0], a.getStr("src_layout"), a.getStr("dst_layout"), shapes[0], types[0])};
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        out[0] = transformLayout(*in[0], a.getStr("src_layout"), a.getStr("dst_layout"));
      })
      // A pure rearrangement: the gradient is the transform back.
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("__layout_transform__", n->name + "_grad", {g[0]},
                                         {{"src_layout", n->parsed.getStr("dst_layout")},
                                          {"dst_layout", n->parsed.getStr("src_layout")}})};
      });
}

} // namespace loupe::ops
