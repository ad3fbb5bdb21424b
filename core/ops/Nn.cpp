// Neural-network ops: dense (and its packed-weight form), matmul, batch_matmul, softmax,
// log_softmax, dropout, prelu (batch_norm is BatchNorm.cpp's, pad Pad.cpp's).
#include "core/loop/SizeVars.h"
#include "core/ops/ConvCommon.h"
#include "core/ops/OpHelpers.h"

#include "core/DType.h"
#include "core/Layout.h"

#include <cmath>
#include <functional>
#include <limits>

namespace loupe::ops {

namespace {

// The `units` attribute of dense and its packed form, checked.
int64_t denseUnits(ShapeCtx &c) {
  int64_t units = c.attrs.getInt("units");
  if (units < 1)
    c.error("attribute 'units' must be at least 1");
  return units;
}

// The shape rule dense and its packed form share: data (…, k) gives (…, units), the weight has
// the shape `weight(k)` and the bias (units).
void denseShapeWith(ShapeCtx &c, int64_t units, const std::function<Shape(int64_t k)> &weight) {
  if (!c.in[0].rankKnown())
    return;
  Shape d = c.in[0];
  c.assignIn(1, weight(d.back()));
  if (c.attrs.getBool("use_bias"))
    c.assignIn(2, {units});
  d.back() = units;
  c.assignOut(0, d);
}

void denseShape(ShapeCtx &c) {
  int64_t units = denseUnits(c);
  denseShapeWith(c, units, [&](int64_t k) { return Shape{units, k}; });
}

// dense's operands as denseRows reads them: the weight's whole blocks of kUnits units packed
// as (U / n, K, n) for a pack width n that is a multiple of kUnits (dense packs with n = kUnits;
// `_contrib_dense_pack`'s weight is packed so already), so that a step of k reads a block's
// weights as one vector.
constexpr int64_t kRows = 4, kUnits = 8;

// Rows [first · kRows, last · kRows) of dense: each output its dot product summed along k in
// order, then the bias. Outputs are computed kRows rows by kUnits units at a time — independent
// sums, each still in k order, so the results are those of one sum at a time to the bit,
// without waiting on one add's latency per step; the units after the last whole block and the
// rows after the last whole block one at a time.
LOUPE_REFERENCE_CLONES
void denseRows(const double *xd, const double *wd, const double *packed, int64_t n,
               const double *bias, double *yd, int64_t K, int64_t U, int64_t rows, int64_t first,
               int64_t last) {
  for (int64_t r0 = first * kRows; r0 < std::min(rows, last * kRows); r0 += kRows) {
    int64_t u0 = 0;
    if (r0 + kRows <= rows)
      for (; u0 + kUnits <= U; u0 += kUnits) {
        double acc[kRows][kUnits] = {};
        const double *wb = packed + u0 / n * K * n + u0 % n;
        for (int64_t k = 0; k < K; ++k)
          for (int64_t i = 0; i < kRows; ++i) {
            double xv = xd[(r0 + i) * K + k];
            for (int64_t j = 0; j < kUnits; ++j)
              acc[i][j] += xv * wb[k * n + j];
          }
        for (int64_t i = 0; i < kRows; ++i)
          for (int64_t j = 0; j < kUnits; ++j)
            yd[(r0 + i) * U + u0 + j] = bias ? acc[i][j] + bias[u0 + j] : acc[i][j];
      }
    // The units after the last whole block, and every unit of the rows after the last whole
    // block of rows: one at a time, from the packed weight where it holds the unit.
    for (int64_t r = r0; r < std::min(rows, r0 + kRows); ++r)
      for (int64_t u = u0; u < U; ++u) {
        bool inBlock = u < U / kUnits * kUnits;
        const double *wu = inBlock ? packed + u / n * K * n + u % n : wd + u * K;
        int64_t step = inBlock ? n : 1;
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += xd[r * K + k] * wu[k * step];
        yd[r * U + u] = bias ? acc + bias[u] : acc;
      }
  }
}

// denseRows over every row block of `x`, the blocks shared among the cores (a BERT's :run check
// was mostly this); the bias is the op's third input when it has one.
void denseAllRows(const Attrs &a, const std::vector<const Tensor *> &in, const double *wd,
                  const double *packed, int64_t n, int64_t U, Tensor &y) {
  const Tensor &x = *in[0];
  int64_t K = x.shape.back(), rows = x.size() / K;
  const double *bias = a.getBool("use_bias") ? in[2]->data.data() : nullptr;
  parallelParts((rows + kRows - 1) / kRows, rows * U * K, [&](int64_t first, int64_t last) {
    denseRows(x.data.data(), wd, packed, n, bias, y.data.data(), K, U, rows, first, last);
  });
}

// dense's reference: the weight's whole blocks packed, then every row.
void denseKernel(const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
  const Tensor &w = *in[1];
  int64_t U = w.shape[0], K = w.shape[1];
  std::vector<double> packed(static_cast<size_t>(U / kUnits * kUnits * K));
  for (int64_t u = 0; u < U / kUnits * kUnits; ++u)
    for (int64_t k = 0; k < K; ++k)
      packed[static_cast<size_t>((u / kUnits * K + k) * kUnits + u % kUnits)] = w.data[u * K + k];
  denseAllRows(a, in, w.data.data(), packed.data(), kUnits, U, out[0]);
}

// Whether a `_contrib_dense_pack` weight layout is NC<n>n2c: the weight in pairs of steps of k,
// (units / n, k / 2, n, 2), each unit's two weights one 32-bit word for vdpbf16ps (dot2).
bool packedInPairs(const Attrs &a) { return a.getStr("weight_layout").ends_with("n2c"); }

// The pack width n of a `_contrib_dense_pack` weight layout "NC<n>n" (TVM's NC16n: the weight
// (units, k) as (units / n, k, n)) or "NC<n>n2c" (bfloat16 pairs), checked against the units.
int64_t packWidth(const Attrs &a, const std::string &where) {
  const std::string layout = a.getStr("weight_layout");
  std::vector<LayoutAxis> axes;
  try {
    axes = parseLayout(layout);
  } catch (const Error &) {
    axes.clear(); // refused below, with what the layout should be
  }
  bool pairs = axes.size() == 4 && axes[3].name == 'c' && axes[3].factor == 2;
  if ((axes.size() != 3 && !pairs) || axes[0].name != 'N' || axes[1].name != 'C' ||
      axes[2].name != 'n' || axes[2].factor < 1)
    fail(where, ": weight_layout '", layout, "' is not NC<n>n (such as NC16n) or NC<n>n2c");
  int64_t n = axes[2].factor, units = a.getInt("units");
  if (units % n != 0)
    fail(where, ": units ", units, " is not a multiple of ", layout, "'s pack width ", n);
  return n;
}

void densePackShape(ShapeCtx &c) {
  int64_t units = denseUnits(c);
  int64_t n = packWidth(c.attrs, cat("operator ", c.node, " (", c.op, ")"));
  bool pairs = packedInPairs(c.attrs);
  if (pairs && c.in[0].rankKnown() && c.in[0].back() % 2 != 0)
    c.error(cat("weight_layout ", c.attrs.getStr("weight_layout"),
                " pairs the steps of k, which must be even, got ", c.in[0].back()));
  denseShapeWith(c, units, [&](int64_t k) {
    return pairs ? Shape{units / n, k / 2, n, 2} : Shape{units / n, k, n};
  });
}

// dense's reference with the weight unpacked first: the same sums in the same order.
void densePackKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                     std::vector<Tensor> &out) {
  int64_t n = packWidth(a, "_contrib_dense_pack");
  // Read in place when the blocks are denseRows' (every unit in a whole block: units % n == 0),
  // else unpacked: a reference never holds a network's weight twice for its usual widths.
  if (n % kUnits == 0 && !packedInPairs(a))
    return denseAllRows(a, in, nullptr, in[1]->data.data(), n, a.getInt("units"), out[0]);
  Tensor w = transformLayout(*in[1], a.getStr("weight_layout"), "NC");
  std::vector<const Tensor *> unpacked = in;
  unpacked[1] = &w;
  denseKernel(a, unpacked, out);
}

// matmul contracts the last axis of lhs (first, with transpose_a) with the first axis of rhs
// (last, with transpose_b); a transpose reverses all axes, as NNVM's matmul did.
void matmulShape(ShapeCtx &c) {
  if (!c.in[0].rankKnown() || !c.in[1].rankKnown())
    return;
  Shape a = c.in[0], b = c.in[1];
  if (c.attrs.getBool("transpose_a"))
    std::reverse(a.begin(), a.end());
  if (c.attrs.getBool("transpose_b"))
    std::reverse(b.begin(), b.end());
  if (a.back() != b.front() && a.back() && b.front())
    c.error(cat("cannot multiply ", shapeToList(c.in[0]), " by ", shapeToList(c.in[1])));
  Shape o(a.begin(), a.end() - 1);
  o.insert(o.end(), b.begin() + 1, b.end());
  if (o.empty())
    o = {1};
  c.assignOut(0, o);
}

Tensor reversedAxes(const Tensor &t) {
  Tensor r(Shape(t.shape.rbegin(), t.shape.rend()), t.dtype);
  auto st = stridesOf(t.shape);
  int64_t k = 0;
  forEachIndex(r.shape, [&](const std::vector<int64_t> &idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += idx[d] * st[idx.size() - 1 - d];
    r.data[k++] = t.data[off];
  });
  return r;
}

void matmulKernel(const Attrs &at, const std::vector<const Tensor *> &in,
                  std::vector<Tensor> &out) {
  Tensor a = at.getBool("transpose_a") ? reversedAxes(*in[0]) : *in[0];
  Tensor b = at.getBool("transpose_b") ? reversedAxes(*in[1]) : *in[1];
  int64_t K = a.shape.back(), M = a.size() / K, N = b.size() / K;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += a.data[m * K + k] * b.data[k * N + n];
      out[0].data[m * N + n] = acc;
    }
}

