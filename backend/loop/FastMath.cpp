// FastMath: exp, tanh, sigmoid and float32 erf rewritten as polynomial approximations in the
// loop IR, so a vector loop computes them in vector registers instead of calling libm per lane.
#include "backend/loop/FastMath.h"

#include "core/DType.h"
#include "core/loop/Visitor.h"

#include <string>
#include <utility>
#include <vector>

namespace loupe::loop {

namespace {

/// Rewrites one stored value; the lets it needs are collected in order (each may read the ones
/// before it).
class ValueRewriter : public IRMutator {
public:
  std::vector<std::pair<Expr, Expr>> lets;

  Expr mutateExpr(const Expr &e) override {
    if (e->kind != ExprKind::Call)
      return IRMutator::mutateExpr(e);
    if (e->name == "tvm_if_then_else") {
      // The branches are lazy (the untaken one may read out of bounds): a call under one is
      // rewritten with its argument bound under the same conditions, so the let reads only
      // what the branch would.
      Expr c = mutateExpr(e->args[0]);
      guards_.push_back(c);
      Expr a = mutateExpr(e->args[1]);
      guards_.back() = lnot(c);
      Expr b = mutateExpr(e->args[2]);
      guards_.pop_back();
      return withArgs(e, {c, a, b});
    }
    bool fast = (e->dtype == kFloat32 || e->dtype == kFloat64) && e->args.size() == 1 &&
                (e->name == "exp" || e->name == "tanh" || e->name == "sigmoid" ||
                 (e->name == "erf" && e->dtype == kFloat32));
    if (!fast)
      return IRMutator::mutateExpr(e);
    int dt = e->dtype;
    Expr arg = mutateExpr(e->args[0]);
    if (arg->dtype != dt)
      arg = cast(dt, arg);
    if (!guards_.empty()) {
      Expr all = guards_[0];
      for (size_t i = 1; i < guards_.size(); ++i)
        all = land(all, guards_[i]);
      arg = call("tvm_if_then_else", {all, arg, floatImm(0, dt)}, dt);
    }
    Expr x = bind("x", arg);
    auto c = [&](double v) { return floatImm(v, dt); };
    if (e->name == "exp")
      return exp(x);
    if (e->name == "sigmoid")
      return c(1) / (c(1) + exp(bind("neg", c(0) - x)));
    if (e->name == "erf")
      return erf32(x);
    // tanh: e^2x saturates to the clamp bounds for large |x|, where this is ±1 exactly.
    return c(1) - c(2) / (exp(bind("twice", x * c(2))) + c(1));
  }

private:
  int next_ = 0;
  std::vector<Expr> guards_; ///< the conditions of the lazy branches being rewritten

  Expr bind(const std::string &what, Expr value) {
    Expr v = var("fm" + std::to_string(next_++) + "." + what, value->dtype);
    lets.emplace_back(v, std::move(value));
    return v;
  }

  // erf(x) for a bound float32 x (see the header); coefficients from scripts/fit_erf.py.
  Expr erf32(const Expr &x) {
    auto c = [&](double v) { return floatImm(v, kFloat32); };
    auto horner = [&](std::initializer_list<double> highestFirst, const Expr &s) {
      Expr acc = nullptr;
      for (double k : highestFirst)
        acc = acc ? acc * s + c(k) : c(k);
      return acc;
    };
    Expr clamped = bind("clamp", max(min(x, c(4)), c(-4)));
    Expr s = bind("sq", clamped * clamped);
    Expr p = horner({1.9871683833161402e-06, 0.00028450391695046193, 0.0038807837664998333,
                     0.053093775466226109, 0.19348600506342173, 1.1283791403081904},
                    s);
    Expr q = horner({3.7420954112660221e-05, 0.0011849433368273741, 0.015202107656226583,
                     0.11532544606343394, 0.50480507626536608, 1},
                    s);
    return clamped * p / q;
  }

  // e^x for a bound x (see the header for the method and its error).
  Expr exp(const Expr &x) {
    int dt = x->dtype;
    bool f32 = dt == kFloat32;
    auto c = [&](double v) { return floatImm(v, dt); };
    // Where n stays a normal exponent: float32 -126..127, float64 -1022..1023.
    Expr clamped = bind("clamp", max(min(x, c(f32 ? 88.3762626647949 : 709.43)),
                                     c(f32 ? -87.3365447505531 : -708.39)));
    Expr n = bind("n", call("floor", {clamped * c(1.4426950408889634) + c(0.5)}, dt));
    // ln2 in two parts, the first exact in few bits, so n·ln2 loses nothing.
    double ln2Hi = f32 ? 0.693359375 : 6.93145751953125e-1;
    double ln2Lo = f32 ? -2.12194440e-4 : 1.42860682030941723212e-6;
    Expr r = bind("r", clamped - n * c(ln2Hi) - n * c(ln2Lo));
    Expr p;
    if (f32) {
      Expr q = c(1.9875691500e-4);
      for (double k :
           {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1})
        q = q * r + c(k);
      p = q * (r * r) + r + c(1);
    } else {
      // e^r = 1 + 2·r·P(r²) / (Q(r²) - r·P(r²)).
      Expr rr = bind("rr", r * r);
      Expr pp = c(1.26177193074810590878e-4);
      for (double k : {3.02994407707441961300e-2, 9.99999999999999999910e-1})
        pp = pp * rr + c(k);
      Expr px = bind("px", r * pp);
      Expr qq = c(3.00198505138664455042e-6);
      for (double k :
           {2.52448340349684104192e-3, 2.27265548208155028766e-1, 2.00000000000000000009e0})
        qq = qq * rr + c(k);
      p = c(1) + c(2) * (px / (qq - px));
    }
    return call("ldexp", {p, n}, dt);
  }
};

class StoreRewriter : public IRMutator {
public:
  Stmt mutateStmt(const Stmt &s) override {
    if (s->kind != StmtKind::Store)
      return IRMutator::mutateStmt(s);
    ValueRewriter values;
    Expr value = values.mutateExpr(s->b);
    if (values.lets.empty())
      return s;
    Stmt out = store(s->name, s->a, value);
    for (auto it = values.lets.rbegin(); it != values.lets.rend(); ++it)
      out = letStmt(it->first, it->second, out);
    return out;
  }
};

} // namespace

Stmt fastMath(const Stmt &s) { return StoreRewriter().mutateStmt(s); }

} // namespace loupe::loop
