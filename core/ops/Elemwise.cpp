// Elementwise ops of NNVM's core: identities and *_like fills, cast, scalar arithmetic,
// same-shape binary ops and elemwise_sum.
#include "core/ops/OpHelpers.h"

#include <cmath>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

// NNVM's unary elementwise ops may write into their input (FInplaceOption {0, 0}); binary
// ones into either input ({0, 0}, {1, 0}).
const std::vector<std::pair<int, int>> kUnaryInplace{{0, 0}};
const std::vector<std::pair<int, int>> kBinaryInplace{{0, 0}, {1, 0}};

OpDef &scalarOp(const char *name, const char *doc, std::function<double(double, double)> f) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .param("scalar", ParamKind::Float, std::nullopt, "the scalar operand")
                  .setPattern(kElemWise)
                  .acceptScalars()
                  .shape(sameShapeRule)
                  .symbolic(symSameShape)
                  .kernel(unaryAttrKernel(
                      [f](double x, const Attrs &a) { return f(x, a.getFloat("scalar")); }));
  op.inplace = kUnaryInplace;
  op.layout(layoutArbitrary);
  return op;
}

OpDef &binary(const char *name, const char *doc, int pattern,
              std::function<double(double, double)> f) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .arguments({"lhs", "rhs"})
                  .setPattern(pattern)
                  .acceptScalars()
                  .shape(sameShapeRule)
                  .symbolic(symSameShape)
                  .kernel(binaryBroadcastKernel(std::move(f)))
                  .layout(layoutKeepLeft);
  op.inplace = kBinaryInplace;
  return op;
}

// The `scalar` attribute as a constant of x's dtype, for the lowering of the scalar ops.
Expr sc(const Expr &x, const Attrs &a) { return constant(a.getFloat("scalar"), x->dtype); }

std::string scalarText(const NodePtr &n) { return n->parsed.raw("scalar"); }
double scalarOf(const NodePtr &n) { return n->parsed.getFloat("scalar"); }

} // namespace