// batch_matmul: matrix products over the last two axes, the leading (batch) axes broadcast as
// NumPy's matmul does (ONNX's N-D MatMul, Relay's batch_matmul). The operands' (M, K) and
// (K, N) after the optional transposes of their last two axes.
struct BatchMatmul {
  Shape batch, aBatch, bBatch; // the output's batch axes and each operand's
  int64_t m = 0, k = 0, n = 0;
  bool ta = false, tb = false;
};

BatchMatmul batchMatmulOf(const Attrs &at, const Shape &a, const Shape &b,
                          const std::string &what) {
  if (a.size() < 2 || b.size() < 2)
    fail(what, ": operands ", shapeToList(a), " and ", shapeToList(b), " must have rank 2 or more");
  BatchMatmul bm;
  bm.ta = at.getBool("transpose_a");
  bm.tb = at.getBool("transpose_b");
  size_t ra = a.size(), rb = b.size();
  bm.m = bm.ta ? a[ra - 1] : a[ra - 2];
  bm.k = bm.ta ? a[ra - 2] : a[ra - 1];
  int64_t kb = bm.tb ? b[rb - 1] : b[rb - 2];
  bm.n = bm.tb ? b[rb - 2] : b[rb - 1];
  if (bm.k != kb)
    fail(what, ": cannot multiply ", shapeToList(a), " by ", shapeToList(b), " (", bm.k, " and ",
         kb, " columns and rows)");
  bm.aBatch.assign(a.begin(), a.end() - 2);
  bm.bBatch.assign(b.begin(), b.end() - 2);
  std::optional<Shape> batch = broadcastShapes(bm.aBatch, bm.bBatch);
  if (!batch)
    fail(what, ": batch axes of ", shapeToList(a), " and ", shapeToList(b), " cannot be broadcast");
  bm.batch = *batch;
  return bm;
}

