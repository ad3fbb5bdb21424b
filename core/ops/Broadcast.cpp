// Broadcast ops: NumPy-broadcasting binary arithmetic (and bit shifts) and broadcast_to.
#include "core/ops/OpHelpers.h"

#include "core/DType.h"

#include <algorithm>
#include <cmath>

namespace loupe::ops {

namespace {

OpDef &binary(const char *name, const char *alias, const char *doc,
              std::function<double(double, double)> f) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .arguments({"lhs", "rhs"})
                  .setPattern(kBroadcast)
                  .acceptScalars()
                  .shape(broadcastBinaryShape)
                  .symbolic(symBroadcastBinary)
                  .kernel(binaryBroadcastKernel(std::move(f)))
                  .inplaceWith({{0, 0}, {1, 0}})
                  .layout(layoutBroadcast);
  if (alias)
    op.alias(alias);
  return op;
}

// The gradient for input i of a broadcasting node: `g` summed back to that input's shape.
NodeEntry collapse(const NodePtr &n, size_t i, const NodeEntry &g, const char *suffix) {
  return mk("collapse_sum", n->name + suffix, {g, n->inputs[i]});
}

// max/min: g to lhs where `keepLhs(lhs, rhs)` holds, else to rhs, each summed back to its shape.
std::vector<NodeEntry> selectGrad(const NodePtr &n, const NodeEntry &g, const char *keepLhs) {
  NodeEntry cond = mk(keepLhs, n->name + "_sub0", {n->inputs[0], n->inputs[1]});
  NodeEntry zero = mk("zeros_like", n->name + "_sub1", {g});
  NodeEntry dl = mk("where", n->name + "_dlhs_where", {cond, g, zero});
  NodeEntry dr = mk("where", n->name + "_drhs_where", {cond, zero, g});
  return {collapse(n, 0, dl, "_dlhs_sum"), collapse(n, 1, dr, "_drhs_sum")};
}

// a mod b = a - round(a / b) b with `round` truncating or flooring: d/da = 1, d/db = -round(a/b).
std::vector<NodeEntry> modGrad(const NodePtr &n, const NodeEntry &g, const char *round) {
  NodeEntry q = mk("broadcast_div", n->name + "_sub0", {n->inputs[0], n->inputs[1]});
  NodeEntry r = mk(round, n->name + "_sub1", {q});
  NodeEntry gr = mk("broadcast_mul", n->name + "_sub2", {g, r});
  NodeEntry neg = mk("negative", n->name + "_drhs_neg", {gr});
  return {collapse(n, 0, g, "_dlhs_sum"), collapse(n, 1, neg, "_drhs_sum")};
}

} // namespace

