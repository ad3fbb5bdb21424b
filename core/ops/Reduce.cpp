// Reduce ops: sum, max, min, mean and prod over axes, with NNVM's keepdims/exclude rules.
#include "core/loop/SizeVars.h"
#include "core/ops/OpHelpers.h"

#include <algorithm>

#include <cmath>
#include <limits>

namespace loupe::ops {

namespace {

/// NNVM's reduce shape: all axes reduced → (1,) (or all ones with keepdims); otherwise the
/// reduced axes are dropped, or kept as 1 with keepdims.
Shape reducedShape(const Shape &in, const std::vector<int> &axes, bool keepdims) {
  if (in.isScalar()) // NumPy: a scalar reduces to itself
    return in;
  if (axes.size() == in.size())
    return Shape(keepdims ? in.size() : 1, 1);
  Shape out;
  size_t k = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    bool reduced = k < axes.size() && axes[k] == static_cast<int>(d);
    if (reduced)
      ++k;
    if (!reduced)
      out.push_back(in[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

void reduceShape(ShapeCtx &c) {
  if (!c.in[0].rankKnown())
    return;
  auto axes = reduceAxes(c.attrs.getTuple("axis"), c.attrs.getBool("exclude"),
                         static_cast<int>(c.in[0].size()), c.node);
  c.assignOut(0, reducedShape(c.in[0], axes, c.attrs.getBool("keepdims")));
}

// reduceShape's rule over symbolic dimensions.
std::vector<SymDims> symReduce(const SymShapeCtx &c) {
  const SymDims &in = c.in[0];
  if (in.empty())
    return {in};
  auto axes = reduceAxes(c.attrs.getTuple("axis"), c.attrs.getBool("exclude"),
                         static_cast<int>(in.size()), c.node);
  bool keep = c.attrs.getBool("keepdims");
  if (axes.size() == in.size())
    return {SymDims(keep ? in.size() : 1, SymExpr(1))};
  SymDims out;
  std::vector<bool> reduced(in.size(), false);
  for (int a : axes)
    reduced[a] = true;
  for (size_t d = 0; d < in.size(); ++d)
    if (!reduced[d] || keep)
      out.push_back(reduced[d] ? SymExpr(1) : in[d]);
  return {out};
}

enum class Kind { Sum, Max, Min, Mean, Prod };

// For each element of `x` (row-major), the offset of its reduction group in the output: the
// kept axes, row-major. Also gives the group size.
std::vector<int64_t> reductionGroups(const Attrs &a, const Shape &shape, int64_t *count) {
  int nd = static_cast<int>(shape.size());
  auto axes = reduceAxes(a.getTuple("axis"), a.getBool("exclude"), nd, "reduce");
  std::vector<bool> red(nd, false);
  for (int ax : axes)
    red[ax] = true;
  Shape kept;
  for (int d = 0; d < nd; ++d)
    if (!red[d])
      kept.push_back(shape[d]);
  *count = 1;
  for (int ax : axes)
    *count *= shape[ax];
  std::vector<int64_t> group;
  forEachIndex(shape, [&](const std::vector<int64_t> &idx) {
    int64_t o = 0, j = 0;
    for (int d = 0; d < nd; ++d)
      if (!red[d])
        o = o * kept[j++] + idx[d];
    group.push_back(o);
  });
  return group;
}

ComputeFn reduceKernel(Kind kind) {
  return [kind](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &x = *in[0];
    int64_t count = 1;
    std::vector<int64_t> group = reductionGroups(a, x.shape, &count);
    double init = kind == Kind::Max    ? -std::numeric_limits<double>::infinity()
                  : kind == Kind::Min  ? std::numeric_limits<double>::infinity()
                  : kind == Kind::Prod ? 1.0
                                       : 0.0;
    std::vector<double> acc(out[0].size(), init);
    for (size_t k = 0; k < group.size(); ++k) {
      double v = x.data[k];
      double &r = acc[group[k]];
      switch (kind) {
      case Kind::Sum:
      case Kind::Mean:
        r += v;
        break;
      case Kind::Max:
        r = std::max(r, v);
        break;
      case Kind::Min:
        r = std::min(r, v);
        break;
      case Kind::Prod:
        r *= v;
        break;
      }
    }
    for (size_t i = 0; i < acc.size(); ++i)
      out[0].data[i] = kind == Kind::Mean ? acc[i] / static_cast<double>(count) : acc[i];
  };
}

// _prod_others: each element's group product without that element, exact when the group
// holds zeros (a y / x rewrite would divide by them).
void prodOthersKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                      std::vector<Tensor> &out) {
  const Tensor &x = *in[0];
  int64_t count = 1;
  std::vector<int64_t> group = reductionGroups(a, x.shape, &count);
  int64_t groups = group.empty() ? 0 : *std::max_element(group.begin(), group.end()) + 1;
  std::vector<double> nonzeroProduct(groups, 1.0);
  std::vector<int64_t> zeros(groups, 0);
  for (size_t k = 0; k < group.size(); ++k) {
    if (x.data[k] == 0)
      ++zeros[group[k]];
    else
      nonzeroProduct[group[k]] *= x.data[k];
  }
  for (size_t k = 0; k < group.size(); ++k) {
    int64_t z = zeros[group[k]];
    double p = nonzeroProduct[group[k]];
    out[0].data[k] = z == 0 ? p / x.data[k] : (z == 1 && x.data[k] == 0 ? p : 0.0);
  }
}

// topi's reductions: one stage reducing over k<axis> (mean: then a division stage).
LowerFn reduceLower(Kind kind) {
  return [kind](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
    using namespace loop;
    ComputeRef x = in[0];
    int nd = static_cast<int>(x->shape.size());
    auto axes = reduceAxes(a.getTuple("axis"), a.getBool("exclude"), nd, "reduce");
    std::vector<bool> red(nd, false);
    std::vector<IterVar> r;
    SymExpr count(1); // the terms of a mean: a constant, or an expression of size symbols
    for (int ax : axes) {
      red[ax] = true;
      r.push_back(reduceAxisOver(x->shape, static_cast<size_t>(ax), "k" + std::to_string(ax)));
      count = count * x->shape.dim(static_cast<size_t>(ax));
    }
    bool keep = static_cast<int>(shapes[0].size()) == nd;
    Combiner c = kind == Kind::Max    ? Combiner::Max
                 : kind == Kind::Min  ? Combiner::Min
                 : kind == Kind::Prod ? Combiner::Prod
                                      : Combiner::Sum;
    ComputeRef out = compute(
        shapes[0], types[0],
        [&](const std::vector<Expr> &i) {
          std::vector<Expr> idx;
          size_t j = 0, k = 0;
          for (int d = 0; d < nd; ++d) {
            if (red[d]) {
              idx.push_back(r[k++].var);
              j += keep;
            } else {
              idx.push_back(i[j++]);
            }
          }
          return reduce(c, read(x, idx), r);
        },
        "compute", "reduce", "ax");
    if (kind != Kind::Mean)
      return std::vector<ComputeRef>{out};
    return std::vector<ComputeRef>{compute(
        shapes[0], types[0],
        [&](const std::vector<Expr> &i) {
          return read(out, i) / (count.isConstant()
                                     ? constant(static_cast<double>(count.constant()), types[0])
                                     : cast(types[0], sizeExpr(count)));
        },
        "compute", "elemwise", "ax")};
  };
}

// The reduce attributes as a gradient node's dict, written as NNVM's sum gradient wrote them
// (seed 001 prints them as the map iterates: exclude, then axis).
AttrDict reduceAttrs(const NodePtr &n) {
  return {{"axis", tshapeText(n->parsed.getTuple("axis"))},
          {"exclude", n->parsed.getBool("exclude") ? "1" : "0"}};
}

// `g` (shaped like the reduce output) broadcast back over the reduced axes of the data.
NodeEntry expandBack(const NodePtr &n, const NodeEntry &g, const std::string &name) {
  return mk("expand_like", name, {g, n->inputs[0]}, reduceAttrs(n));
}

// max/min: the gradient flows to the elements equal to the result (NNVM's _max_mask/_min_mask
// rewrite never computed this; Loupe builds the mask from the data).
std::vector<NodeEntry> extremumGrad(const NodePtr &n, const std::vector<NodeEntry> &g) {
  const NodeEntry &x = n->inputs[0];
  NodeEntry y = expandBack(n, outOf(n), n->name + "_grad_sub0");
  NodeEntry lt = mk("less", n->name + "_grad_sub1", {x, y});
  NodeEntry gt = mk("greater", n->name + "_grad_sub2", {x, y});
  NodeEntry off = mk("elemwise_add", n->name + "_grad_sub3", {lt, gt});
  NodeEntry mask = mk("__rsub_scalar__", n->name + "_grad_sub4", {off}, {{"scalar", "1"}});
  NodeEntry gx = expandBack(n, g[0], n->name + "_grad_sub5");
  return {mk("elemwise_mul", n->name + "_grad", {gx, mask})};
}

OpDef &reduceOp(const char *name, const char *doc, Kind kind) {
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .param("axis", ParamKind::Tuple, "()", "axes to reduce; () means all")
      .param("keepdims", ParamKind::Bool, "False", "keep reduced axes as size 1")
      .param("exclude", ParamKind::Bool, "False", "reduce every axis except `axis`")
      .setPattern(kCommReduce)
      .layout(layoutFixed(1, false))
      .acceptScalars()
      .shape(reduceShape)
      .symbolic(symReduce)
      .kernel(reduceKernel(kind))
      .lowerSymbolic(reduceLower(kind));
}

// argmax/argmin: the index of the extreme element along one axis (the first of equal ones, or
// the last with select_last_index), as int64.
// Dims is Shape (the concrete rule) or SymDims (the symbolic one).
template <class Dims> Dims argDims(const Attrs &a, Dims o, const std::string &node) {
  int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(o.size()), node);
  if (a.getBool("keepdims"))
    o[axis] = typename Dims::value_type(1);
  else
    o.erase(o.begin() + axis);
  if (o.empty()) // a vector's index is (1,): 0 means unknown
    o.push_back(typename Dims::value_type(1));
  return o;
}

void argShape(ShapeCtx &c) {
  if (c.in[0].rankKnown())
    c.assignOut(0, argDims(c.attrs, Shape(c.in[0]), c.node));
}

ComputeFn argKernel(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &x = *in[0];
    int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "arg");
    bool last = a.getBool("select_last_index");
    int64_t n = x.shape[axis], inner = 1, outer = 1;
    for (size_t d = axis + 1; d < x.shape.size(); ++d)
      inner *= x.shape[d];
    for (int d = 0; d < axis; ++d)
      outer *= x.shape[d];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        for (int64_t k = 1; k < n; ++k) {
          double v = x.data[(o * n + k) * inner + i], b = x.data[(o * n + best) * inner + i];
          if ((isMax ? v > b : v < b) || (last && v == b))
            best = k;
        }
        out[0].data[o * inner + i] = static_cast<double>(best);
      }
  };
}