void batchMatmulShape(ShapeCtx &c) {
  if (!c.in[0].rankKnown() || !c.in[1].rankKnown())
    return;
  BatchMatmul bm = batchMatmulOf(c.attrs, c.in[0], c.in[1], c.node);
  Shape o = bm.batch;
  o.push_back(bm.m);
  o.push_back(bm.n);
  c.assignOut(0, o);
}

// The symbolic rules: the concrete ones' dimensions as expressions. A contracted dimension is
// checked only where both sides are constants (a symbol there is checked by the run).
bool symDiffer(const SymExpr &a, const SymExpr &b) {
  return a.isConstant() && b.isConstant() && a != b;
}

std::vector<SymDims> symDense(const SymShapeCtx &c) {
  SymDims d = c.in[0];
  if (d.empty())
    c.error("data must have rank 1 or more");
  d.back() = SymExpr(c.in[1][0]);
  return {d};
}

// _contrib_dense_pack's: the rows kept, the last axis its units (the packed weight's first axis
// counts tiles of them).
std::vector<SymDims> symDensePack(const SymShapeCtx &c) {
  SymDims d = c.in[0];
  if (d.empty())
    c.error("data must have rank 1 or more");
  d.back() = SymExpr(c.attrs.getInt("units"));
  return {d};
}

std::vector<SymDims> symMatmul(const SymShapeCtx &c) {
  SymDims a = c.in[0], b = c.in[1];
  if (c.attrs.getBool("transpose_a"))
    std::reverse(a.begin(), a.end());
  if (c.attrs.getBool("transpose_b"))
    std::reverse(b.begin(), b.end());
  if (a.empty() || b.empty() || symDiffer(a.back(), b.front()))
    c.error("the operands' inner dimensions differ");
  SymDims o(a.begin(), a.end() - 1);
  o.insert(o.end(), b.begin() + 1, b.end());
  if (o.empty())
    o = {SymExpr(1)};
  return {o};
}

std::vector<SymDims> symBatchMatmul(const SymShapeCtx &c) {
  const SymDims &a = c.in[0], &b = c.in[1];
  if (a.size() < 2 || b.size() < 2)
    c.error("operands must have rank 2 or more");
  bool ta = c.attrs.getBool("transpose_a"), tb = c.attrs.getBool("transpose_b");
  size_t ra = a.size(), rb = b.size();
  SymExpr m = ta ? a[ra - 1] : a[ra - 2], k = ta ? a[ra - 2] : a[ra - 1];
  SymExpr kb = tb ? b[rb - 1] : b[rb - 2], n = tb ? b[rb - 2] : b[rb - 1];
  if (symDiffer(k, kb))
    c.error(cat("cannot multiply: ", k.str(), " and ", kb.str(), " columns and rows"));
  SymDims o = symBroadcast(c, SymDims(a.begin(), a.end() - 2), SymDims(b.begin(), b.end() - 2));
  o.push_back(m);
  o.push_back(n);
  return {o};
}

void batchMatmulKernel(const Attrs &at, const std::vector<const Tensor *> &in,
                       std::vector<Tensor> &out) {
  const Tensor &a = *in[0], &b = *in[1];
  BatchMatmul bm = batchMatmulOf(at, a.shape, b.shape, "batch_matmul");
  int64_t k = 0;
  forEachIndex(bm.batch.empty() ? Shape{1} : bm.batch, [&](const std::vector<int64_t> &i) {
    std::vector<int64_t> bi = bm.batch.empty() ? std::vector<int64_t>{} : i;
    int64_t ao = (bm.aBatch.empty() ? 0 : broadcastOffset(bm.aBatch, bi)) * bm.m * bm.k;
    int64_t bo = (bm.bBatch.empty() ? 0 : broadcastOffset(bm.bBatch, bi)) * bm.k * bm.n;
    for (int64_t m = 0; m < bm.m; ++m)
      for (int64_t n = 0; n < bm.n; ++n) {
        double acc = 0;
        for (int64_t r = 0; r < bm.k; ++r)
          acc += a.data[ao + (bm.ta ? r * bm.m + m : m * bm.k + r)] *
                 b.data[bo + (bm.tb ? n * bm.k + r : r * bm.n + n)];
        out[0].data[k++] = acc;
      }
  });
}

