// Activations: relu, sigmoid, leaky_relu and clip (NNVM's); elu, selu, celu, softsign,
// hard_swish, gelu, silu, mish and thresholded_relu (Relay's and ONNX's).
#include "core/ops/OpHelpers.h"

#include <algorithm>
#include <cmath>

namespace loupe::ops {

using namespace loupe::loop;

namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;   // 1/sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794; // 1/sqrt(2 pi)
constexpr double kGeluTanhK = 0.79788456080286535588;  // sqrt(2/pi)
constexpr double kGeluTanhC = 0.044715;
// ONNX's Selu defaults (the self-normalising constants of Klambauer et al.).
constexpr const char *kSeluAlpha = "1.67326319217681884765625";
constexpr const char *kSeluGamma = "1.05070102214813232421875";

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

Expr c(double v, const Expr &like) { return constant(v, like->dtype); }
Expr expOf(const Expr &x) { return call("exp", {x}, x->dtype); }

} // namespace

void registerActivationOps() {
  unaryOp("relu", "max(x, 0)", [](double x) { return x > 0 ? x : 0.0; })
      .lowerSymbolic(elementwiseLower(
          [](const Expr &x, const Attrs &) { return max(x, constant(0, x->dtype)); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // NNVM: zeros_like, greater(x, zeros, exclude=true), elemwise_mul.
        const NodeEntry &x = n->inputs[0];
        NodeEntry zero = mk("zeros_like", n->name + "_sub0", {x});
        NodeEntry mask = mk("greater", n->name + "_sub1", {x, zero}, {{"exclude", "true"}});
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], mask})};
      });
  unaryOp("sigmoid", "1 / (1 + exp(-x))", sigmoid)
      .lowerSymbolic(elementwiseLower(
          [](const Expr &x, const Attrs &) { return call("sigmoid", {x}, x->dtype); }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g * y * (1 - y)
        NodeEntry y = outOf(n);
        NodeEntry oneMinus = mk("__rsub_scalar__", n->name + "_sub0", {y}, {{"scalar", "1"}});
        NodeEntry d = mk("elemwise_mul", n->name + "_sub1", {y, oneMinus});
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], d})};
      });

  OpRegistry::get()
      .add("leaky_relu")
      .describe("x if x > 0 else alpha * x")
      .param("alpha", ParamKind::Float, "0.25", "slope for x < 0")
      .layout(layoutArbitrary)
      .setPattern(kElemWise)
      .acceptScalars()
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .kernel(unaryAttrKernel(
          [](double x, const Attrs &a) { return x > 0 ? x : a.getFloat("alpha") * x; }))
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) {
        return select(gt(x, constant(0, x->dtype)), x, x * constant(a.getFloat("alpha"), x->dtype));
      }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g * (greater(x, 0) + alpha * less(x, 0))
        const NodeEntry &x = n->inputs[0];
        NodeEntry zero = mk("zeros_like", n->name + "_sub0", {x});
        NodeEntry pos = mk("greater", n->name + "_sub1", {x, zero});
        NodeEntry neg = mk("less", n->name + "_sub2", {x, zero});
        NodeEntry slope =
            mk("__mul_scalar__", n->name + "_sub3", {neg}, {{"scalar", n->parsed.raw("alpha")}});
        NodeEntry d = mk("elemwise_add", n->name + "_sub4", {pos, slope});
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], d})};
      });

  OpRegistry::get()
      .add("clip")
      .describe("clamps x into [a_min, a_max]")
      .param("a_min", ParamKind::Float, std::nullopt, "lower bound")
      .param("a_max", ParamKind::Float, std::nullopt, "upper bound")
      .layout(layoutArbitrary)
      .setPattern(kElemWise)
      .acceptScalars()
      .shape(sameShapeRule)
      .symbolic(symSameShape)
      .kernel(unaryAttrKernel([](double x, const Attrs &a) {
        return std::min(std::max(x, a.getFloat("a_min")), a.getFloat("a_max"));
      }))
      .lowerSymbolic(elementwiseLower([](const Expr &x, const Attrs &a) {
        return min(max(x, constant(a.getFloat("a_min"), x->dtype)),
                   constant(a.getFloat("a_max"), x->dtype));
      }))
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // g where a_min <= x <= a_max, else 0.
        const NodeEntry &x = n->inputs[0];
        NodeEntry lo =
            mk("full_like", n->name + "_sub0", {x}, {{"fill_value", n->parsed.raw("a_min")}});
        NodeEntry hi =
            mk("full_like", n->name + "_sub1", {x}, {{"fill_value", n->parsed.raw("a_max")}});
        NodeEntry below = mk("less", n->name + "_sub2", {x, lo});
        NodeEntry above = mk("greater", n->name + "_sub3", {x, hi});
        NodeEntry out = mk("elemwise_add", n->name + "_sub4", {below, above});
        NodeEntry in = mk("__rsub_scalar__", n->name + "_sub5", {out}, {{"scalar", "1"}});
        return std::vector<NodeEntry>{mk("elemwise_mul", n->name + "_grad", {g[0], in})};
      });

  unaryMathAttrOp(
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
  unaryMathAttrOp(
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
  unaryMathAttrOp(
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
  unaryMathAttrOp(
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
  unaryMathOp(
      "softsign", "x / (1 + |x|)", [](double x) { return x / (1 + std::fabs(x)); },
      [](const Expr &x, const Attrs &) {
        return x / (c(1, x) + select(lt(x, c(0, x)), c(0, x) - x, x));
      })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        GradBuilder b{n}; // 1 / (1 + |x|)^2
        NodeEntry d = b.scalar("__add_scalar__", b.op("abs", {b.x()}), 1);
        return b.over(g[0], b.mul(d, d));
      });
  unaryMathOp(
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
  unaryMathAttrOp(
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
  unaryMathOp(
      "silu", "x sigmoid(x) (swish)", [](double x) { return x * sigmoid(x); },
      [](const Expr &x, const Attrs &) { return x * call("sigmoid", {x}, x->dtype); })
      .grad([](const NodePtr &n, const std::vector<NodeEntry> &g) {
        // s (1 + x (1 - s))
        GradBuilder b{n};
        NodeEntry s = b.op("sigmoid", {b.x()});
        NodeEntry inner = b.mul(b.x(), b.scalar("__rsub_scalar__", s, 1));
        return b.times(g[0], b.mul(s, b.scalar("__add_scalar__", inner, 1)));
      });
  unaryMathOp(
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

} // namespace loupe::ops
