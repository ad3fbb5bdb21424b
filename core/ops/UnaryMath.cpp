// Unary math: exp, log, sqrt, negative and tanh; abs, sign and rounding; erf and the
// trigonometric and hyperbolic family; isnan and isinf.
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <cmath>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

constexpr double kTwoBySqrtPi = 1.12837916709551257390; // 2/sqrt(pi), erf's slope at 0

// A libm function of floats (integers convert to float64 and back).
ElementLower libmCall(const char *fn) {
  return [fn](const Expr &x, const Attrs &) {
    if (dtypeIsFloat(x->dtype))
      return call(fn, {x}, x->dtype);
    return cast(x->dtype, call(fn, {cast(kFloat64, x)}, kFloat64));
  };
}

Expr c(double v, const Expr &like) { return constant(v, like->dtype); }

// 1 / sqrt(s * x^2 + t): the derivatives of asin, acos, asinh and acosh.
NodeEntry invSqrtQuadratic(GradBuilder &b, double s, double t) {
  NodeEntry sq = b.mul(b.x(), b.x());
  NodeEntry q = b.scalar("__add_scalar__", b.scalar("__mul_scalar__", sq, s), t);
  return b.scalar("__rdiv_scalar__", b.op("sqrt", {q}), 1);
}

void registerRounding() {
  unaryMathOp(
      "abs", "|x|", [](double x) { return std::fabs(x); },
      [](const Expr &x, const Attrs &) { return select(lt(x, c(0, x)), c(0, x) - x, x); })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("sign", {b.x()}));
      });
  unaryMathOp(
      "sign", "-1, 0 or 1 by the sign of x",
      [](double x) { return x > 0   ? 1.0
                            : x < 0 ? -1.0
                                    : x; },
      [](const Expr &x, const Attrs &) {
        return select(gt(x, c(0, x)), c(1, x), select(lt(x, c(0, x)), c(-1, x), x));
      })
      .grad(zeroGrad);
  // Rounding leaves integers as they are.
  auto rounding = [](const char *name, const char *doc, double (*f)(double), const char *fn) {
    unaryMathOp(name, doc, f, [fn](const Expr &x, const Attrs &) {
      return dtypeIsFloat(x->dtype) ? call(fn, {x}, x->dtype) : x;
    }).grad(zeroGrad);
  };
  rounding(
      "floor", "the largest integer not above x", [](double x) { return std::floor(x); }, "floor");
  rounding(
      "ceil", "the smallest integer not below x", [](double x) { return std::ceil(x); }, "ceil");
  rounding(
      "round", "x rounded to the nearest integer, halves to even (ONNX's Round)",
      [](double x) { return std::nearbyint(x); }, "roundeven");
  rounding(
      "trunc", "x rounded toward zero", [](double x) { return std::trunc(x); }, "trunc");
}

void registerTrigonometric() {
  unaryMathOp(
      "erf", "the error function", [](double x) { return std::erf(x); }, libmCall("erf"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // 2/sqrt(pi) exp(-x^2)
        GradBuilder b{n};
        NodeEntry e = b.op("exp", {b.op("negative", {b.mul(b.x(), b.x())})});
        return b.times(g[0], b.scalar("__mul_scalar__", e, kTwoBySqrtPi));
      });
  unaryMathOp(
      "sin", "sine", [](double x) { return std::sin(x); }, libmCall("sin"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("cos", {b.x()}));
      });
  unaryMathOp(
      "cos", "cosine", [](double x) { return std::cos(x); }, libmCall("cos"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("negative", {b.op("sin", {b.x()})}));
      });
  unaryMathOp(
      "tan", "tangent", [](double x) { return std::tan(x); }, libmCall("tan"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 + y^2
        return b.times(g[0], b.scalar("__add_scalar__", b.mul(b.y(), b.y()), 1));
      });
  unaryMathOp(
      "asin", "arcsine", [](double x) { return std::asin(x); }, libmCall("asin"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / sqrt(1 - x^2)
        return b.times(g[0], invSqrtQuadratic(b, -1, 1));
      });
  unaryMathOp(
      "acos", "arccosine", [](double x) { return std::acos(x); }, libmCall("acos"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // -1 / sqrt(1 - x^2)
        return b.times(g[0], b.op("negative", {invSqrtQuadratic(b, -1, 1)}));
      });
  unaryMathOp(
      "atan", "arctangent", [](double x) { return std::atan(x); }, libmCall("atan"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / (1 + x^2)
        return b.over(g[0], b.scalar("__add_scalar__", b.mul(b.x(), b.x()), 1));
      });
  unaryMathOp(
      "sinh", "hyperbolic sine", [](double x) { return std::sinh(x); }, libmCall("sinh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("cosh", {b.x()}));
      });
  unaryMathOp(
      "cosh", "hyperbolic cosine", [](double x) { return std::cosh(x); }, libmCall("cosh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("sinh", {b.x()}));
      });
  unaryMathOp(
      "asinh", "inverse hyperbolic sine", [](double x) { return std::asinh(x); }, libmCall("asinh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / sqrt(x^2 + 1)
        return b.times(g[0], invSqrtQuadratic(b, 1, 1));
      });
  unaryMathOp(
      "acosh", "inverse hyperbolic cosine", [](double x) { return std::acosh(x); },
      libmCall("acosh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / sqrt(x^2 - 1)
        return b.times(g[0], invSqrtQuadratic(b, 1, -1));
      });
  unaryMathOp(
      "atanh", "inverse hyperbolic tangent", [](double x) { return std::atanh(x); },
      libmCall("atanh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / (1 - x^2)
        return b.over(g[0], b.scalar("__rsub_scalar__", b.mul(b.x(), b.x()), 1));
      });
}