std::vector<loop::ComputeRef> batchMatmulLower(const Attrs &at,
                                               const std::vector<loop::ComputeRef> &in,
                                               const std::vector<Shape> &shapes,
                                               const std::vector<int> &types) {
  using namespace loop;
  ComputeRef a = in[0], b = in[1];
  BatchMatmul bm = batchMatmulOf(at, a->shape, b->shape, "batch_matmul");
  // An operand in the other orientation is copied with its last two axes swapped (a stage tagged
  // compact: the fast schedule materialises it, others inline it): lhs as (.., m, k), read a
  // row's k at a time; rhs as (.., k, n), so that a row of k is a vector of n's.
  auto swapLast = [](const ComputeRef &t, const std::string &name) {
    SymDims dims = t->shape.dims(); // (the expressions of a symbolic shape kept)
    std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
    Shape shape = Shape::symbolic(dims);
    return compute(
        shape, t->dtype,
        [&](const std::vector<Expr> &i) {
          std::vector<Expr> j = i;
          std::swap(j[j.size() - 1], j[j.size() - 2]);
          return read(t, j);
        },
        name, "compact");
  };
  if (bm.ta)
    a = swapLast(a, "lhs_rows");
  if (bm.tb)
    b = swapLast(b, "rhs_rows");
  bm.ta = false;
  bm.tb = false;
  IterVar r = reduceAxisOver(a->shape, a->shape.size() - 1, "k"); // a is (.., m, k) now
  size_t nb = bm.batch.size();
  return {compute(
      shapes[0], types[0],
      [&](const std::vector<Expr> &i) {
        std::vector<Expr> batch(i.begin(), i.begin() + nb);
        std::vector<Expr> ai = broadcastIndices(bm.aBatch, batch),
                          bi = broadcastIndices(bm.bBatch, batch);
        const Expr &m = i[nb], &n = i[nb + 1];
        if (bm.ta) {
          ai.push_back(r.var);
          ai.push_back(m);
        } else {
          ai.push_back(m);
          ai.push_back(r.var);
        }
        if (bm.tb) {
          bi.push_back(n);
          bi.push_back(r.var);
        } else {
          bi.push_back(r.var);
          bi.push_back(n);
        }
        return reduce(Combiner::Sum, read(a, ai) * read(b, bi), {r});
      },
      "T_batch_matmul", "batch_matmul", "ax")};
}

ComputeFn softmaxKernel(bool logOut) {
  return [logOut](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
    const Tensor &x = *in[0];
    int axis = normalizeAxis(a.getInt("axis"), static_cast<int>(x.shape.size()), "softmax");
    forEachLine(x.shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
      double m = -std::numeric_limits<double>::infinity(), s = 0;
      for (int64_t j = 0; j < n; ++j)
        m = std::max(m, x.data[base + j * stride]);
      for (int64_t j = 0; j < n; ++j)
        s += std::exp(x.data[base + j * stride] - m);
      for (int64_t j = 0; j < n; ++j) {
        double v = x.data[base + j * stride] - m;
        out[0].data[base + j * stride] = logOut ? v - std::log(s) : std::exp(v) / s;
      }
    });
  };
}

std::vector<NodeEntry> softmaxGrad(const NodePtr &n, const std::vector<NodeEntry> &g) {
  // NNVM: s0 = g*y; s1 = sum(s0, axis, keepdims); s2 = s1*y; grad = s0 - s2.
  NodeEntry y = outOf(n);
  const std::string axis = n->parsed.raw("axis");
  NodeEntry s0 = mk("elemwise_mul", n->name + "_grad_sub0", {g[0], y});
  NodeEntry s1 = mk("sum", n->name + "_grad_sub1", {s0}, {{"axis", axis}, {"keepdims", "true"}});
  NodeEntry s2 = mk("broadcast_mul", n->name + "_grad_sub2", {s1, y});
  return {mk("elemwise_sub", n->name + "_grad", {s0, s2})};
}

std::vector<NodeEntry> logSoftmaxGrad(const NodePtr &n, const std::vector<NodeEntry> &g) {
  // g - exp(y) * sum(g, axis, keepdims)
  const std::string axis = n->parsed.raw("axis");
  NodeEntry s0 = mk("sum", n->name + "_grad_sub0", {g[0]}, {{"axis", axis}, {"keepdims", "true"}});
  NodeEntry s1 = mk("exp", n->name + "_grad_sub1", {outOf(n)});
  NodeEntry s2 = mk("broadcast_mul", n->name + "_grad_sub2", {s0, s1});
  return {mk("elemwise_sub", n->name + "_grad", {g[0], s2})};
}

