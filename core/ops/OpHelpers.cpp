// OpHelpers: implementations of the shared shape rules and kernel builders.
#include "core/ops/OpHelpers.h"

#include "core/loop/SizeVars.h"

#include <algorithm>
#include <thread>

#include "core/Layout.h"

#include <algorithm>
#include <cctype>

namespace loupe::ops {

void sameShapeRule(ShapeCtx &c) {
  // Merge every known (possibly partial) shape into one, input by input, so a conflict is
  // reported against the input that disagrees.
  Shape known;
  for (size_t i = 0; i < c.in.size(); ++i) {
    if (known.rankKnown())
      c.assignIn(i, known);
    if (c.in[i].rankKnown())
      known = c.in[i];
  }
  for (size_t i = 0; i < c.out.size(); ++i) {
    if (known.rankKnown())
      c.assignOut(i, known);
    if (c.out[i].rankKnown())
      known = c.out[i];
  }
  if (!known.rankKnown())
    return;
  for (size_t i = 0; i < c.in.size(); ++i)
    c.assignIn(i, known);
  for (size_t i = 0; i < c.out.size(); ++i)
    c.assignOut(i, known);
}

OpDef &unaryOp(const char *name, const char *doc, std::function<double(double)> f) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .setPattern(kElemWise)
                  .acceptScalars()
                  .shape(sameShapeRule)
                  .symbolic(symSameShape)
                  .kernel(unaryKernel(std::move(f)))
                  .layout(layoutArbitrary);
  // NNVM's unary elementwise ops may write into their input (FInplaceOption {0, 0}).
  op.inplace = {{0, 0}};
  return op;
}

OpDef &unaryMathOp(const char *name, const char *doc, std::function<double(double)> ref,
                   ElementLower f) {
  return unaryOp(name, doc, std::move(ref)).lowerSymbolic(elementwiseLower(std::move(f)));
}

OpDef &unaryMathAttrOp(const char *name, const char *doc,
                       std::function<double(double, const Attrs &)> ref, ElementLower f) {
  OpDef &op = unaryOp(name, doc, nullptr);
  op.kernel(unaryAttrKernel(std::move(ref))).lowerSymbolic(elementwiseLower(std::move(f)));
  return op;
}

std::vector<NodeEntry> zeroGrad(const NodePtr &n, const std::vector<NodeEntry> &) {
  std::vector<NodeEntry> out;
  for (size_t i = 0; i < n->inputs.size(); ++i)
    out.push_back(mk("zeros_like",
                     n->name + (n->inputs.size() == 1 ? "_grad" : "_grad_" + std::to_string(i)),
                     {n->inputs[i]}));
  return out;
}

void broadcastBinaryShape(ShapeCtx &c) {
  if (!c.in[0].rankKnown() || !c.in[1].rankKnown())
    return;
  c.assignOut(0, broadcastShape(c, c.in[0], c.in[1]));
}

NodeEntry mk(const std::string &op, const std::string &name, std::vector<NodeEntry> inputs,
             AttrDict attrs) {
  const OpDef *def = OpRegistry::get().find(op);
  if (!def)
    fail("internal: gradient uses unknown op ", op);
  return {makeOpNode(*def, name, std::move(attrs), std::move(inputs), {}, false), 0, 0};
}

NodeEntry GradBuilder::scalar(const char *name, const NodeEntry &x, double v) {
  return op(name, {x}, {{"scalar", pyFloatRepr(v)}});
}

NodeEntry GradBuilder::fill(const NodeEntry &like, double v) {
  return op("full_like", {like}, {{"fill_value", pyFloatRepr(v)}});
}

