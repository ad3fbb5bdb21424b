// Relay-era unary math and activations: abs, sign, rounding, erf and the trigonometric family,
// elu/selu/celu, softsign, hard_swish, gelu, silu, mish, thresholded_relu, isnan/isinf.
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <cmath>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;    // 1/sqrt(2)
constexpr double kTwoBySqrtPi = 1.12837916709551257390; // 2/sqrt(pi), erf's slope at 0
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
constexpr double kGeluTanhK = 0.79788456080286535588;   // sqrt(2/pi)
constexpr double kGeluTanhC = 0.044715;
// ONNX's Selu defaults (the self-normalising constants of Klambauer et al.).
constexpr const char *kSeluAlpha = "1.67326319217681884765625";
constexpr const char *kSeluGamma = "1.05070102214813232421875";

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

using Lower1 = std::function<Expr(const Expr &, const Attrs &)>;

// A unary op whose lowering is `f` on each element.
OpDef &math(const char *name, const char *doc, std::function<double(double)> ref, Lower1 f) {
  return unaryOp(name, doc, std::move(ref)).lower(elementwiseLower(std::move(f)));
}

// A unary op with attributes: the reference kernel and lowering read them.
OpDef &mathAttr(const char *name, const char *doc, std::function<double(double, const Attrs &)> ref,
                Lower1 f) {
  OpDef &op = unaryOp(name, doc, nullptr);
  op.kernel(unaryAttrKernel(std::move(ref))).lower(elementwiseLower(std::move(f)));
  return op;
}

// A libm function of floats (integers convert to float64 and back).
Lower1 libmCall(const char *fn) {
  return [fn](const Expr &x, const Attrs &) {
    if (dtypeIsFloat(x->dtype))
      return call(fn, {x}, x->dtype);
    return cast(x->dtype, call(fn, {cast(kFloat64, x)}, kFloat64));
  };
}

Expr c(double v, const Expr &like) { return constant(v, like->dtype); }
Expr expOf(const Expr &x) { return call("exp", {x}, x->dtype); }

// 1 / sqrt(s * x^2 + t): the derivatives of asin, acos, asinh and acosh.
NodeEntry invSqrtQuadratic(GradBuilder &b, double s, double t) {
  NodeEntry sq = b.mul(b.x(), b.x());
  NodeEntry q = b.scalar("__add_scalar__", b.scalar("__mul_scalar__", sq, s), t);
  return b.scalar("__rdiv_scalar__", b.op("sqrt", {q}), 1);
}

void registerRounding() {
  math(
      "abs", "|x|", [](double x) { return std::fabs(x); },
      [](const Expr &x, const Attrs &) { return select(lt(x, c(0, x)), c(0, x) - x, x); })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("sign", {b.x()}));
      });
  math(
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
    math(name, doc, f, [fn](const Expr &x, const Attrs &) {
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
  math(
      "erf", "the error function", [](double x) { return std::erf(x); }, libmCall("erf"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // 2/sqrt(pi) exp(-x^2)
        GradBuilder b{n};
        NodeEntry e = b.op("exp", {b.op("negative", {b.mul(b.x(), b.x())})});
        return b.times(g[0], b.scalar("__mul_scalar__", e, kTwoBySqrtPi));
      });
  math(
      "sin", "sine", [](double x) { return std::sin(x); }, libmCall("sin"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("cos", {b.x()}));
      });
  math(
      "cos", "cosine", [](double x) { return std::cos(x); }, libmCall("cos"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("negative", {b.op("sin", {b.x()})}));
      });
  math(
      "tan", "tangent", [](double x) { return std::tan(x); }, libmCall("tan"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 + y^2
        return b.times(g[0], b.scalar("__add_scalar__", b.mul(b.y(), b.y()), 1));
      });
  math(
      "asin", "arcsine", [](double x) { return std::asin(x); }, libmCall("asin"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / sqrt(1 - x^2)
        return b.times(g[0], invSqrtQuadratic(b, -1, 1));
      });
  math(
      "acos", "arccosine", [](double x) { return std::acos(x); }, libmCall("acos"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // -1 / sqrt(1 - x^2)
        return b.times(g[0], b.op("negative", {invSqrtQuadratic(b, -1, 1)}));
      });
  math(
      "atan", "arctangent", [](double x) { return std::atan(x); }, libmCall("atan"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / (1 + x^2)
        return b.over(g[0], b.scalar("__add_scalar__", b.mul(b.x(), b.x()), 1));
      });
  math(
      "sinh", "hyperbolic sine", [](double x) { return std::sinh(x); }, libmCall("sinh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("cosh", {b.x()}));
      });
  math(
      "cosh", "hyperbolic cosine", [](double x) { return std::cosh(x); }, libmCall("cosh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("sinh", {b.x()}));
      });
  math(
      "asinh", "inverse hyperbolic sine", [](double x) { return std::asinh(x); }, libmCall("asinh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / sqrt(x^2 + 1)
        return b.times(g[0], invSqrtQuadratic(b, 1, 1));
      });
  math(
      "acosh", "inverse hyperbolic cosine", [](double x) { return std::acosh(x); },
      libmCall("acosh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / sqrt(x^2 - 1)
        return b.times(g[0], invSqrtQuadratic(b, 1, -1));
      });
  math(
      "atanh", "inverse hyperbolic tangent", [](double x) { return std::atanh(x); },
      libmCall("atanh"))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / (1 - x^2)
        return b.over(g[0], b.scalar("__rsub_scalar__", b.mul(b.x(), b.x()), 1));
      });
}