void registerElemwiseOps() {
  unaryOp("copy", "identity copy", [](double x) { return x; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &) { return x; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("copy", n->name + "_grad", {g[0]})};
      });
  unaryOp("block_grad", "identity that stops gradients", [](double x) { return x; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &) { return x; }))
      .grad(zeroGrad);
  unaryOp("zeros_like", "zeros of the input's shape and dtype", [](double) { return 0.0; })
      .lowerSymbolic(
          elementwiseLower([](const Expr &x, const Attrs &) { return constant(0, x->dtype); }))
      .grad(zeroGrad);
  unaryOp("ones_like", "ones of the input's shape and dtype", [](double) { return 1.0; })
      .lowerSymbolic(
          elementwiseLower([](const Expr &x, const Attrs &) { return constant(1, x->dtype); }))
      .grad(zeroGrad);
  OpRegistry::get()
      .add("full_like")
      .describe("fill_value in the input's shape and dtype")
      .param("fill_value", ParamKind::Float, std::nullopt, "the value")
      .layout(layoutArbitrary)
      .setPattern(kElemWise)
      .acceptScalars()
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .kernel(unaryAttrKernel([](double, const Attrs &a) { return a.getFloat("fill_value"); }))
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) {
        return constant(a.getFloat("fill_value"), x->dtype);
      }))
      .grad(zeroGrad);

  std::vector<std::string> dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    dtypes.emplace_back(dtypeName(i));
  OpRegistry::get()
      .add("cast")
      .describe("converts to another dtype")
      .param("dtype", ParamKind::Enum, std::nullopt, "target dtype", dtypes)
      .layout(layoutArbitrary)
      .setPattern(kElemWise)
      .acceptScalars()
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .type([](TypeCtx &c) { c.assignOut(0, *dtypeFromName(c.attrs.getStr("dtype"))); })
      .kernel(unaryKernel([](double x) { return x; }))
      .lowerSymbolic([](const Attrs &a, const std::vector<ComputeRef> &in,
                        const std::vector<Shape> &shapes, const std::vector<int> &types) {
        ComputeRef x = in[0];
        return std::vector<ComputeRef>{
            loop::compute(shapes[0], types[0], [&](const std::vector<Expr> &i) {
              return loop::cast(types[0], read(x, i));
            })};
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // A cast to an integer type is piecewise constant; to a float type, the identity.
        int to = *dtypeFromName(n->parsed.getStr("dtype"));
        if (!dtypeIsFloat(to))
          return std::vector<NodeEntry>{mk("zeros_like", n->name + "_grad", {n->inputs[0]})};
        return std::vector<NodeEntry>{mk("_cast_grad", n->name + "_grad", {g[0], n->inputs[0]})};
      });
  OpRegistry::get()
      .add("_cast_grad")
      .describe("gradient of cast: ograd converted back to the data's dtype")
      .arguments({"ograd", "data"})
      .setPattern(kOpaque)
      .symbolic(symLikeInputs({1}))
      .shape([](ShapeCtx &c) {
        if (c.in[0].rankKnown())
          c.assignOut(0, c.in[0]);
        if (c.in[1].rankKnown())
          c.assignOut(0, c.in[1]);
      })
      .type([](TypeCtx &c) {
        if (c.in[1] != -1)
          c.assignOut(0, c.in[1]);
      })
      .kernel(unaryKernel([](double x) { return x; }))
      .lower([](const Attrs &, const std::vector<loop::ComputeRef> &in,
                const std::vector<Shape> &shapes, const std::vector<int> &types) {
        loop::ComputeRef g = in[0];
        return std::vector<loop::ComputeRef>{
            loop::compute(shapes[0], types[0], [&](const std::vector<loop::Expr> &i) {
              return loop::cast(types[0], loop::read(g, i));
            })};
      });

  auto pass = [](const NodePtr &n, const std::vector<NodeEntry> &g) {
    return std::vector<NodeEntry>{mk("copy", n->name + "_grad", {g[0]})};
  };
  scalarOp("__add_scalar__", "x + scalar", [](double x, double s) { return x + s; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) { return x + sc(x, a); }))
      .grad(pass);
  scalarOp("__sub_scalar__", "x - scalar", [](double x, double s) { return x - s; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) { return x - sc(x, a); }))
      .grad(pass);
  scalarOp("__rsub_scalar__", "scalar - x", [](double x, double s) { return s - x; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) { return sc(x, a) - x; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("negative", n->name + "_grad", {g[0]})};
      });
  scalarOp("__mul_scalar__", "x * scalar", [](double x, double s) { return x * s; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) { return x * sc(x, a); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{
            mk("__mul_scalar__", n->name + "_grad", {g[0]}, {{"scalar", scalarText(n)}})};
      });
  scalarOp("__div_scalar__", "x / scalar", [](double x, double s) { return x / s; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) { return x / sc(x, a); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{
            mk("__div_scalar__", n->name + "_grad", {g[0]}, {{"scalar", scalarText(n)}})};
      });
  scalarOp("__rdiv_scalar__", "scalar / x", [](double x, double s) { return s / x; })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) { return sc(x, a) / x; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // d(s/x) = -s / x^2
        const NodeEntry &x = n->inputs[0];
        NodeEntry sq = mk("elemwise_mul", n->name + "_sub0", {x, x});
        NodeEntry q = mk("elemwise_div", n->name + "_sub1", {g[0], sq});
        return std::vector<NodeEntry>{
            mk("__mul_scalar__", n->name + "_grad", {q}, {{"scalar", pyFloatRepr(-scalarOf(n))}})};
      });
  scalarOp("__pow_scalar__", "x ** scalar", [](double x, double s) { return std::pow(x, s); })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) {
        return call("pow", {x, sc(x, a)}, x->dtype);
      }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // s * x^(s-1)
        NodeEntry p = mk("__pow_scalar__", n->name + "_sub0", {n->inputs[0]},
                         {{"scalar", pyFloatRepr(scalarOf(n) - 1)}});
        NodeEntry d = mk("__mul_scalar__", n->name + "_sub1", {p}, {{"scalar", scalarText(n)}});
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], d})};
      });
  scalarOp("__rpow_scalar__", "scalar ** x", [](double x, double s) { return std::pow(s, x); })
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) {
        return call("pow", {sc(x, a), x}, x->dtype);
      }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // s^x * ln(s)
        NodeEntry d = mk("__mul_scalar__", n->name + "_sub0", {outOf(n)},
                         {{"scalar", pyFloatRepr(std::log(scalarOf(n)))}});
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], d})};
      });

  // NNVM registers elemwise_add/sub/mul/div with the Broadcast pattern (nnvm-spec §4).
  binary("elemwise_add", "lhs + rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a + b; })
      .lowerSymbolic(broadcastLower([](const Expr &a, const Expr &b) { return a + b; }, "elemwise"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("copy", n->name + "_grad_0", {g[0]}),
                                      mk("copy", n->name + "_grad_1", {g[0]})};
      });
  binary("elemwise_sub", "lhs - rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a - b; })
      .lowerSymbolic(broadcastLower([](const Expr &a, const Expr &b) { return a - b; }, "elemwise"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("copy", n->name + "_grad_0", {g[0]}),
                                      mk("negative", n->name + "_grad_1", {g[0]})};
      });
  binary("elemwise_mul", "lhs * rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a * b; })
      .lowerSymbolic(broadcastLower([](const Expr &a, const Expr &b) { return a * b; }, "elemwise"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{
            mk("elemwise_mul", n->name + "_grad_0", {g[0], n->inputs[1]}),
            mk("elemwise_mul", n->name + "_grad_1", {g[0], n->inputs[0]})};
      });
  binary("elemwise_div", "lhs / rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a / b; })
      .lowerSymbolic(broadcastLower([](const Expr &a, const Expr &b) { return a / b; }, "elemwise"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g / b and -(g a) / (b b)
        const NodeEntry &a = n->inputs[0], &b = n->inputs[1];
        NodeEntry ga = mk("elemwise_mul", n->name + "_sub0", {g[0], a});
        NodeEntry bb = mk("elemwise_mul", n->name + "_sub1", {b, b});
        NodeEntry q = mk("elemwise_div", n->name + "_sub2", {ga, bb});
        return std::vector<NodeEntry>{mk("elemwise_div", n->name + "_grad_0", {g[0], b}),
                                      mk("negative", n->name + "_grad_1", {q})};
      });
  binary("greater", "1 where lhs > rhs else 0", kElemWise,
         [](double a, double b) { return a > b ? 1.0 : 0.0; })
      .lowerSymbolic(broadcastLower(
          [](const Expr &a, const Expr &b) { return boolToValue(gt(a, b), a->dtype); }, "elemwise"))
      .grad(zeroGrad);
  binary("less", "1 where lhs < rhs else 0", kElemWise,
         [](double a, double b) { return a < b ? 1.0 : 0.0; })
      .lowerSymbolic(broadcastLower(
          [](const Expr &a, const Expr &b) { return boolToValue(lt(a, b), a->dtype); }, "elemwise"))
      .grad(zeroGrad);

  OpDef &sum = OpRegistry::get()
                   .add("elemwise_sum")
                   .describe("sum of any number of same-shape inputs")
                   .setPattern(kElemWise)
                   .acceptScalars()
                   .shape(sameShapeRule)
                   .symbolic(symSameShape)
                   .kernel([](const Attrs &, const std::vector<const Tensor *> &in,
                              std::vector<Tensor> &out) {
                     for (const Tensor *t : in)
                       for (int64_t i = 0; i < out[0].size(); ++i)
                         out[0].data[i] += t->data[i];
                   })
                   .lower([](const Attrs &, const std::vector<ComputeRef> &in,
                             const std::vector<Shape> &shapes, const std::vector<int> &types) {
                     return std::vector<ComputeRef>{
                         loop::compute(shapes[0], types[0], [&](const std::vector<Expr> &i) {
                           Expr v = read(in[0], i);
                           for (size_t k = 1; k < in.size(); ++k)
                             v = v + read(in[k], i);
                           return v;
                         })};
                   });
  sum.variadic = true;
  sum.layout(layoutFixed(static_cast<size_t>(-1), true));
  sum.keyVarNumArgs = "num_args";
  sum.grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
    std::vector<NodeEntry> out;
    for (size_t i = 0; i < n->inputs.size(); ++i)
      out.push_back(mk("copy", n->name + "_grad_" + std::to_string(i), {g[0]}));
    return out;
  });
}

} // namespace loupe::ops