std::string tshapeText(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

namespace {
const std::string kUndef = "__undef__";
bool defined(const std::string &l) { return !l.empty() && l != kUndef; }
} // namespace

void layoutArbitrary(const Attrs &, std::vector<std::string> &in, const std::vector<std::string> &,
                     std::vector<std::string> &out) {
  std::string l = in.empty() ? kUndef : in[0];
  for (const auto &x : in)
    if (x != l)
      fail("inputs have different layouts ", l, " and ", x);
  if (defined(l))
    for (auto &o : out)
      o = l;
}

void layoutKeepLeft(const Attrs &, std::vector<std::string> &in,
                    const std::vector<std::string> &last, std::vector<std::string> &out) {
  std::string &lhs = in[0], &rhs = in[1];
  if (!defined(lhs) && !defined(rhs))
    return;
  if (!defined(lhs))
    lhs = rhs;
  else if (!defined(rhs) || rhs != lhs)
    rhs = lhs; // the right side is converted to the left's layout
  out[0] = lhs;
  (void)last;
}

void layoutBroadcast(const Attrs &, std::vector<std::string> &in,
                     const std::vector<std::string> &last, std::vector<std::string> &out) {
  std::string &lhs = in[0], &rhs = in[1];
  if (defined(lhs) && defined(rhs)) {
    if (lhs != rhs) {
      // Keep the left layout when the right one is its trailing part (NCHW with CHW or W).
      bool suffix =
          lhs.size() >= rhs.size() && lhs.compare(lhs.size() - rhs.size(), rhs.size(), rhs) == 0;
      if (!suffix) {
        // The same primal axes, blocked differently (NCHW and NCHW16c, as a residual add of a
        // blocked convolution and its input): as NNVM's broadcast rule, one side is converted,
        // here to the blocked one, so that the result stays in the fast layout.
        if (primalLayout(lhs) != primalLayout(rhs))
          fail("broadcast between layouts ", lhs, " and ", rhs, " is not supported");
        if (parseLayout(rhs).size() > parseLayout(lhs).size())
          lhs = rhs;
        else
          rhs = lhs;
      }
    }
    out[0] = lhs;
  } else if (defined(lhs) && defined(last[0])) {
    lhs = last[0];
  } else if (defined(rhs) && defined(last[1])) {
    rhs = last[1];
  }
}

CorrectLayoutFn layoutFixed(size_t n, bool copy) {
  return [n, copy](const Attrs &, std::vector<std::string> &in,
                   const std::vector<std::string> &last, std::vector<std::string> &out) {
    size_t k = std::min(n, in.size());
    auto firstDefined = [&](const std::vector<std::string> &v) {
      for (size_t i = 0; i < k; ++i)
        if (defined(v[i]))
          return v[i];
      return kUndef;
    };
    // As NNVM's ElemwiseFixedLayout: the last run's layout wins, so that CorrectLayout
    // transforms an altered input back to what the op was written for.
    std::string cur = firstDefined(last);
    if (!defined(cur))
      cur = firstDefined(in);
    if (defined(cur))
      for (size_t i = 0; i < k; ++i)
        in[i] = cur;
    if (copy && defined(cur))
      for (auto &o : out)
        o = cur;
  };
}

namespace {
// The dimension letters of a layout ("NCHW8c" -> "NCHWc"); empty when undefined.
std::string layoutAxes(const std::string &l) {
  std::string axes;
  if (defined(l))
    for (const LayoutAxis &x : parseLayout(l))
      axes += x.name;
  return axes;
}
} // namespace

void layoutConcatenate(const Attrs &a, std::vector<std::string> &in,
                       const std::vector<std::string> &last, std::vector<std::string> &out) {
  if (in.empty())
    return;
  std::string layout;
  std::string cur = layoutAxes(in[0]), prev = layoutAxes(last[0]);
  int64_t axis = a.getInt("axis");
  if (axis < 0)
    axis += static_cast<int64_t>(cur.size());
  if (!defined(in[0]))
    layout = last[0];
  else if (axis < 0 || axis >= static_cast<int64_t>(cur.size()))
    layout = last[0]; // the axis does not exist in the current layout: go back
  else if (defined(last[0]) && axis < static_cast<int64_t>(prev.size()) &&
           cur[static_cast<size_t>(axis)] != prev[static_cast<size_t>(axis)])
    layout = last[0]; // the axis would join a different dimension than the program meant
  else
    layout = in[0];
  // The first input's layout unknown (a reshape's output), another's blocked (a convolution's
  // NCHW8c under AlterOpLayout): every input in that one's primal layout, so the blocked one is
  // transformed back instead of concatenated with a tensor of another rank.
  for (size_t k = 1; k < in.size() && !defined(layout); ++k)
    if (defined(in[k]))
      layout = primalLayout(in[k]);
  if (!defined(layout))
    return;
  // split's indices count elements of the primal axis, so a split axis that the layout blocks
  // (C in NCHW16c) is split in the primal layout. (Concatenating blocked tensors along their
  // outer block axis is concatenating their channels.)
  if (a.given("indices_or_sections") && axis >= 0 &&
      axis < static_cast<int64_t>(layoutAxes(layout).size())) {
    char letter = layoutAxes(layout)[static_cast<size_t>(axis)];
    for (const LayoutAxis &x : parseLayout(layout))
      if (x.factor != 0 && std::toupper(static_cast<unsigned char>(x.name)) == letter)
        layout = primalLayout(layout);
  }
  for (auto &l : in)
    l = layout;
  out[0] = layout;
}

bool nchwInput(ShapeCtx &c) {
  if (c.attrs.getStr("layout") != "NCHW")
    c.error(cat("layout '", c.attrs.getStr("layout"), "' is not supported (only NCHW)"));
  if (!c.in[0].rankKnown())
    return false;
  if (c.in[0].size() != 4)
    c.error(cat("data must be 4-D (NCHW), got ", shapeToList(c.in[0])));
  return true;
}

std::vector<std::string> dataWeightBias(const Attrs &a) {
  if (a.getBool("use_bias"))
    return {"data", "weight", "bias"};
  return {"data", "weight"};
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b) {
  size_t n = std::max(a.size(), b.size());
  if (n == 0) // two scalars: NumPy's () * () is ()
    return Shape::scalar();
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    // A 0 is a size not known yet (a symbolic one): the other side's, unless that is 1.
    if (da == 0 || db == 0)
      out[i] = da == 1 || db == 1 ? 0 : std::max(da, db);
    else if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      return std::nullopt;
  }
  return out;
}

