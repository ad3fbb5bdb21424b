// Ops that read a whole axis for each element: cumsum (running sums, ONNX's CumSum) and topk
// (the k largest or smallest along an axis with their indices, ONNX's TopK).
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <numeric>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

std::vector<Expr> withAxis(std::vector<Expr> i, int axis, const Expr &k) {
  i[axis] = k;
  return i;
}

void registerCumsum() {
  OpRegistry::get()
      .add("cumsum")
      .describe("running sums along `axis`: element j sums elements 0 … j (j+1 … n-1 reversed; "
                "without j itself when exclusive)")
      .param("axis", ParamKind::Int, "0", "the axis summed along")
      .param("exclusive", ParamKind::Bool, "False", "leave out the element itself")
      .param("reverse", ParamKind::Bool, "False", "sum from the end of the axis")
      .setPattern(kOpaque) // each element reduces a prefix of the axis
      .layout(layoutFixed(1, false))
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "cumsum");
        bool exclusive = a.getBool("exclusive"), reverse = a.getBool("reverse");
        // The running sum in the type a kernel keeps it in: bfloat16's in float32 (each output
        // rounded once), the others' in their own.
        int acc = widenedDType(x.dtype);
        forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
          double sum = 0;
          for (int64_t step = 0; step < n; ++step) {
            int64_t at = base + (reverse ? n - 1 - step : step) * stride;
            if (!exclusive)
              sum = roundToDType(sum + x.data[at], acc);
            out[0].data[at] = roundToDType(sum, x.dtype);
            if (exclusive)
              sum = roundToDType(sum + x.data[at], acc);
          }
        });
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0];
        int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x->shape.size()), "cumsum");
        bool exclusive = a.getBool("exclusive"), reverse = a.getBool("reverse");
        IterVar k = reduceAxis(x->shape[axis], "k");
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              const Expr &j = i[axis];
              Expr in = reverse ? (exclusive ? gt(k.var, j) : ge(k.var, j))
                                : (exclusive ? lt(k.var, j) : le(k.var, j));
              return reduce(Combiner::Sum,
                            select(in, read(x, withAxis(i, axis, k.var)), constant(0, types[0])),
                            {k});
            },
            "compute", "reduce", "ax")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // Each input element is counted by the sums of the other direction.
        const Attrs &p = n->parsed;
        AttrDict a = {{"axis", std::to_string(p.getInt("axis"))},
                      {"exclusive", p.getBool("exclusive") ? "True" : "False"},
                      {"reverse", p.getBool("reverse") ? "False" : "True"}};
        return std::vector<NodeEntry>{mk("cumsum", n->name + "_grad", {g[0]}, a)};
      });
}

// topk's axis, checked to hold k elements.
int topkAxis(const Attrs &a, const Shape &x, const std::string &what) {
  int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.size()), what);
  if (a.getInt("k") < 1 || a.getInt("k") > x[axis])
    fail(what, ": k ", a.getInt("k"), " must be 1 … ", x[axis], " (the size of axis ", axis, ")");
  return axis;
}

// Whether element (v, at index p) comes before (w, at q) in topk's order: larger (or smaller)
// first, equal ones by lower index.
bool before(double v, int64_t p, double w, int64_t q, bool largest) {
  if (v != w)
    return largest ? v > w : v < w;
  return p < q;
}

void registerTopk() {
  OpRegistry::get()
      .add("topk")
      .describe("the k largest (or smallest) elements along `axis`, in order, and their "
                "indices; equal elements by lower index first (ONNX's TopK)")
      .param("k", ParamKind::Int, std::nullopt, "how many elements")
      .param("axis", ParamKind::Int, "-1", "the axis searched")
      .param("largest", ParamKind::Bool, "True", "the largest (else the smallest)")
      .setPattern(kOpaque) // every output ranks a whole axis
      .outputs(2)
      .layout(layoutFixed(1, false))
      .type([](TypeCtx &c) {
        if (c.in[0] != -1)
          c.assignOut(0, c.in[0]);
        c.assignOut(1, kInt64);
      })
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        Shape o = c.in[0];
        o[topkAxis(c.attrs, c.in[0], c.node)] = c.attrs.getInt("k");
        c.assignOut(0, o);
        c.assignOut(1, o);
      })
      .symbolic([](const SymShapeCtx &c) {
        // k along the axis; a symbolic axis at least k long is the run's to check.
        SymDims o = c.in[0];
        int axis = normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(o.size()), c.node);
        const SymExpr &n = o[axis];
        if (c.attrs.getInt("k") < 1 || (n.isConstant() && c.attrs.getInt("k") > n.constant()))
          c.error(cat("k ", c.attrs.getInt("k"), " must be 1 … ", n.str(), " (the size of axis ",
                      axis, ")"));
        o[axis] = SymExpr(c.attrs.getInt("k"));
        return std::vector<SymDims>(2, o);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        int axis = topkAxis(a, x.shape, "topk");
        int64_t k = a.getInt("k");
        bool largest = a.getBool("largest");
        std::vector<int64_t> order(x.shape[axis]);
        forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
          auto at = [&](int64_t j) { return x.data[base + j * stride]; };
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
            return before(at(p), p, at(q), q, largest);
          });
          // The same line of the output, which has k elements along the axis.
          int64_t outBase = base / (n * stride) * k * stride + base % stride;
          for (int64_t j = 0; j < k; ++j) {
            out[0].data[outBase + j * stride] = at(order[j]);
            out[1].data[outBase + j * stride] = static_cast<double>(order[j]);
          }
        });
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        // Three stages: each element's rank (how many come before it), the index of the element
        // of each rank below k, and the value there.
        ComputeRef x = in[0];
        int axis = topkAxis(a, x->shape, "topk");
        bool largest = a.getBool("largest");
        IterVar r = reduceAxis(x->shape[axis], "k");
        ComputeRef rank = compute(
            x->shape, kInt32,
            [&](const std::vector<Expr> &i) {
              Expr w = read(x, withAxis(i, axis, r.var)), v = read(x, i);
              Expr first = lor(largest ? gt(w, v) : lt(w, v), land(eq(w, v), lt(r.var, i[axis])));
              return reduce(Combiner::Sum, select(first, intImm(1), intImm(0)), {r});
            },
            "rank", "reduce", "ax");
        IterVar r2 = reduceAxis(x->shape[axis], "k");
        ComputeRef index = compute(
            shapes[1], types[1],
            [&](const std::vector<Expr> &i) {
              Expr hit = eq(read(rank, withAxis(i, axis, r2.var)), i[axis]);
              return reduce(Combiner::Sum,
                            select(hit, cast(types[1], r2.var), constant(0, types[1])), {r2});
            },
            "index", "reduce", "ax");
        ComputeRef values = compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              return read(x, withAxis(i, axis, cast(kInt32, read(index, i))));
            },
            "values", "injective", "ax");
        return std::vector<ComputeRef>{values, index};
      })
      .grad(zeroGrad);
}

} // namespace

void registerScanOps() {
  registerCumsum();
  registerTopk();
}

} // namespace loupe::ops