// The gradients of Y = A'B' (A' = A or Aᵀ, B' likewise) as two products made by
// `mm(k, x, y, transpose_x, transpose_y)` for input k: dA' = G B'ᵀ and dB' = A'ᵀ G, transposed
// back where the forward transposed.
std::vector<NodeEntry>
productGrads(const NodePtr &n, const NodeEntry &g,
             const std::function<NodeEntry(int, NodeEntry, NodeEntry, bool, bool)> &mm) {
  bool ta = n->parsed.getBool("transpose_a"), tb = n->parsed.getBool("transpose_b");
  const NodeEntry &a = n->inputs[0], &b = n->inputs[1];
  if (!ta && !tb)
    return {mm(0, g, b, false, true), mm(1, a, g, true, false)};
  if (!ta && tb)
    return {mm(0, g, b, false, false), mm(1, g, a, true, false)};
  if (ta && !tb)
    return {mm(0, b, g, false, true), mm(1, a, g, false, false)};
  return {mm(0, b, g, true, true), mm(1, g, a, true, true)};
}

std::vector<NodeEntry> matmulGrad(const NodePtr &n, const std::vector<NodeEntry> &g) {
  return productGrads(n, g[0], [&](int k, NodeEntry x, NodeEntry y, bool tx, bool ty) {
    AttrDict attrs;
    if (tx)
      attrs.emplace_back("transpose_a", "True");
    if (ty)
      attrs.emplace_back("transpose_b", "True");
    return mk("matmul", n->name + "_grad_" + std::to_string(k), {x, y}, attrs);
  });
}

// batch_matmul: matmul's rule per batch, each product summed back to its operand's shape where
// the batch axes broadcast (collapse_sum).
std::vector<NodeEntry> batchMatmulGrad(const NodePtr &n, const std::vector<NodeEntry> &g) {
  return productGrads(n, g[0], [&](int k, NodeEntry x, NodeEntry y, bool tx, bool ty) {
    std::string name = n->name + "_grad_" + std::to_string(k);
    NodeEntry p =
        mk("batch_matmul", name + "_product", {x, y},
           {{"transpose_a", tx ? "True" : "False"}, {"transpose_b", ty ? "True" : "False"}});
    return mk("collapse_sum", name, {p, n->inputs[k]});
  });
}

// topi's softmax: the maximum along the axis, the sum of exp(x - max), then exp(x - max) / sum
// (log_softmax: x - max - log(sum)).
LowerFn softmaxLower(bool logOut) {
  return [logOut](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                  const std::vector<Shape> &shapes, const std::vector<int> &types) {
    using namespace loop;
    ComputeRef x = in[0];
    int nd = static_cast<int>(x->shape.size());
    int axis = normalizeAxis(a.getInt("axis"), nd, "softmax");
    Shape reduced = dropDim(x->shape, static_cast<size_t>(axis));
    if (reduced.empty())
      reduced = {1};
    int dt = types[0];
    auto at = [&](const std::vector<Expr> &i, const Expr &k) { // i without the axis, k on it
      std::vector<Expr> idx;
      size_t j = 0;
      for (int d = 0; d < nd; ++d)
        idx.push_back(d == axis ? k : i[nd == 1 ? 0 : j++]);
      if (nd == 1)
        idx = {k};
      return idx;
    };
    auto without = [&](const std::vector<Expr> &i) {
      std::vector<Expr> r;
      for (int d = 0; d < nd; ++d)
        if (d != axis)
          r.push_back(i[d]);
      return r.empty() ? std::vector<Expr>{intImm(0)} : r;
    };
    IterVar k1 = reduceAxisOver(x->shape, static_cast<size_t>(axis), "k"),
            k2 = reduceAxisOver(x->shape, static_cast<size_t>(axis), "k");
    ComputeRef mx = compute(
        reduced, dt,
        [&](const std::vector<Expr> &i) {
          return reduce(Combiner::Max, read(x, at(i, k1.var)), {k1});
        },
        "T_softmax_maxelem", "reduce");
    ComputeRef sum = compute(
        reduced, dt,
        [&](const std::vector<Expr> &i) {
          return reduce(Combiner::Sum, call("exp", {read(x, at(i, k2.var)) - read(mx, i)}, dt),
                        {k2});
        },
        "T_softmax_expsum", "reduce");
    return std::vector<ComputeRef>{compute(
        shapes[0], dt,
        [&](const std::vector<Expr> &i) {
          Expr shifted = read(x, i) - read(mx, without(i));
          if (logOut)
            return shifted - call("log", {read(sum, without(i))}, dt);
          return call("exp", {shifted}, dt) / read(sum, without(i));
        },
        "T_softmax_norm", "injective")};
  };
}

void softmaxOp(const char *name, const char *doc, bool logOut) {
  OpRegistry::get()
      .add(name)
      .describe(doc)
      .param("axis", ParamKind::Int, "-1", "the axis to normalise over")
      .setPattern(kOpaque)
      .layout(layoutArbitrary)
      .symbolic(symSameShape)
      .shape([](ShapeCtx &c) {
        sameShapeRule(c);
        if (c.in[0].rankKnown())
          normalizeAxis(c.attrs.getInt("axis"), static_cast<int>(c.in[0].size()),
                        cat("operator ", c.node, " (", c.op, ")"));
      })
      .kernel(softmaxKernel(logOut))
      .lowerSymbolic(softmaxLower(logOut))
      .grad(logOut ? logSoftmaxGrad : softmaxGrad);
}

// The shape (rows, d1, d2, …) of a stage over a dense's rows, given d1, d2, …: the rows a
// count, or an expression of the size symbols (a generic kernel's batch*seq).
using RowsShape = std::function<Shape(std::vector<int64_t>)>;