std::vector<SymDims> symSameShape(const SymShapeCtx &c) {
  return std::vector<SymDims>(c.numOutputs, c.in[0]);
}

SymDims symBroadcast(const SymShapeCtx &c, const SymDims &a, const SymDims &b) {
  size_t n = std::max(a.size(), b.size());
  SymDims out(n);
  for (size_t i = 0; i < n; ++i) {
    SymExpr da = i < n - a.size() ? SymExpr(1) : a[i - (n - a.size())];
    SymExpr db = i < n - b.size() ? SymExpr(1) : b[i - (n - b.size())];
    if (da == db || db == SymExpr(1))
      out[i] = da;
    else if (da == SymExpr(1))
      out[i] = db;
    else if (da.isConstant() != db.isConstant())
      // A symbol against a size other than 1: broadcasting holds only where the symbol is that
      // size, which the run checks; the shape is the constant's.
      out[i] = da.isConstant() ? da : db;
    else
      c.error(cat("dimensions ", da.str(), " and ", db.str(),
                  " cannot be broadcast (they may differ, and neither is 1)"));
  }
  return out;
}

SymShapeFn symLikeInputs(std::vector<size_t> inputs) {
  return [inputs](const SymShapeCtx &c) {
    std::vector<SymDims> out;
    for (size_t k = 0; k < c.numOutputs; ++k) {
      if (k < inputs.size())
        out.push_back(c.in.at(inputs[k]));
      else
        out.push_back({SymExpr(c.attrs.getInt("channels"))});
    }
    return out;
  };
}

std::vector<SymDims> symBroadcastBinary(const SymShapeCtx &c) {
  return {symBroadcast(c, c.in[0], c.in[1])};
}

Shape broadcastShape(ShapeCtx &c, const Shape &a, const Shape &b) {
  std::optional<Shape> out = broadcastShapes(a, b);
  if (!out)
    c.error(cat("shapes ", shapeToList(a), " and ", shapeToList(b), " cannot be broadcast"));
  return *out;
}