void registerClassification() {
  auto boolOut = [](TypeCtx &c) { c.assignOut(0, kBoolean); };
  // Not in place: a bool result is narrower than the float it tests.
  unaryMathOp(
      "isnan", "whether x is NaN (bool)", [](double x) { return std::isnan(x) ? 1.0 : 0.0; },
      [](const Expr &x, const Attrs &) { return boolToValue(ne(x, x), kBoolean); })
      .type(boolOut)
      .grad(zeroGrad)
      .inplaceWith({});
  unaryMathAttrOp(
      "isinf", "whether x is infinite (bool), of the signs asked for",
      [](double x, const Attrs &a) {
        return (x == INFINITY && a.getBool("detect_positive")) ||
                       (x == -INFINITY && a.getBool("detect_negative"))
                   ? 1.0
                   : 0.0;
      },
      [](const Expr &x, const Attrs &a) {
        Expr pos = eq(x, c(INFINITY, x)), neg = eq(x, c(-INFINITY, x));
        bool p = a.getBool("detect_positive"), m = a.getBool("detect_negative");
        if (p && m)
          return boolToValue(lor(pos, neg), kBoolean);
        if (p || m)
          return boolToValue(p ? pos : neg, kBoolean);
        return constant(0, kBoolean);
      })
      .param("detect_positive", ParamKind::Bool, "True", "count +inf")
      .param("detect_negative", ParamKind::Bool, "True", "count -inf")
      .type(boolOut)
      .grad(zeroGrad)
      .inplaceWith({});
}

} // namespace

void registerUnaryMathOps() {
  unaryOp("tanh", "hyperbolic tangent", [](double x) { return std::tanh(x); })
      .lowerSymbolic(elementwiseLower(
          [](const Expr &x, const Attrs &) { return call("tanh", {x}, x->dtype); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g * (1 - y^2)
        NodeEntry y = outOf(n);
        NodeEntry sq = mk("elemwise_mul", n->name + "_sub0", {y, y});
        NodeEntry d = mk("__rsub_scalar__", n->name + "_sub1", {sq}, {{"scalar", "1"}});
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], d})};
      });
  unaryOp("exp", "e to the x", [](double x) { return std::exp(x); })
      .lowerSymbolic(
          elementwiseLower([](const Expr &x, const Attrs &) { return call("exp", {x}, x->dtype); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], outOf(n)})};
      });
  unaryOp("log", "natural logarithm", [](double x) { return std::log(x); })
      .lowerSymbolic(
          elementwiseLower([](const Expr &x, const Attrs &) { return call("log", {x}, x->dtype); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("elemwise_div", n->name + "_grad", {g[0], n->inputs[0]})};
      });
  unaryOp("sqrt", "square root", [](double x) { return std::sqrt(x); })
      .lowerSymbolic(elementwiseLower(
          [](const Expr &x, const Attrs &) { return call("sqrt", {x}, x->dtype); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g / (2 y)
        NodeEntry twoY = mk("__mul_scalar__", n->name + "_sub0", {outOf(n)}, {{"scalar", "2"}});
        return std::vector<NodeEntry>{mk("elemwise_div", n->name + "_grad", {g[0], twoY})};
      });
  unaryOp("negative", "-x", [](double x) { return -x; })
      .lowerSymbolic(
          elementwiseLower([](const Expr &x, const Attrs &) { return constant(0, x->dtype) - x; }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        return std::vector<NodeEntry>{mk("negative", n->name + "_grad", {g[0]})};
      });
  registerRounding();
  registerTrigonometric();
  registerClassification();
}

} // namespace loupe::ops
