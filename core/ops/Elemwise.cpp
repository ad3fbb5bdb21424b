// Elementwise ops: unary math, scalar arithmetic, *_like fills, and same-shape binary ops.
#include "core/ops/OpHelpers.h"

#include <cmath>

namespace loupe::ops {

namespace {

// NNVM's unary elementwise ops may write into their input (FInplaceOption {0, 0}); binary
// ones into either input ({0, 0}, {1, 0}).
const std::vector<std::pair<int, int>> kUnaryInplace{{0, 0}};
const std::vector<std::pair<int, int>> kBinaryInplace{{0, 0}, {1, 0}};

OpDef &unary(const char *name, const char *doc, std::function<double(double)> f) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .setPattern(kElemWise)
                  .shape(sameShapeRule)
                  .kernel(unaryKernel(std::move(f)));
  op.inplace = kUnaryInplace;
  return op;
}

OpDef &scalarOp(const char *name, const char *doc, std::function<double(double, double)> f) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .param("scalar", ParamKind::Float, std::nullopt, "the scalar operand")
                  .setPattern(kElemWise)
                  .shape(sameShapeRule)
                  .kernel(unaryAttrKernel(
                      [f](double x, const Attrs &a) { return f(x, a.getFloat("scalar")); }));
  op.inplace = kUnaryInplace;
  return op;
}

OpDef &binary(const char *name, const char *doc, int pattern,
              std::function<double(double, double)> f) {
  OpDef &op = OpRegistry::get()
                  .add(name)
                  .describe(doc)
                  .arguments({"lhs", "rhs"})
                  .setPattern(pattern)
                  .shape(sameShapeRule)
                  .kernel(binaryBroadcastKernel(std::move(f)));
  op.inplace = kBinaryInplace;
  return op;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

} // namespace

void registerElemwiseOps() {
  unary("relu", "max(x, 0)", [](double x) { return x > 0 ? x : 0.0; });
  unary("sigmoid", "1 / (1 + exp(-x))", sigmoid);
  unary("tanh", "hyperbolic tangent", [](double x) { return std::tanh(x); });
  unary("exp", "e to the x", [](double x) { return std::exp(x); });
  unary("log", "natural logarithm", [](double x) { return std::log(x); });
  unary("sqrt", "square root", [](double x) { return std::sqrt(x); });
  unary("negative", "-x", [](double x) { return -x; });
  unary("copy", "identity copy", [](double x) { return x; });
  unary("block_grad", "identity that stops gradients", [](double x) { return x; });
  unary("zeros_like", "zeros of the input's shape and dtype", [](double) { return 0.0; });
  unary("ones_like", "ones of the input's shape and dtype", [](double) { return 1.0; });

  OpRegistry::get()
      .add("leaky_relu")
      .describe("x if x > 0 else alpha * x")
      .param("alpha", ParamKind::Float, "0.25", "slope for x < 0")
      .setPattern(kElemWise)
      .shape(sameShapeRule)
      .kernel(unaryAttrKernel(
          [](double x, const Attrs &a) { return x > 0 ? x : a.getFloat("alpha") * x; }));

  OpRegistry::get()
      .add("clip")
      .describe("clamps x into [a_min, a_max]")
      .param("a_min", ParamKind::Float, std::nullopt, "lower bound")
      .param("a_max", ParamKind::Float, std::nullopt, "upper bound")
      .setPattern(kElemWise)
      .shape(sameShapeRule)
      .kernel(unaryAttrKernel([](double x, const Attrs &a) {
        return std::min(std::max(x, a.getFloat("a_min")), a.getFloat("a_max"));
      }));

  OpRegistry::get()
      .add("full_like")
      .describe("fill_value in the input's shape and dtype")
      .param("fill_value", ParamKind::Float, std::nullopt, "the value")
      .setPattern(kElemWise)
      .shape(sameShapeRule)
      .kernel(unaryAttrKernel([](double, const Attrs &a) { return a.getFloat("fill_value"); }));

  std::vector<std::string> dtypes;
  for (int i = 0; i < kNumDTypes; ++i)
    dtypes.emplace_back(dtypeName(i));
  OpRegistry::get()
      .add("cast")
      .describe("converts to another dtype")
      .param("dtype", ParamKind::Enum, std::nullopt, "target dtype", dtypes)
      .setPattern(kElemWise)
      .shape(sameShapeRule)
      .type([](TypeCtx &c) { c.assignOut(0, *dtypeFromName(c.attrs.getStr("dtype"))); })
      .kernel(unaryKernel([](double x) { return x; }));

  scalarOp("__add_scalar__", "x + scalar", [](double x, double s) { return x + s; });
  scalarOp("__sub_scalar__", "x - scalar", [](double x, double s) { return x - s; });
  scalarOp("__rsub_scalar__", "scalar - x", [](double x, double s) { return s - x; });
  scalarOp("__mul_scalar__", "x * scalar", [](double x, double s) { return x * s; });
  scalarOp("__div_scalar__", "x / scalar", [](double x, double s) { return x / s; });
  scalarOp("__rdiv_scalar__", "scalar / x", [](double x, double s) { return s / x; });
  scalarOp("__pow_scalar__", "x ** scalar", [](double x, double s) { return std::pow(x, s); });
  scalarOp("__rpow_scalar__", "scalar ** x", [](double x, double s) { return std::pow(s, x); });

  // NNVM registers elemwise_add/sub/mul/div with the Broadcast pattern (nnvm-spec §4).
  binary("elemwise_add", "lhs + rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a + b; });
  binary("elemwise_sub", "lhs - rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a - b; });
  binary("elemwise_mul", "lhs * rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a * b; });
  binary("elemwise_div", "lhs / rhs (same shapes)", kBroadcast,
         [](double a, double b) { return a / b; });
  binary("greater", "1 where lhs > rhs else 0", kElemWise,
         [](double a, double b) { return a > b ? 1.0 : 0.0; });
  binary("less", "1 where lhs < rhs else 0", kElemWise,
         [](double a, double b) { return a < b ? 1.0 : 0.0; });

  OpDef &sum = OpRegistry::get()
                   .add("elemwise_sum")
                   .describe("sum of any number of same-shape inputs")
                   .setPattern(kElemWise)
                   .shape(sameShapeRule)
                   .kernel([](const Attrs &, const std::vector<const Tensor *> &in,
                              std::vector<Tensor> &out) {
                     for (const Tensor *t : in)
                       for (int64_t i = 0; i < out[0].size(); ++i)
                         out[0].data[i] += t->data[i];
                   });
  sum.variadic = true;
  sum.keyVarNumArgs = "num_args";
}

} // namespace loupe::ops
