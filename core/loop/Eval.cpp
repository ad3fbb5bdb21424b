// Eval: a tree-walking interpreter over lowered loop IR.
#include "core/loop/Eval.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/Quantize.h"

#include <cmath>

namespace loupe::loop {

namespace {

class Interp {
public:
  explicit Interp(Buffers &b) : buffers_(b) {}

  void exec(const Stmt &s) {
    switch (s->kind) {
    case StmtKind::For: {
      int64_t lo = static_cast<int64_t>(eval(s->a)), n = static_cast<int64_t>(eval(s->b));
      for (int64_t i = lo; i < lo + n; ++i) {
        vars_[s->var.get()] = static_cast<double>(i);
        exec(s->body[0]);
      }
      vars_.erase(s->var.get());
      return;
    }
    case StmtKind::Store: {
      Buffer &b = buffer(s->name);
      int64_t i = index(s->a, b, s->name);
      b.data[i] = roundToDType(eval(s->b), b.dtype);
      return;
    }
    case StmtKind::Allocate: {
      int64_t n = 1;
      for (int64_t e : s->extents)
        n *= e;
      if (s->a)
        n = static_cast<int64_t>(eval(s->a));
      if (buffers_.count(s->name))
        fail("loop IR: buffer ", s->name, " is allocated twice");
      buffers_[s->name] = Buffer{s->dtype, std::vector<double>(n, 0.0)};
      exec(s->body[0]);
      buffers_.erase(s->name);
      return;
    }
    case StmtKind::Attr:
    case StmtKind::Produce:
      exec(s->body[0]);
      return;
    case StmtKind::IfThenElse:
      if (eval(s->a) != 0)
        exec(s->body[0]);
      else if (s->body.size() > 1)
        exec(s->body[1]);
      return;
    case StmtKind::Seq:
      for (const Stmt &c : s->body)
        exec(c);
      return;
    case StmtKind::LetStmt:
      vars_[s->var.get()] = eval(s->a);
      exec(s->body[0]);
      vars_.erase(s->var.get());
      return;
    }
  }

private:
  Buffer &buffer(const std::string &name) {
    auto it = buffers_.find(name);
    if (it == buffers_.end())
      fail("loop IR: unknown buffer ", name);
    return it->second;
  }

  int64_t index(const Expr &e, const Buffer &b, const std::string &name) {
    double v = eval(e);
    int64_t i = static_cast<int64_t>(v);
    if (i < 0 || i >= static_cast<int64_t>(b.data.size()))
      fail("loop IR: ", name, "[", i, "] is out of bounds (", b.data.size(), " elements) at ",
           printExpr(e));
    return i;
  }

  double round(double v, int dtype) { return dtype == kBool ? (v != 0) : roundToDType(v, dtype); }

  double eval(const Expr &e) {
    switch (e->kind) {
    case ExprKind::IntImm:
      return static_cast<double>(e->intValue);
    case ExprKind::FloatImm:
      return e->floatValue;
    case ExprKind::Var: {
      auto it = vars_.find(e.get());
      if (it == vars_.end())
        fail("loop IR: variable ", e->name, " is not bound");
      return it->second;
    }
    case ExprKind::Binary:
      return binary(e);
    case ExprKind::Not:
      return eval(e->args[0]) == 0;
    case ExprKind::Select: {
      double c = eval(e->args[0]), a = eval(e->args[1]), b = eval(e->args[2]);
      return c != 0 ? a : b;
    }
    case ExprKind::Cast:
      return round(eval(e->args[0]), e->dtype);
    case ExprKind::Call:
      return intrinsic(e);
    case ExprKind::Load: {
      Buffer &b = buffer(e->name);
      return b.data[index(e->args[0], b, e->name)];
    }
    case ExprKind::TensorRead:
    case ExprKind::Reduce:
      fail("loop IR: ", printExpr(e), " was not lowered");
    }
    return 0;
  }