// The product of the rows (count, k) of a dense's data as a (count, units) stage, k the
// reduction.
using DenseProduct = std::function<loop::ComputeRef(
    const loop::ComputeRef &rows, const loop::IterVar &k, const RowsShape &rowsShape)>;

// topi's dense: sum over k of data[i, k] * weight[j, k] (`product`), then the bias as its own
// stage.
std::vector<loop::ComputeRef> denseCompute(const Attrs &a, const std::vector<loop::ComputeRef> &in,
                                           const std::vector<Shape> &shapes, int dtype,
                                           const DenseProduct &product) {
  using namespace loop;
  ComputeRef x = in[0];
  IterVar k = reduceAxisOver(x->shape, x->shape.size() - 1, "k");
  // An N-D input (a transformer's batch x sequence x width) is dense over rows: the product
  // is the 2-D one whose rows the fast schedule tiles, read back in the output's shape.
  bool asRows = x->shape.size() > 2;
  SymExpr count(1);
  for (size_t d = 0; d + 1 < shapes[0].size(); ++d)
    count = count * shapes[0].dim(d);
  RowsShape rowsShape = [&](std::vector<int64_t> rest) {
    SymDims dims{count};
    for (int64_t r : rest)
      dims.push_back(SymExpr(r));
    return Shape::symbolic(dims);
  };
  ComputeRef x2 = asRows ? reshapeCompute(x, rowsShape({x->shape.back()}), "data_rows") : x;
  ComputeRef flat = product(x2, k, rowsShape);
  ComputeRef prod = asRows ? reshapeCompute(flat, shapes[0], "dense_rows") : flat;
  if (!a.getBool("use_bias"))
    return {prod};
  ComputeRef b = in[2];
  return {compute(
      shapes[0], dtype,
      [&](const std::vector<Expr> &i) { return read(prod, i) + read(b, {i.back()}); }, "compute",
      "broadcast", "ax")};
}

std::vector<loop::ComputeRef> denseLower(const Attrs &a, const std::vector<loop::ComputeRef> &in,
                                         const std::vector<Shape> &shapes,
                                         const std::vector<int> &types) {
  using namespace loop;
  const ComputeRef &w = in[1];
  return denseCompute(a, in, shapes, types[0],
                      [&](const ComputeRef &x, const IterVar &k, const RowsShape &rows) {
                        return compute(
                            rows({shapes[0].back()}), types[0],
                            [&](const std::vector<Expr> &i) {
                              return reduce(Combiner::Sum,
                                            widened(read(x, {i[0], k.var}), types[0]) *
                                                widened(read(w, {i[1], k.var}), types[0]),
                                            {k});
                            },
                            "compute", "dense");
                      });
}

// The product over the packed weight as (count, units / n, n) — a tile of n outputs reads n
// consecutive weights, with no division in its indices — then unpacked to (count, units).
std::vector<loop::ComputeRef> densePackLower(const Attrs &a,
                                             const std::vector<loop::ComputeRef> &in,
                                             const std::vector<Shape> &shapes,
                                             const std::vector<int> &types) {
  using namespace loop;
  const ComputeRef &w = in[1];
  int64_t n = w->shape[2];
  // bfloat16 operands with the weight in pairs of steps of k (NC<n>n2c): each step of the sum
  // is dot2 of two consecutive inputs and a unit's two weights, summed in float32 (vdpbf16ps).
  bool pairs = packedInPairs(a);
  if (pairs && (in[0]->dtype != kBFloat16 || w->dtype != kBFloat16 || types[0] != kFloat32))
    fail("_contrib_dense_pack lowers weight_layout ", a.getStr("weight_layout"),
         " for bfloat16 operands summed in float32 only");
  return denseCompute(
      a, in, shapes, types[0], [&](const ComputeRef &x, const IterVar &k, const RowsShape &rows) {
        IterVar kp = pairs ? reduceAxis(w->shape[1], "k_pair") : k;
        ComputeRef packed = compute(
            rows({w->shape[0], n}), types[0],
            [&](const std::vector<Expr> &i) {
              if (pairs)
                return reduce(Combiner::Sum,
                              call("dot2",
                                   {read(x, {i[0], kp.var * 2}), read(x, {i[0], kp.var * 2 + 1}),
                                    read(w, {i[1], kp.var, i[2], intImm(0)}),
                                    read(w, {i[1], kp.var, i[2], intImm(1)})},
                                   types[0]),
                              {kp});
              return reduce(Combiner::Sum, read(x, {i[0], k.var}) * read(w, {i[1], k.var, i[2]}),
                            {k});
            },
            "compute", "dense_pack");
        return compute(
            rows({shapes[0].back()}), types[0],
            [&](const std::vector<Expr> &i) {
              return read(packed, {i[0], i[1] / intImm(n), i[1] % intImm(n)});
            },
            "dense_unpack", "injective");
      });
}