void registerBroadcastOps() {
  // The seed era had no gradients for these; later NNVM summed the output gradient back over
  // the broadcast axes (collapse_sum), under the node names used here.
  binary("broadcast_add", "__add_symbol__", "lhs + rhs with broadcasting",
         [](double a, double b) { return a + b; })
      .lowerSymbolic(broadcastLower([](const loop::Expr &a, const loop::Expr &b) { return a + b; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{collapse(n, 0, g[0], "_dlhs"), collapse(n, 1, g[0], "_drhs")};
      });
  binary("broadcast_sub", "__sub_symbol__", "lhs - rhs with broadcasting",
         [](double a, double b) { return a - b; })
      .lowerSymbolic(broadcastLower([](const loop::Expr &a, const loop::Expr &b) { return a - b; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        NodeEntry neg = mk("negative", n->name + "_drhs_neg", {g[0]});
        return std::vector<NodeEntry>{collapse(n, 0, g[0], "_dlhs"), collapse(n, 1, neg, "_drhs")};
      });
  binary("broadcast_mul", "__mul_symbol__", "lhs * rhs with broadcasting",
         [](double a, double b) { return a * b; })
      .lowerSymbolic(broadcastLower([](const loop::Expr &a, const loop::Expr &b) { return a * b; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        NodeEntry dl = mk("broadcast_mul", n->name + "_dlhs_mul", {n->inputs[1], g[0]});
        NodeEntry dr = mk("broadcast_mul", n->name + "_drhs_mul", {n->inputs[0], g[0]});
        return std::vector<NodeEntry>{collapse(n, 0, dl, "_dlhs_sum"),
                                      collapse(n, 1, dr, "_drhs_sum")};
      });
  binary("broadcast_div", "__div_symbol__", "lhs / rhs with broadcasting",
         [](double a, double b) { return a / b; })
      .lowerSymbolic(broadcastLower([](const loop::Expr &a, const loop::Expr &b) { return a / b; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // d(a/b)/da = 1/b; d(a/b)/db = -a/b^2 = y / -b
        NodeEntry dl = mk("broadcast_div", n->name + "_dlhs_div", {g[0], n->inputs[1]});
        NodeEntry negB = mk("negative", n->name + "_rhs_neg", {n->inputs[1]});
        NodeEntry dy = mk("broadcast_div", n->name + "_drhs_div", {outOf(n), negB});
        NodeEntry dr = mk("broadcast_mul", n->name + "_drhs_mul", {dy, g[0]});
        return std::vector<NodeEntry>{collapse(n, 0, dl, "_dlhs_sum"),
                                      collapse(n, 1, dr, "_drhs_sum")};
      });

  binary("broadcast_max", nullptr, "max(lhs, rhs) with broadcasting",
         [](double a, double b) { return std::max(a, b); })
      .lowerSymbolic(
          broadcastLower([](const loop::Expr &a, const loop::Expr &b) { return loop::max(a, b); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return selectGrad(n, g[0], "broadcast_greater_equal");
      });
  binary("broadcast_min", nullptr, "min(lhs, rhs) with broadcasting",
         [](double a, double b) { return std::min(a, b); })
      .lowerSymbolic(
          broadcastLower([](const loop::Expr &a, const loop::Expr &b) { return loop::min(a, b); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return selectGrad(n, g[0], "broadcast_less_equal");
      });
  binary("broadcast_pow", nullptr, "lhs ** rhs with broadcasting",
         [](double a, double b) { return std::pow(a, b); })
      .inplaceWith({{0, 0}}) // not the exponent's buffer: its dtype may differ
      .type([](TypeCtx &c) {
        // ONNX's Pow takes an exponent of any numeric type; the result has the base's.
        if (c.in[0] != -1)
          c.assignOut(0, c.in[0]);
        else if (c.out[0] != -1)
          c.assignIn(0, c.out[0]);
      })
      .lower([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        loop::ComputeRef a = in[0], b = in[1];
        // Floats raise in their own type; integers through float64 (exact below 2^53).
        int t = dtypeIsFloat(types[0]) ? types[0] : kFloat64;
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &i) {
              loop::Expr x = loop::cast(t, loop::read(a, broadcastIndices(a->shape, i)));
              loop::Expr y = loop::cast(t, loop::read(b, broadcastIndices(b->shape, i)));
              return loop::cast(types[0], loop::call("pow", {x, y}, t));
            },
            "compute", "broadcast")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // d/da = b a^(b-1) = y b / a; d/db = y ln(a).
        const NodeEntry &a = n->inputs[0], &b = n->inputs[1];
        NodeEntry bm1 = mk("__sub_scalar__", n->name + "_sub0", {b}, {{"scalar", "1"}});
        NodeEntry p = mk("broadcast_pow", n->name + "_sub1", {a, bm1});
        NodeEntry da = mk("broadcast_mul", n->name + "_sub2", {b, p});
        NodeEntry db =
            mk("broadcast_mul", n->name + "_sub3", {outOf(n), mk("log", n->name + "_sub4", {a})});
        return std::vector<NodeEntry>{
            collapse(n, 0, mk("broadcast_mul", n->name + "_dlhs_mul", {g[0], da}), "_dlhs_sum"),
            collapse(n, 1, mk("broadcast_mul", n->name + "_drhs_mul", {g[0], db}), "_drhs_sum")};
      });
  binary("broadcast_mod", nullptr,
         "lhs mod rhs with broadcasting, the sign of lhs (C's fmod, topi's truncmod)",
         [](double a, double b) { return std::fmod(a, b); })
      .lowerSymbolic(broadcastLower([](const loop::Expr &a, const loop::Expr &b) { return a % b; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return modGrad(n, g[0], "trunc");
      });
  // Relay's left_shift and right_shift (ONNX's BitShift) on unsigned integers, logical, with
  // broadcasting; a shift by the type's width or more gives 0 (the left shift wraps).
  for (bool left : {true, false}) {
    binary(left ? "left_shift" : "right_shift", nullptr,
           left ? "lhs << rhs, unsigned integers, with broadcasting"
                : "lhs >> rhs (logical), unsigned integers, with broadcasting",
           [left](double a, double b) { return loop::shiftBits(a, b, left); })
        .type([](TypeCtx &c) {
          int t = c.in[0] != -1 ? c.in[0] : c.in[1] != -1 ? c.in[1] : c.out[0];
          if (t == -1)
            return;
          if (!dtypeIsUnsigned(t))
            fail("operator ", c.node, " (", c.op,
                 "): shifts take unsigned integers (uint8/16/32/64), got ", dtypeName(t));
          c.assignIn(0, t);
          c.assignIn(1, t);
          c.assignOut(0, t);
        })
        .lowerSymbolic(broadcastLower([left](const loop::Expr &a, const loop::Expr &b) {
          return loop::binary(left ? loop::BinOp::Shl : loop::BinOp::Shr, a, b);
        }));
  }
  binary("broadcast_floor_mod", nullptr,
         "lhs mod rhs with broadcasting, the sign of rhs (Python's %, topi's floormod)",
         [](double a, double b) {
           double r = std::fmod(a, b);
           return r != 0 && (r < 0) != (b < 0) ? r + b : r;
         })
      .lowerSymbolic(broadcastLower([](const loop::Expr &a, const loop::Expr &b) {
        using namespace loop;
        Expr zero = constant(0, a->dtype);
        Expr r = a % b;
        return select(land(ne(r, zero), ne(lt(r, zero), lt(b, zero))), r + b, r);
      }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return modGrad(n, g[0], "floor");
      });

  OpRegistry::get()
      .add("broadcast_to")
      .describe("broadcasts the input to `shape` (same rank; 1 stretches)")
      .layout(layoutFixed(1, false))
      .param("shape", ParamKind::SizeTuple, "()",
             "target shape (its sizes may be expressions of size symbols)")
      .setPattern(kBroadcast)
      .shape([](ShapeCtx &c) {
        // A target with size symbols is the symbolic rule's.
        Shape t = parseShape(c.attrs.getStr("shape"));
        if (!c.in[0].rankKnown() || t.isSymbolic())
          return;
        if (t.size() != c.in[0].size())
          c.error(cat("shape ", shapeToTuple(t), " must have the input's rank ", c.in[0].size()));
        for (size_t i = 0; i < t.size(); ++i)
          if (c.in[0][i] != 1 && c.in[0][i] != t[i])
            c.error(cat("cannot broadcast ", shapeToList(c.in[0]), " to ", shapeToTuple(t)));
        c.assignOut(0, t);
      })
      .symbolic([](const SymShapeCtx &c) {
        // Each input dimension stretches from 1 or is the target's own; a size against a symbol
        // (or a symbol against a size) is the run's to check, as broadcasting's rule does.
        SymDims t = parseShape(c.attrs.getStr("shape")).dims();
        const SymDims &x = c.in[0];
        if (t.size() != x.size())
          c.error(cat("shape ", c.attrs.getStr("shape"), " must have the input's rank ", x.size()));
        for (size_t i = 0; i < t.size(); ++i)
          if (x[i] != SymExpr(1) && x[i] != t[i] && x[i].isConstant() == t[i].isConstant())
            c.error(cat("cannot broadcast ", shapeToList(Shape::symbolic(x)), " to ",
                        c.attrs.getStr("shape")));
        return std::vector<SymDims>{t};
      })
      .kernel([](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        int64_t k = 0;
        forEachIndex(out[0].shape, [&](const std::vector<int64_t> &idx) {
          out[0].data[k++] = in[0]->data[broadcastOffset(in[0]->shape, idx)];
        });
      })
      .lowerSymbolic([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &types) {
        loop::ComputeRef x = in[0];
        return std::vector<loop::ComputeRef>{loop::compute(
            shapes[0], types[0],
            [&](const std::vector<loop::Expr> &i) {
              return loop::read(x, broadcastIndices(x->shape, i));
            },
            "compute", "broadcast", "ax")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{collapse(n, 0, g[0], "_grad")};
      });

  OpRegistry::get()
      .add("collapse_sum")
      .describe("sums lhs down to the shape of rhs (reverses NumPy broadcasting)")
      .layout(layoutFixed(1, false))
      .arguments({"lhs", "rhs"})
      .setPattern(kCommReduce)
      .acceptScalars() // the gradient of a broadcast op's scalar operand
      .shape([](ShapeCtx &c) {
        if (!c.in[0].rankKnown() || !c.in[1].rankKnown())
          return;
        // rhs must broadcast to lhs.
        if (broadcastShape(c, c.in[0], c.in[1]) != c.in[0])
          c.error(cat("cannot sum ", shapeToList(c.in[0]), " down to ", shapeToList(c.in[1])));
        c.assignOut(0, c.in[1]);
      })
      .symbolic(symLikeInputs({1}))
      .kernel([](const Attrs &, const std::vector<const Tensor *> &in, std::vector<Tensor> &out) {
        int64_t k = 0;
        forEachIndex(in[0]->shape, [&](const std::vector<int64_t> &idx) {
          out[0].data[broadcastOffset(out[0].shape, idx)] += in[0]->data[k++];
        });
      })
      .lower([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        // A sum over the lhs axes that broadcasting added or stretched from 1.
        using namespace loop;
        ComputeRef x = in[0];
        const Shape &xs = x->shape, &os = shapes[0];
        size_t lead = xs.size() - os.size();
        std::vector<IterVar> r;
        std::vector<int> reduced(xs.size(), -1);
        for (size_t d = 0; d < xs.size(); ++d)
          if (d < lead || (os[d - lead] == 1 && xs[d] != 1)) {
            reduced[d] = static_cast<int>(r.size());
            r.push_back(reduceAxis(xs[d], "k" + std::to_string(d)));
          }
        return std::vector<ComputeRef>{compute(
            os, types[0],
            [&](const std::vector<Expr> &i) {
              std::vector<Expr> idx;
              for (size_t d = 0; d < xs.size(); ++d)
                idx.push_back(reduced[d] >= 0 ? r[reduced[d]].var
                              : xs[d] == 1    ? intImm(0)
                                              : i[d - lead]);
              if (r.empty())
                return read(x, idx);
              return reduce(Combiner::Sum, read(x, idx), r);
            },
            "compute", r.empty() ? "injective" : "reduce", "ax")};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g broadcast back to lhs's shape.
        NodeEntry z = mk("zeros_like", n->name + "_sub0", {n->inputs[0]});
        return std::vector<NodeEntry>{mk("broadcast_add", n->name + "_grad_0", {z, g[0]}),
                                      mk("zeros_like", n->name + "_grad_1", {n->inputs[1]})};
      });
}

} // namespace loupe::ops
