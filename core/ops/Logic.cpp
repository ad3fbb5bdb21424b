// Comparison, logic and selection ops (Relay's): broadcast_equal … broadcast_less_equal,
// logical_and/or/xor/not and where, with bool results and conditions.
#include "core/ops/OpHelpers.h"

namespace loupe::ops {

using namespace loupe::loop;

namespace {

// Operands of one dtype (whichever is known), a bool result.
void compareType(TypeCtx &c) {
  for (size_t i = 0; i < c.in.size(); ++i)
    if (c.in[i] != -1)
      for (size_t j = 0; j < c.in.size(); ++j)
        c.assignIn(j, c.in[i]);
  c.assignOut(0, kBoolean);
}

// Bool operands, a bool result.
void logicType(TypeCtx &c) {
  for (size_t i = 0; i < c.in.size(); ++i)
    c.assignIn(i, kBoolean);
  c.assignOut(0, kBoolean);
}

// A bool tensor's value (0 or 1, read as an integer) as a condition.
Expr truth(const Expr &b) { return ne(b, constant(0, b->dtype)); }

// A broadcasting binary op with a bool result: `f` computes it by reference, `lowered` in the
// loop IR (a condition), `type` constrains the operands.
void boolBinary(const char *name, const char *doc, InferTypeFn type,
                std::function<bool(double, double)> f,
                std::function<Expr(const Expr &, const Expr &)> lowered) {
  OpRegistry::get()
      .add(name)
      .describe(doc)
      .arguments({"lhs", "rhs"})
      .setPattern(kBroadcast)
      .acceptScalars()
      .shape(broadcastBinaryShape)
      .symbolic(symBroadcastBinary)
      .type(std::move(type))
      .kernel(binaryBroadcastKernel([f](double a, double b) { return f(a, b) ? 1.0 : 0.0; }))
      .lowerSymbolic(broadcastLower(
          [lowered](const Expr &a, const Expr &b) { return boolToValue(lowered(a, b), kBoolean); }))
      .layout(layoutBroadcast)
      .grad(zeroGrad);
}

// NNVM's broadcast comparisons returned 1/0 in the operands' dtype; Relay's and ONNX's return
// bool, as these do.
void comparison(const char *name, const char *doc, std::function<bool(double, double)> f,
                std::function<Expr(const Expr &, const Expr &)> cmp) {
  boolBinary(name, doc, compareType, std::move(f), std::move(cmp));
}

// Logic reads its bool operands as conditions.
void logic(const char *name, const char *doc, std::function<bool(bool, bool)> f,
           std::function<Expr(const Expr &, const Expr &)> op) {
  boolBinary(
      name, doc, logicType, [f](double a, double b) { return f(a != 0, b != 0); },
      [op](const Expr &a, const Expr &b) { return op(truth(a), truth(b)); });
}

} // namespace

void registerLogicOps() {
  comparison(
      "broadcast_equal", "lhs == rhs with broadcasting (bool)",
      [](double a, double b) { return a == b; }, eq);
  comparison(
      "broadcast_not_equal", "lhs != rhs with broadcasting (bool)",
      [](double a, double b) { return a != b; }, ne);
  comparison(
      "broadcast_greater", "lhs > rhs with broadcasting (bool)",
      [](double a, double b) { return a > b; }, gt);
  comparison(
      "broadcast_less", "lhs < rhs with broadcasting (bool)",
      [](double a, double b) { return a < b; }, lt);
  comparison(
      "broadcast_greater_equal", "lhs >= rhs with broadcasting (bool)",
      [](double a, double b) { return a >= b; }, ge);
  comparison(
      "broadcast_less_equal", "lhs <= rhs with broadcasting (bool)",
      [](double a, double b) { return a <= b; }, le);

  logic(
      "logical_and", "lhs and rhs (bool, broadcasting)", [](bool a, bool b) { return a && b; },
      land);
  logic(
      "logical_or", "lhs or rhs (bool, broadcasting)", [](bool a, bool b) { return a || b; }, lor);
  logic(
      "logical_xor", "lhs xor rhs (bool, broadcasting)", [](bool a, bool b) { return a != b; }, ne);

  OpRegistry::get()
      .add("logical_not")
      .describe("not x (bool)")
      .setPattern(kElemWise)
      .acceptScalars()
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .type(logicType)
      .kernel(unaryKernel([](double x) { return x != 0 ? 0.0 : 1.0; }))
      .lowerSymbolic(elementwiseLower(
          [](const Expr &x, const Attrs &) { return boolToValue(lnot(truth(x)), kBoolean); }))
      .layout(layoutArbitrary)
      .grad(zeroGrad);

  OpRegistry::get()
      .add("where")
      .describe("x where condition else y, the three broadcast together")
      .arguments({"condition", "x", "y"})
      .setPattern(kBroadcast)
      .layout(layoutFixed(3, true)) // broadcasting aligns axes by position, not by name
      .acceptScalars()
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown() || !c.in[1].rankKnown() || !c.in[2].rankKnown())
          return;
        c.assignOut(0, broadcastShape(c, broadcastShape(c, c.in[0], c.in[1]), c.in[2]));
      })
      .symbolic([](const SymShapeCtx &c) {
        return std::vector<SymDims>{symBroadcast(c, symBroadcast(c, c.in[0], c.in[1]), c.in[2])};
      })
      .type([](TypeCtx &c) {
        c.assignIn(0, kBoolean);
        int t = c.in[1] != -1 ? c.in[1] : c.in[2] != -1 ? c.in[2] : c.out[0];
        if (t != -1) {
          c.assignIn(1, t);
          c.assignIn(2, t);
          c.assignOut(0, t);
        }
      })
      .kernel([](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        const Tensor &cond = *in[0], &x = *in[1], &y = *in[2];
        int64_t k = 0;
        forEachIndex(out[0].shape, [&](const std::vector<int64_t> &idx) {
          out[0].data[k++] = cond.data[broadcastOffset(cond.shape, idx)] != 0
                                 ? x.data[broadcastOffset(x.shape, idx)]
                                 : y.data[broadcastOffset(y.shape, idx)];
        });
      })
      // Broadcast as broadcastLower reads (a symbolic dimension is never the 1 it broadcasts).
      .lowerSymbolic([](const Attrs &, const std::vector<ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &types) {
        ComputeRef cond = in[0], x = in[1], y = in[2];
        return std::vector<ComputeRef>{compute(
            shapes[0], types[0],
            [&](const std::vector<Expr> &i) {
              return select(truth(read(cond, broadcastIndices(cond->shape, i))),
                            read(x, broadcastIndices(x->shape, i)),
                            read(y, broadcastIndices(y->shape, i)));
            },
            "compute", "broadcast")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g flows to x where the condition holds and to y elsewhere, summed back to each shape.
        const NodeEntry &cond = n->inputs[0];
        NodeEntry zero = mk("zeros_like", n->name + "_sub0", {g[0]});
        NodeEntry gx = mk("where", n->name + "_sub1", {cond, g[0], zero});
        NodeEntry gy = mk("where", n->name + "_sub2", {cond, zero, g[0]});
        return std::vector<NodeEntry>{mk("zeros_like", n->name + "_grad_0", {cond}),
                                      mk("collapse_sum", n->name + "_grad_1", {gx, n->inputs[1]}),
                                      mk("collapse_sum", n->name + "_grad_2", {gy, n->inputs[2]})};
      });
}

} // namespace loupe::ops