void registerActivations() {
  mathAttr(
      "elu", "x if x > 0 else alpha (exp(x) - 1)",
      [](double x, const Attrs &a) { return x > 0 ? x : a.getFloat("alpha") * std::expm1(x); },
      [](const Expr &x, const Attrs &a) {
        return select(gt(x, c(0, x)), x, c(a.getFloat("alpha"), x) * (expOf(x) - c(1, x)));
      })
      .param("alpha", ParamKind::Float, "1.0", "scale of the negative part")
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // 1 where x > 0, else y + alpha
        GradBuilder b{n};
        NodeEntry pos = b.op("broadcast_greater", {b.x(), b.fill(b.x(), 0)});
        NodeEntry neg = b.scalar("__add_scalar__", b.y(), n->parsed.getFloat("alpha"));
        return b.times(g[0], b.op("where", {pos, b.fill(b.x(), 1), neg}));
      });
  mathAttr(
      "selu", "gamma (x if x > 0 else alpha (exp(x) - 1))",
      [](double x, const Attrs &a) {
        return a.getFloat("gamma") * (x > 0 ? x : a.getFloat("alpha") * std::expm1(x));
      },
      [](const Expr &x, const Attrs &a) {
        return c(a.getFloat("gamma"), x) *
               select(gt(x, c(0, x)), x, c(a.getFloat("alpha"), x) * (expOf(x) - c(1, x)));
      })
      .param("alpha", ParamKind::Float, kSeluAlpha, "scale of the negative part")
      .param("gamma", ParamKind::Float, kSeluGamma, "scale of the whole")
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // gamma where x > 0, else y + gamma alpha
        GradBuilder b{n};
        double alpha = n->parsed.getFloat("alpha"), gamma = n->parsed.getFloat("gamma");
        NodeEntry pos = b.op("broadcast_greater", {b.x(), b.fill(b.x(), 0)});
        NodeEntry neg = b.scalar("__add_scalar__", b.y(), gamma * alpha);
        return b.times(g[0], b.op("where", {pos, b.fill(b.x(), gamma), neg}));
      });
  mathAttr(
      "celu", "max(0, x) + min(0, alpha (exp(x / alpha) - 1))",
      [](double x, const Attrs &a) {
        double alpha = a.getFloat("alpha");
        return std::max(0.0, x) + std::min(0.0, alpha * std::expm1(x / alpha));
      },
      [](const Expr &x, const Attrs &a) {
        Expr alpha = c(a.getFloat("alpha"), x);
        return max(x, c(0, x)) + min(c(0, x), alpha * (expOf(x / alpha) - c(1, x)));
      })
      .param("alpha", ParamKind::Float, "1.0", "scale of the negative part")
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // 1 where x > 0, else exp(x / alpha)
        GradBuilder b{n};
        NodeEntry pos = b.op("broadcast_greater", {b.x(), b.fill(b.x(), 0)});
        NodeEntry e = b.op("exp", {b.scalar("__div_scalar__", b.x(), n->parsed.getFloat("alpha"))});
        return b.times(g[0], b.op("where", {pos, b.fill(b.x(), 1), e}));
      });
  mathAttr(
      "thresholded_relu", "x if x > alpha else 0",
      [](double x, const Attrs &a) { return x > a.getFloat("alpha") ? x : 0.0; },
      [](const Expr &x, const Attrs &a) {
        return select(gt(x, c(a.getFloat("alpha"), x)), x, c(0, x));
      })
      .param("alpha", ParamKind::Float, "1.0", "the threshold")
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        return b.times(g[0], b.op("greater", {b.x(), b.fill(b.x(), n->parsed.getFloat("alpha"))}));
      });
  math(
      "softsign", "x / (1 + |x|)", [](double x) { return x / (1 + std::fabs(x)); },
      [](const Expr &x, const Attrs &) {
        return x / (c(1, x) + select(lt(x, c(0, x)), c(0, x) - x, x));
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / (1 + |x|)^2
        NodeEntry d = b.scalar("__add_scalar__", b.op("abs", {b.x()}), 1);
        return b.over(g[0], b.mul(d, d));
      });
  math(
      "hard_swish", "x relu6(x + 3) / 6 (ONNX's HardSwish)",
      [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); },
      [](const Expr &x, const Attrs &) {
        return x * min(max(x * c(1.0 / 6, x) + c(0.5, x), c(0, x)), c(1, x));
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // 0 below -3, 1 above 3, (2x + 3) / 6 between
        GradBuilder b{n};
        NodeEntry below = b.op("broadcast_less", {b.x(), b.fill(b.x(), -3)});
        NodeEntry above = b.op("broadcast_greater", {b.x(), b.fill(b.x(), 3)});
        NodeEntry mid = b.scalar("__add_scalar__", b.scalar("__mul_scalar__", b.x(), 1.0 / 3), 0.5);
        NodeEntry upper = b.op("where", {above, b.fill(b.x(), 1), mid});
        return b.times(g[0], b.op("where", {below, b.fill(b.x(), 0), upper}));
      });
  mathAttr(
      "gelu", "x Phi(x), Phi the normal CDF (approximate='tanh': its tanh form)",
      [](double x, const Attrs &a) {
        if (a.getStr("approximate") == "tanh")
          return 0.5 * x * (1 + std::tanh(kGeluTanhK * (x + kGeluTanhC * x * x * x)));
        return 0.5 * x * (1 + std::erf(x * kSqrtHalf));
      },
      [](const Expr &x, const Attrs &a) {
        Expr inner =
            a.getStr("approximate") == "tanh"
                ? call("tanh", {c(kGeluTanhK, x) * (x + c(kGeluTanhC, x) * x * x * x)}, x->dtype)
                : call("erf", {x * c(kSqrtHalf, x)}, x->dtype);
        return c(0.5, x) * x * (c(1, x) + inner);
      })
      .param("approximate", ParamKind::Enum, "none", "'none' (erf) or 'tanh'", {"none", "tanh"})
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n};
        NodeEntry x = b.x(), sq = b.mul(x, x);
        if (n->parsed.getStr("approximate") == "tanh") {
          // t = tanh(k (x + c x^3)): 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)
          NodeEntry u = b.scalar(
              "__mul_scalar__",
              b.op("elemwise_add", {x, b.mul(b.scalar("__mul_scalar__", sq, kGeluTanhC), x)}),
              kGeluTanhK);
          NodeEntry t = b.op("tanh", {u});
          NodeEntry half1 = b.scalar("__mul_scalar__", b.scalar("__add_scalar__", t, 1), 0.5);
          NodeEntry sech2 = b.scalar("__rsub_scalar__", b.mul(t, t), 1);
          NodeEntry du = b.scalar(
              "__mul_scalar__",
              b.scalar("__add_scalar__", b.scalar("__mul_scalar__", sq, 3 * kGeluTanhC), 1),
              0.5 * kGeluTanhK);
          return b.times(g[0], b.op("elemwise_add", {half1, b.mul(x, b.mul(sech2, du))}));
        }
        // Phi(x) + x phi(x)
        NodeEntry cdf = b.scalar(
            "__mul_scalar__",
            b.scalar("__add_scalar__", b.op("erf", {b.scalar("__mul_scalar__", x, kSqrtHalf)}), 1),
            0.5);
        NodeEntry pdf = b.scalar("__mul_scalar__",
                                 b.op("exp", {b.scalar("__mul_scalar__", sq, -0.5)}), kInvSqrt2Pi);
        return b.times(g[0], b.op("elemwise_add", {cdf, b.mul(x, pdf)}));
      });
  math(
      "silu", "x sigmoid(x) (swish)", [](double x) { return x * sigmoid(x); },
      [](const Expr &x, const Attrs &) { return x * call("sigmoid", {x}, x->dtype); })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // s (1 + x (1 - s))
        GradBuilder b{n};
        NodeEntry s = b.op("sigmoid", {b.x()});
        NodeEntry inner = b.mul(b.x(), b.scalar("__rsub_scalar__", s, 1));
        return b.times(g[0], b.mul(s, b.scalar("__add_scalar__", inner, 1)));
      });
  math(
      "mish", "x tanh(softplus(x))",
      [](double x) { return x * std::tanh(std::log1p(std::exp(x))); },
      [](const Expr &x, const Attrs &) {
        return x * call("tanh", {call("log1p", {expOf(x)}, x->dtype)}, x->dtype);
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // t + x (1 - t^2) sigmoid(x), t = tanh(softplus(x)) = y / x computed directly
        GradBuilder b{n};
        NodeEntry sp = b.op("log", {b.scalar("__add_scalar__", b.op("exp", {b.x()}), 1)});
        NodeEntry t = b.op("tanh", {sp});
        NodeEntry sech2 = b.scalar("__rsub_scalar__", b.mul(t, t), 1);
        NodeEntry rest = b.mul(b.x(), b.mul(sech2, b.op("sigmoid", {b.x()})));
        return b.times(g[0], b.op("elemwise_add", {t, rest}));
      });
}

void registerClassification() {
  auto boolOut = [](TypeCtx &c) { c.assignOut(0, kBoolean); };
  // Not in place: a bool result is narrower than the float it tests.
  math(
      "isnan", "whether x is NaN (bool)", [](double x) { return std::isnan(x) ? 1.0 : 0.0; },
      [](const Expr &x, const Attrs &) { return boolToValue(ne(x, x), kBoolean); })
      .type(boolOut)
      .grad(zeroGrad)
      .inplaceWith({});
  mathAttr(
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

void registerMathOps() {
  registerRounding();
  registerTrigonometric();
  registerActivations();
  registerClassification();
}

} // namespace loupe::ops