// Two reductions: the extreme value along the axis, then the first (min) or last (max) index
// holding it.
LowerFn argLower(bool isMax) {
  return [isMax](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                 const std::vector<Shape> &shapes, const std::vector<int> &types) {
    using namespace loop;
    ComputeRef x = in[0];
    int nd = static_cast<int>(x->shape.size());
    int axis = normalizeAxis(a.getInt("axis"), nd, "arg");
    bool last = a.getBool("select_last_index");
    Shape kept = x->shape;
    kept[axis] = 1;
    auto at = [&](const std::vector<Expr> &i, const Expr &k) {
      std::vector<Expr> idx = i;
      idx[axis] = k;
      return idx;
    };
    IterVar r = reduceAxis(x->shape[axis], "k");
    ComputeRef extreme = compute(
        kept, x->dtype,
        [&](const std::vector<Expr> &i) {
          return reduce(isMax ? Combiner::Max : Combiner::Min, read(x, at(i, r.var)), {r});
        },
        "extreme", "reduce", "ax");
    IterVar r2 = reduceAxis(x->shape[axis], "k");
    ComputeRef index = compute(
        kept, types[0],
        [&](const std::vector<Expr> &i) {
          Expr k = cast(types[0], r2.var);
          Expr miss = constant(last ? -1 : static_cast<double>(x->shape[axis]), types[0]);
          Expr hit = eq(read(x, at(i, r2.var)), read(extreme, i));
          return reduce(last ? Combiner::Max : Combiner::Min, select(hit, k, miss), {r2});
        },
        "index", "reduce", "ax");
    return std::vector<ComputeRef>{reshapeCompute(index, shapes[0])};
  };
}