  double binary(const Expr &e) {
    double a = eval(e->args[0]);
    if (e->op == BinOp::And && a == 0)
      return 0;
    if (e->op == BinOp::Or && a != 0)
      return 1;
    double b = eval(e->args[1]);
    bool integer = e->args[0]->dtype != kBool && !dtypeIsFloat(e->args[0]->dtype);
    double r = 0;
    switch (e->op) {
    case BinOp::Add:
      r = a + b;
      break;
    case BinOp::Sub:
      r = a - b;
      break;
    case BinOp::Mul:
      r = a * b;
      break;
    case BinOp::Div:
      if (integer) {
        if (b == 0)
          fail("loop IR: integer division by zero in ", printExpr(e));
        r = std::trunc(a / b);
      } else {
        r = a / b;
      }
      break;
    case BinOp::Mod:
      if (b == 0)
        fail("loop IR: integer modulo by zero in ", printExpr(e));
      r = std::fmod(a, b);
      break;
    case BinOp::Shl: // wrapped to the type by round() below
    case BinOp::Shr:
      r = shiftBits(a, b, e->op == BinOp::Shl);
      break;
    case BinOp::Min:
      r = std::min(a, b);
      break;
    case BinOp::Max:
      r = std::max(a, b);
      break;
    case BinOp::EQ:
      return a == b;
    case BinOp::NE:
      return a != b;
    case BinOp::LT:
      return a < b;
    case BinOp::LE:
      return a <= b;
    case BinOp::GT:
      return a > b;
    case BinOp::GE:
      return a >= b;
    case BinOp::And:
      return b != 0;
    case BinOp::Or:
      return b != 0;
    }
    return round(r, e->dtype);
  }

  double intrinsic(const Expr &e) {
    const std::string &f = e->name;
    if (f == "tvm_if_then_else") // lazy: the untaken side may read out of bounds
      return eval(e->args[0]) != 0 ? eval(e->args[1]) : eval(e->args[2]);
    if (f == "likely")
      return eval(e->args[0]);
    if (f == "q_multiply_shift") // requantization's fixed-point multiply, in int64 as the kernels
      return round(static_cast<double>(multiplyShift(static_cast<int64_t>(eval(e->args[0])),
                                                     static_cast<int32_t>(eval(e->args[1])),
                                                     static_cast<int32_t>(eval(e->args[2])))),
                   e->dtype);
    if (f == "dot4") { // an 8-bit convolution's step: four products, summed exactly
      double sum = 0;
      for (size_t j = 0; j < 4; ++j)
        sum += eval(e->args[j]) * eval(e->args[j + 4]);
      return round(sum, e->dtype);
    }
    if (f == "dot2") // a bfloat16 convolution's step: two exact products, summed in float32
      return round(eval(e->args[0]) * eval(e->args[2]) + eval(e->args[1]) * eval(e->args[3]),
                   e->dtype);
    if (f == "ldexp") // x * 2^n, n integral (FastMath's scaling)
      return round(std::ldexp(eval(e->args[0]), static_cast<int>(eval(e->args[1]))), e->dtype);
    double x = eval(e->args[0]);
    double r;
    if (f == "exp")
      r = std::exp(x);
    else if (f == "log")
      r = std::log(x);
    else if (f == "sqrt")
      r = std::sqrt(x);
    else if (f == "tanh")
      r = std::tanh(x);
    else if (f == "sigmoid")
      r = 1 / (1 + std::exp(-x));
    else if (f == "fabs")
      r = std::fabs(x);
    else if (f == "floor")
      r = std::floor(x);
    else if (f == "ceil")
      r = std::ceil(x);
    else if (f == "round")
      r = std::round(x);
    else if (f == "pow")
      r = std::pow(x, eval(e->args[1]));
    else if (f == "roundeven")
      r = std::nearbyint(x);
    else if (isLibmFunction(f))
      r = libmValue(f, x);
    else
      fail("loop IR: unknown intrinsic ", f);
    return round(r, e->dtype);
  }

  Buffers &buffers_;
  std::map<const ExprNode *, double> vars_;
};

} // namespace

void run(const Stmt &s, Buffers &buffers) { Interp(buffers).exec(s); }

} // namespace loupe::loop