// NNVM's dense gradient: data: matmul(g, weight); weight: sum(matmul(g, data, transpose_a),
// axis=[0,-1], exclude); bias: sum(g, axis=[-1], exclude). `weight` is the (units, k) weight and
// `packWeight` turns its gradient into the layout the node reads.
std::vector<NodeEntry> denseGrad(const NodePtr &n, const NodeEntry &g, const NodeEntry &weight,
                                 const std::function<NodeEntry(const NodeEntry &)> &packWeight) {
  std::vector<NodeEntry> out{mk("matmul", n->name + "_data_grad", {g, weight})};
  NodeEntry wt =
      mk("matmul", n->name + "_weight_grad_sub0", {g, n->inputs[0]}, {{"transpose_a", "true"}});
  out.push_back(packWeight(
      mk("sum", n->name + "_weight_grad", {wt}, {{"axis", "(0, -1)"}, {"exclude", "true"}})));
  if (n->parsed.getBool("use_bias"))
    out.push_back(mk("sum", n->name + "_bias_grad", {g}, {{"axis", "(-1,)"}, {"exclude", "true"}}));
  return out;
}

// _prelu_grad(g, data, alpha): dx = g where x > 0, else alpha g; dalpha = Σ g x over x <= 0.
void preluGradKernel(const Attrs &a, const std::vector<const Tensor *> &in,
                     std::vector<Tensor> &out) {
  const Tensor &g = *in[0], &x = *in[1], &alpha = *in[2];
  int axis = normalizeAxis(a.getInt("axis"), 4, "prelu");
  int64_t inner = innerSize(x.shape, axis);
  for (int64_t i = 0; i < x.size(); ++i) {
    int64_t ch = (i / inner) % x.shape[axis];
    if (x.data[i] > 0) {
      out[0].data[i] = g.data[i];
    } else {
      out[0].data[i] = alpha.data[ch] * g.data[i];
      out[1].data[ch] += g.data[i] * x.data[i];
    }
  }
}

// What dense and its packed form share: units, use_bias, data/weight/bias, the fusion pattern,
// and the layout rule (the weight's and bias's layouts stay unknown, as in NNVM).
OpDef &denseFamily(const char *name, const char *summary) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(summary)
                  .param("units", ParamKind::Int, std::nullopt, "number of output units")
                  .param("use_bias", ParamKind::Bool, "True", "whether a bias input exists")
                  .setPattern(kOutEWiseFusable);
  op.argsFn = dataWeightBias;
  op.layout(layoutFixed(1, true));
  return op;
}

} // namespace