void forEachLine(const Shape &s, int axis,
                 const std::function<void(int64_t, int64_t, int64_t)> &fn) {
  int64_t inner = 1, outer = 1;
  for (size_t d = axis + 1; d < s.size(); ++d)
    inner *= s[d];
  for (int d = 0; d < axis; ++d)
    outer *= s[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      fn(o * s[axis] * inner + i, inner, s[axis]);
}

void forEachIndex(const Shape &shape, const std::function<void(const std::vector<int64_t> &)> &fn) {
  int64_t total = numElements(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < total; ++k) {
    fn(idx);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

int64_t broadcastOffset(const Shape &shape, const std::vector<int64_t> &idx) {
  int64_t off = 0;
  size_t skip = idx.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i = shape[d] == 1 ? 0 : idx[d + skip];
    off = off * shape[d] + i;
  }
  return off;
}

ComputeFn unaryKernel(std::function<double(double)> f) {
  return [f](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    for (int64_t i = 0; i < out[0].size(); ++i)
      out[0].data[i] = f(in[0]->data[i]);
  };
}

ComputeFn unaryAttrKernel(std::function<double(double, const Attrs &)> f) {
  return [f](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    for (int64_t i = 0; i < out[0].size(); ++i)
      out[0].data[i] = f(in[0]->data[i], a);
  };
}

ComputeFn binaryBroadcastKernel(std::function<double(double, double)> f) {
  return [f](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &a = *in[0], &b = *in[1];
    int64_t k = 0;
    forEachIndex(out[0].shape, [&](const std::vector<int64_t> &idx) {
      out[0].data[k++] =
          f(a.data[broadcastOffset(a.shape, idx)], b.data[broadcastOffset(b.shape, idx)]);
    });
  };
}

std::vector<int> reduceAxes(const std::vector<int64_t> &axis, bool exclude, int ndim,
                            const std::string &what) {
  std::vector<int> r;
  if (axis.empty()) {
    for (int i = 0; i < ndim; ++i)
      r.push_back(i);
    return r;
  }
  std::vector<bool> in(ndim, false);
  for (int64_t a : axis)
    in[normalizeAxis(a, ndim, what)] = true;
  for (int i = 0; i < ndim; ++i)
    if (in[i] != exclude)
      r.push_back(i);
  return r;
}

Tensor transformLayout(const Tensor &t, const std::string &src, const std::string &dst) {
  LayoutSourceMap map(t.shape, src, dst);
  Tensor r(map.dstShape(), t.dtype);
  double *out = r.data.data();
  map.forEachSource([&](int64_t s) { *out++ = t.data[s]; });
  return r;
}

LowerFn elementwiseLower(ElementLower f, const std::string &tag) {
  return [f, tag](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                  const std::vector<Shape> &shapes, const std::vector<int> &types) {
    loop::ComputeRef x = in[0];
    return std::vector<loop::ComputeRef>{loop::compute(
        shapes[0], types[0],
        [&](const std::vector<loop::Expr> &i) { return f(loop::read(x, i), a); }, "compute", tag)};
  };
}

std::vector<loop::Expr> broadcastIndices(const Shape &in, const std::vector<loop::Expr> &out) {
  std::vector<loop::Expr> idx;
  size_t base = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    idx.push_back(in[d] == 1 ? loop::intImm(0) : out[base + d]);
  return idx;
}

LowerFn broadcastLower(std::function<loop::Expr(const loop::Expr &, const loop::Expr &)> f,
                       const std::string &tag) {
  return [f, tag](const Attrs &, const std::vector<loop::ComputeRef> &in,
                  const std::vector<Shape> &shapes, const std::vector<int> &types) {
    loop::ComputeRef a = in[0], b = in[1];
    return std::vector<loop::ComputeRef>{loop::compute(
        shapes[0], types[0],
        [&](const std::vector<loop::Expr> &i) {
          return f(loop::read(a, broadcastIndices(a->shape, i)),
                   loop::read(b, broadcastIndices(b->shape, i)));
        },
        "compute", tag)};
  };
}

std::pair<loop::Expr, loop::Expr> exactQuotient(const loop::Expr &v, int64_t s, int64_t n) {
  using namespace loop;
  Expr q = v / s;
  Expr cond = land(le(intImm(0), v), lt(q, intImm(n)));
  if (s != 1)
    cond = land(cond, eq(v % s, intImm(0)));
  return {q, cond};
}

loop::Expr boolToValue(const loop::Expr &cond, int dtype) {
  return loop::select(cond, loop::constant(1, dtype), loop::constant(0, dtype));
}

std::pair<int64_t, int64_t> shapeRange(const Attrs &a, size_t rank) {
  auto r = static_cast<int64_t>(rank);
  auto clip = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
  return {clip(a.getInt("start")), clip(a.getInt("end"))};
}

loop::ComputeRef padCompute(const loop::ComputeRef &x, const std::vector<int64_t> &before,
                            const std::vector<int64_t> &after, double value,
                            const std::string &name) {
  // A symbolic axis (a generic kernel's) pads as its expression; its bounds test reads it.
  SymDims dims = x->shape.dims();
  for (size_t d = 0; d < dims.size(); ++d)
    dims[d] = dims[d] + SymExpr(before[d] + after[d]);
  Shape shape = Shape::symbolic(dims);
  return loop::compute(
      shape, x->dtype,
      [&](const std::vector<loop::Expr> &i) {
        loop::Expr cond;
        std::vector<loop::Expr> idx;
        for (size_t d = 0; d < i.size(); ++d) {
          idx.push_back(i[d] - before[d]);
          if (before[d] == 0 && after[d] == 0)
            continue;
          // Left-nested as topi's all() built it: ((a && b) && c) && d.
          loop::Expr lo = loop::le(loop::intImm(before[d]), i[d]),
                     hi = loop::lt(i[d], dims[d].isConstant()
                                             ? loop::intImm(before[d] + x->shape[d])
                                             : loop::dimExtent(x->shape, d) + before[d]);
          cond = cond ? loop::land(loop::land(cond, lo), hi) : loop::land(lo, hi);
        }
        loop::Expr v = loop::read(x, idx);
        if (!cond)
          return v;
        return loop::call("tvm_if_then_else", {cond, v, loop::constant(value, x->dtype)}, x->dtype);
      },
      name, "pad");
}

loop::ComputeRef reshapeCompute(const loop::ComputeRef &x, const Shape &shape,
                                const std::string &name) {
  // Symbolic shapes (a generic kernel's) index with their dimensions' expressions.
  auto dim = [](const Shape &s, size_t d) { return loop::dimExtent(s, d); };
  return loop::compute(
      shape, x->dtype,
      [&](const std::vector<loop::Expr> &i) {
        loop::Expr flat = loop::intImm(0);
        for (size_t d = 0; d < i.size(); ++d)
          flat = shape.isSymbolic() ? flat * dim(shape, d) + i[d] : flat * shape[d] + i[d];
        std::vector<loop::Expr> idx(x->shape.size());
        for (size_t d = x->shape.size(); d-- > 0;) {
          if (x->shape.isSymbolic()) {
            idx[d] = d == 0 ? flat : flat % dim(x->shape, d);
            flat = flat / dim(x->shape, d);
          } else {
            idx[d] = d == 0 ? flat : flat % x->shape[d];
            flat = flat / x->shape[d];
          }
        }
        return loop::read(x, idx);
      },
      name, "injective", "ax");
}

void parallelParts(int64_t count, int64_t work, const std::function<void(int64_t, int64_t)> &part) {
  // About a million multiply-adds per thread at least (a thread costs tens of microseconds).
  int64_t threads = std::min<int64_t>({std::max(1u, std::thread::hardware_concurrency()), 16, count,
                                       std::max<int64_t>(1, work >> 20)});
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t)
    pool.emplace_back(part, count * t / threads, count * (t + 1) / threads);
  part(0, count / std::max<int64_t>(threads, 1));
  for (std::thread &t : pool)
    t.join();
}

int64_t innerSize(const Shape &s, int axis) {
  int64_t inner = 1;
  for (size_t d = axis + 1; d < s.size(); ++d)
    inner *= s[d];
  return inner;
}

loop::ComputeRef
channelSum(const Shape &shape, int axis, int dtype,
           const std::function<loop::Expr(const std::vector<loop::Expr> &)> &term) {
  using namespace loop;
  std::vector<IterVar> r;
  for (size_t d = 0; d < shape.size(); ++d)
    if (static_cast<int>(d) != axis)
      r.push_back(reduceAxis(shape[d], "k" + std::to_string(d)));
  return compute(
      {shape[axis]}, dtype,
      [&](const std::vector<Expr> &c) {
        std::vector<Expr> idx;
        size_t k = 0;
        for (size_t d = 0; d < shape.size(); ++d)
          idx.push_back(static_cast<int>(d) == axis ? c[0] : r[k++].var);
        return reduce(Combiner::Sum, term(idx), r);
      },
      "compute", "reduce", "ax");
}

void requireInteger(const TypeCtx &c, size_t k, const char *what) {
  int t = c.in[k];
  if (t != -1 && (dtypeIsFloat(t) || t == kInt64 || t == kUint64 || t == kBoolean))
    fail("operator ", c.node, " (", c.op, "): ", what, " (input ", k,
         ") must be of an integer type up to 32 bits, got ", dtypeName(t));
}

} // namespace loupe::ops
