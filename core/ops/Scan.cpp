// Ops that read a whole axis for each element: cumsum (running sums, ONNX's CumSum) and topk
// (the k largest or smallest along an axis with their indices, ONNX's TopK).
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <numeric>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

// The sizes around `axis`: elements before it (outer), along it (n) and after it (inner).
struct AxisSpan {
  int axis = 0;
  int64_t outer = 1, n = 1, inner = 1;
};

AxisSpan spanOf(const Attrs &a, const Shape &x, const std::string &what) {
  AxisSpan s;
  s.axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.size()), what);
  s.n = x[s.axis];
  for (int d = 0; d < s.axis; ++d)
    s.outer *= x[d];
  for (size_t d = s.axis + 1; d < x.size(); ++d)
    s.inner *= x[d];
  return s;
}

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
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        AxisSpan s = spanOf(a, x.shape, "cumsum");
        bool exclusive = a.getBool("exclusive"), reverse = a.getBool("reverse");
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t i = 0; i < s.inner; ++i) {
            double sum = 0;
            for (int64_t step = 0; step < s.n; ++step) {
              int64_t j = reverse ? s.n - 1 - step : step, at = (o * s.n + j) * s.inner + i;
              if (!exclusive)
                sum = roundToDType(sum + x.data[at], x.dtype);
              out[0].data[at] = sum;
              if (exclusive)
                sum = roundToDType(sum + x.data[at], x.dtype);
            }
          }
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        ComputeRef x = in[0];
        AxisSpan s = spanOf(a, x->shape, "cumsum");
        bool exclusive = a.getBool("exclusive"), reverse = a.getBool("reverse");
        IterVar k = reduceAxis(s.n, "k");
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              const Expr &j = i[s.axis];
              Expr in = reverse ? (exclusive ? gt(k.var, j) : ge(k.var, j))
                                : (exclusive ? lt(k.var, j) : le(k.var, j));
              return reduce(Combiner::Sum,
                            select(in, read(x, withAxis(i, s.axis, k.var)), constant(0, types[0])),
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

// topk's output shape: x with `k` along the axis.
AxisSpan topkSpan(const Attrs &a, const Shape &x, const std::string &what) {
  AxisSpan s = spanOf(a, x, what);
  if (a.getInt("k") < 1 || a.getInt("k") > s.n)
    fail(what, ": k ", a.getInt("k"), " must be 1 … ", s.n, " (the size of axis ", s.axis, ")");
  return s;
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
        if (c.in[0].empty())
          return;
        AxisSpan s = topkSpan(c.attrs, c.in[0], c.node);
        Shape o = c.in[0];
        o[s.axis] = c.attrs.getInt("k");
        c.assignOut(0, o);
        c.assignOut(1, o);
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        AxisSpan s = topkSpan(a, x.shape, "topk");
        int64_t k = a.getInt("k");
        bool largest = a.getBool("largest");
        std::vector<int64_t> order(s.n);
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t i = 0; i < s.inner; ++i) {
            auto at = [&](int64_t j) { return x.data[(o * s.n + j) * s.inner + i]; };
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
              return before(at(p), p, at(q), q, largest);
            });
            for (int64_t j = 0; j < k; ++j) {
              out[0].data[(o * k + j) * s.inner + i] = at(order[j]);
              out[1].data[(o * k + j) * s.inner + i] = static_cast<double>(order[j]);
            }
          }
      })
      .lower([](const Attrs &a, const std::vector<ComputeRef> &in, const std::vector<Shape> &shapes,
                const std::vector<int> &types) {
        // Three stages: each element's rank (how many come before it), the index of the element
        // of each rank below k, and the value there.
        ComputeRef x = in[0];
        AxisSpan s = topkSpan(a, x->shape, "topk");
        bool largest = a.getBool("largest");
        IterVar r = reduceAxis(s.n, "k");
        ComputeRef rank = compute(
            x->shape, kInt32,
            [&](const std::vector<Expr> &i) {
              Expr w = read(x, withAxis(i, s.axis, r.var)), v = read(x, i);
              Expr first = lor(largest ? gt(w, v) : lt(w, v), land(eq(w, v), lt(r.var, i[s.axis])));
              return reduce(Combiner::Sum, select(first, intImm(1), intImm(0)), {r});
            },
            "rank", "reduce", "ax");
        IterVar r2 = reduceAxis(s.n, "k");
        ComputeRef index = compute(
            shapes[1], types[1],
            [&](const std::vector<Expr> &i) {
              Expr hit = eq(read(rank, withAxis(i, s.axis, r2.var)), i[s.axis]);
              return reduce(Combiner::Sum,
                            select(hit, cast(types[1], r2.var), constant(0, types[1])), {r2});
            },
            "index", "reduce", "ax");
        ComputeRef values = compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              return read(x, withAxis(i, s.axis, cast(kInt32, read(index, i))));
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