void registerNnOps() {
  OpDef &dense = denseFamily("dense", "fully connected layer: data · weightᵀ + bias");
  outDtypeParam(dense); // 8-bit operands summed in int32, as QnnCanonicalize writes qnn.dense
  dense.shape(denseShape).symbolic(symDense).kernel(denseKernel).lowerSymbolic(denseLower);
  dense.grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
    return denseGrad(n, g[0], n->inputs[1], [](const NodeEntry &e) { return e; });
  });

  // TVM's contrib_dense_pack, which AlterOpLayout makes of a dense over many rows at opt_level
  // 3: the weight laid out once as (units / n, k, n), so that a tile of n outputs reads n
  // consecutive weights per step of k (a GEMM's packed panel).
  OpDef &densePack = denseFamily("_contrib_dense_pack",
                                 "dense with its weight packed in NC<n>n: (units / n, k, n)");
  densePack.param("weight_layout", ParamKind::Str, "NC16n", "the weight's layout, NC<n>n")
      .shape(densePackShape)
      .symbolic(symDensePack)
      .kernel(densePackKernel)
      .lowerSymbolic(densePackLower);
  densePack.grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
    // dense's gradient on the weight unpacked, its weight gradient packed back.
    std::string packed = n->parsed.getStr("weight_layout");
    NodeEntry weight = mk("__layout_transform__", n->name + "_weight_unpack", {n->inputs[1]},
                          {{"src_layout", packed}, {"dst_layout", "NC"}});
    return denseGrad(n, g[0], weight, [&](const NodeEntry &e) {
      return mk("__layout_transform__", n->name + "_weight_grad_pack", {e},
                {{"src_layout", "NC"}, {"dst_layout", packed}});
    });
  });

  OpRegistry::get()
      .add("batch_matmul")
      .describe("matrix products over the last two axes, the leading axes broadcast (NumPy's "
                "matmul, ONNX's N-D MatMul)")
      .arguments({"lhs", "rhs"})
      .param("transpose_a", ParamKind::Bool, "False", "swap lhs's last two axes first")
      .param("transpose_b", ParamKind::Bool, "False", "swap rhs's last two axes first")
      .setPattern(kOutEWiseFusable) // as Relay: a scale or bias add after it fuses in
      .layout(layoutFixed(2, false))
      .shape(batchMatmulShape)
      .symbolic(symBatchMatmul)
      .kernel(batchMatmulKernel)
      .lowerSymbolic(batchMatmulLower)
      .grad(batchMatmulGrad);
  OpRegistry::get()
      .add("matmul")
      .describe("matrix product of lhs and rhs")
      .arguments({"lhs", "rhs"})
      .param("transpose_a", ParamKind::Bool, "False", "transpose lhs first")
      .param("transpose_b", ParamKind::Bool, "False", "transpose rhs first")
      .setPattern(kOpaque)
      .layout(layoutFixed(2, true)) // its axes are rows and columns, not a block's
      .shape(matmulShape)
      .symbolic(symMatmul)
      .kernel(matmulKernel)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        using namespace loop;
        ComputeRef x = in[0], y = in[1];
        bool ta = a.getBool("transpose_a"), tb = a.getBool("transpose_b");
        int64_t kn = ta ? x->shape.front() : x->shape.back();
        IterVar k = reduceAxis(kn, "k");
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              // lhs: all but its contracted axis come first in the output, then rhs's.
              size_t na = x->shape.size() - 1;
              std::vector<Expr> xi, yi;
              if (ta) {
                xi.push_back(k.var);
                xi.insert(xi.end(), i.begin(), i.begin() + na);
              } else {
                xi.assign(i.begin(), i.begin() + na);
                xi.push_back(k.var);
              }
              std::vector<Expr> rest(i.begin() + na, i.end());
              if (tb) {
                yi = rest;
                yi.push_back(k.var);
              } else {
                yi.push_back(k.var);
                yi.insert(yi.end(), rest.begin(), rest.end());
              }
              return reduce(Combiner::Sum, read(x, xi) * read(y, yi), {k});
            },
            "tensor", "matmul")};
      })
      .grad(matmulGrad);

  softmaxOp("softmax", "exp(x) / sum(exp(x)) along an axis", false);
  softmaxOp("log_softmax", "log of softmax along an axis", true);

  OpRegistry::get()
      .add("dropout")
      .describe("dropout; identity at inference, second output is the mask")
      .param("rate", ParamKind::Float, "0.5", "fraction dropped in training")
      .layout(layoutArbitrary)
      .setPattern(kOpaque)
      .outputs(2)
      .visibleOutputs(1)
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .kernel([](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        out[0].data = in[0]->data;
        std::fill(out[1].data.begin(), out[1].data.end(), 1.0);
      })
      .lower([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        using namespace loop;
        ComputeRef x = in[0];
        return std::vector<ComputeRef>{
            compute(shapes[0], types[0], [&](const std::vector<Expr> &i) { return read(x, i); }),
            compute(shapes[1], types[1],
                    [&](const std::vector<Expr> &) { return constant(1, types[1]); })};
      })
      // The identity it computes at inference passes the gradient straight through.
      .grad([](const NodePtr &, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{g[0]};
      });

  OpRegistry::get()
      .add("prelu")
      .describe("x if x > 0 else alpha[c] * x, alpha per channel")
      .arguments({"data", "alpha"})
      .param("axis", ParamKind::Int, "1", "the channel axis")
      .layout(layoutFixed(1, true))
      .setPattern(kBroadcast)
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown())
          return;
        if (c.in[0].size() != 4)
          c.error(cat("data must be 4-D, got ", shapeToList(c.in[0])));
        int axis = normalizeAxis(c.attrs.getInt("axis"), 4, cat("operator ", c.node));
        c.assignIn(1, {c.in[0][axis]});
        c.assignOut(0, c.in[0]);
      })
      .symbolic(symSameShape)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        using namespace loop;
        ComputeRef x = in[0], alpha = in[1];
        int axis = normalizeAxis(a.getInt("axis"), 4, "prelu");
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              Expr v = read(x, i);
              return select(gt(v, constant(0, types[0])), v, read(alpha, {i[axis]}) * v);
            },
            "tensor", "broadcast")};
      })
      .kernel([](const Attrs &a, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &x = *in[0];
        int axis = normalizeAxis(a.getInt("axis"), 4, "prelu");
        int64_t inner = 1;
        for (int d = axis + 1; d < 4; ++d)
          inner *= x.shape[d];
        for (int64_t i = 0; i < x.size(); ++i) {
          double v = x.data[i];
          out[0].data[i] = v > 0 ? v : in[1]->data[(i / inner) % x.shape[axis]] * v;
        }
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        NodeEntry pg =
            mk("_prelu_grad", n->name + "_grad", {g[0], n->inputs[0], n->inputs[1]}, n->attrs);
        return outputsOf(pg.node);
      });
  OpRegistry::get()
      .add("_prelu_grad")
      .describe("gradients of prelu for data and alpha")
      .arguments({"ograd", "data", "alpha"})
      .param("axis", ParamKind::Int, "1", "the channel axis")
      .setPattern(kOpaque)
      .outputs(2)
      .symbolic(symLikeInputs({1, 2}))
      .shape([](ShapeCtx &c) {
        for (size_t k = 0; k < 2; ++k)
          if (c.in[1 + k].rankKnown())
            c.assignOut(k, c.in[1 + k]);
      })
      .kernel(preluGradKernel)
      .lower([](const Attrs &a, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        using namespace loop;
        ComputeRef g = in[0], x = in[1], alpha = in[2];
        int axis = normalizeAxis(a.getInt("axis"), 4, "prelu");
        int dt = types[0];
        auto positive = [&](const std::vector<Expr> &i) { return gt(read(x, i), constant(0, dt)); };
        ComputeRef dx = compute(shapes[0], dt, [&](const std::vector<Expr> &i) {
          return select(positive(i), read(g, i), read(alpha, {i[axis]}) * read(g, i));
        });
        ComputeRef dalpha = channelSum(x->shape, axis, types[1], [&](const std::vector<Expr> &i) {
          return select(positive(i), constant(0, dt), read(g, i) * read(x, i));
        });
        return std::vector<ComputeRef>{dx, dalpha};
      });
}

} // namespace loupe::ops