OpDef &argOp(const char *name, const char *doc, bool isMax) {
  return OpRegistry::get()
      .add(name)
      .describe(doc)
      .param("axis", ParamKind::Int, "0", "the axis searched")
      .param("keepdims", ParamKind::Bool, "False", "keep the axis as size 1")
      .param("select_last_index", ParamKind::Bool, "False", "the last of equal extremes")
      .setPattern(kCommReduce)
      .layout(layoutFixed(1, false))
      .shape(argShape)
      .symbolic([](const SymShapeCtx &c) {
        return std::vector<SymDims>{argDims(c.attrs, c.in[0], c.node)};
      })
      .type([](TypeCtx &c) { c.assignOut(0, kInt64); })
      .kernel(argKernel(isMax))
      .lower(argLower(isMax))
      .grad(zeroGrad);
}

} // namespace

void registerReduceOps() {
  argOp("argmax", "index of the largest element along axis (int64)", true);
  argOp("argmin", "index of the smallest element along axis (int64)", false);
  reduceOp("sum", "sum over axes", Kind::Sum)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{expandBack(n, g[0], n->name + "_grad")};
      });
  reduceOp("max", "maximum over axes", Kind::Max).grad(extremumGrad);
  reduceOp("min", "minimum over axes", Kind::Min).grad(extremumGrad);
  reduceOp("mean", "mean over axes", Kind::Mean)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g / count, broadcast back; the count is the same reduction of ones.
        NodeEntry ones = mk("ones_like", n->name + "_grad_sub0", {n->inputs[0]});
        AttrDict a = reduceAttrs(n);
        a.emplace_back("keepdims", n->parsed.getBool("keepdims") ? "1" : "0");
        NodeEntry count = mk("sum", n->name + "_grad_sub1", {ones}, a);
        NodeEntry q = mk("elemwise_div", n->name + "_grad_sub2", {g[0], count});
        return std::vector<NodeEntry>{expandBack(n, q, n->name + "_grad")};
      });
  reduceOp("prod", "product over axes", Kind::Prod)
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // d prod / d x_i = product of the others in x_i's group.
        AttrDict a = reduceAttrs(n);
        NodeEntry others = mk("_prod_others", n->name + "_grad_sub0", {n->inputs[0]}, a);
        NodeEntry gx = expandBack(n, g[0], n->name + "_grad_sub1");
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {gx, others})};
      });
  OpRegistry::get()
      .add("_prod_others")
      .describe("for prod's gradient: each element's group product without that element")
      .param("axis", ParamKind::Tuple, "()", "the axes prod reduced")
      .param("exclude", ParamKind::Bool, "False", "axis lists the kept axes instead")
      .setPattern(kOpaque)
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .kernel(prodOthersKernel)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        // As the kernel: per group, the count of zeros and the product of the non-zeros; then
        // each element's product of the others from those two.
        using namespace loop;
        ComputeRef x = in[0];
        int nd = static_cast<int>(x->shape.size()), dt = types[0];
        auto axes = reduceAxes(a.getTuple("axis"), a.getBool("exclude"), nd, "_prod_others");
        std::vector<bool> red(nd, false);
        for (int ax : axes)
          red[ax] = true;
        Shape kept = x->shape;
        for (int ax : axes)
          kept[ax] = 1;
        auto groupStage = [&](Combiner c, const std::function<Expr(const Expr &)> &term) {
          std::vector<IterVar> r;
          for (int ax : axes)
            r.push_back(reduceAxis(x->shape[ax], "k" + std::to_string(ax)));
          return compute(
              kept, dt,
              [&](const std::vector<Expr> &i) {
                std::vector<Expr> idx;
                size_t k = 0;
                for (int d = 0; d < nd; ++d)
                  idx.push_back(red[d] ? r[k++].var : i[d]);
                return reduce(c, term(read(x, idx)), r);
              },
              "compute", "reduce", "ax");
        };
        Expr zero = constant(0, dt), one = constant(1, dt);
        ComputeRef zeros = groupStage(
            Combiner::Sum, [&](const Expr &v) { return select(eq(v, zero), one, zero); });
        ComputeRef prod =
            groupStage(Combiner::Prod, [&](const Expr &v) { return select(eq(v, zero), one, v); });
        return std::vector<ComputeRef>{compute(
            shapes[0], dt,
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> g = broadcastIndices(kept, i);
              Expr z = read(zeros, g), p = read(prod, g), v = read(x, i);
              return select(eq(z, zero), p / v, select(land(eq(z, one), eq(v, zero)), p, zero));
            },
            "compute", "injective", "ax")};
      });
}

} // namespace loupe::ops
