// LoopIR: node builders with integer constant folding, substitution, and the seed-style printer.
#include "core/loop/LoopIR.h"
#include "core/loop/Visitor.h"

#include "core/DType.h"
#include "core/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace loupe::loop {

namespace {

Expr make(ExprNode n) { return std::make_shared<const ExprNode>(std::move(n)); }

bool isIntType(int t) { return t != kBool && !dtypeIsFloat(t); }

// Integer folding of two constants; false when not both constant or not foldable.
bool fold(BinOp op, const Expr &a, const Expr &b, Expr *out) {
  int64_t x, y;
  if (!constValue(a, &x) || !constValue(b, &y))
    return false;
  int64_t r;
  switch (op) {
  case BinOp::Add:
    r = x + y;
    break;
  case BinOp::Sub:
    r = x - y;
    break;
  case BinOp::Mul:
    r = x * y;
    break;
  case BinOp::Div:
    if (y == 0)
      return false;
    r = x / y;
    break;
  case BinOp::Mod:
    if (y == 0)
      return false;
    r = x % y;
    break;
  case BinOp::Min:
    r = std::min(x, y);
    break;
  case BinOp::Max:
    r = std::max(x, y);
    break;
  default:
    return false;
  }
  *out = intImm(r, a->dtype);
  return true;
}

} // namespace

Expr intImm(int64_t v, int dtype) {
  ExprNode n(ExprKind::IntImm);
  n.dtype = dtype;
  n.intValue = v;
  return make(std::move(n));
}

Expr floatImm(double v, int dtype) {
  ExprNode n(ExprKind::FloatImm);
  n.dtype = dtype;
  n.floatValue = v;
  return make(std::move(n));
}

Expr boolImm(bool v) { return intImm(v ? 1 : 0, kBool); }

Expr var(const std::string &name, int dtype) {
  ExprNode n(ExprKind::Var);
  n.dtype = dtype;
  n.name = name;
  return make(std::move(n));
}

bool constValue(const Expr &e, int64_t *v) {
  if (e->kind != ExprKind::IntImm)
    return false;
  *v = e->intValue;
  return true;
}

bool usesVar(const Expr &e, const ExprNode *v) {
  return e.get() == v ||
         std::any_of(e->args.begin(), e->args.end(), [&](const Expr &a) { return usesVar(a, v); });
}

bool usesAnyVar(const Expr &e, const std::set<const ExprNode *> &vars) {
  return vars.count(e.get()) || std::any_of(e->args.begin(), e->args.end(),
                                            [&](const Expr &a) { return usesAnyVar(a, vars); });
}

bool isConst(const Expr &e, int64_t v) {
  int64_t x;
  return constValue(e, &x) && x == v;
}

Expr binary(BinOp op, Expr a, Expr b) {
  if (isIntType(a->dtype) && isIntType(b->dtype)) {
    Expr folded;
    if (fold(op, a, b, &folded))
      return folded;
    if ((op == BinOp::Add && isConst(b, 0)) || (op == BinOp::Sub && isConst(b, 0)) ||
        (op == BinOp::Mul && isConst(b, 1)) || (op == BinOp::Div && isConst(b, 1)))
      return a;
    if ((op == BinOp::Add && isConst(a, 0)) || (op == BinOp::Mul && isConst(a, 1)))
      return b;
    if (op == BinOp::Mul && (isConst(a, 0) || isConst(b, 0)))
      return intImm(0, a->dtype);
    if (op == BinOp::Mod && isConst(b, 1))
      return intImm(0, a->dtype);
    // (x*k1)*k2 -> x*(k1*k2), as TVM's simplifier folded strides.
    int64_t k1, k2;
    if (op == BinOp::Mul && a->kind == ExprKind::Binary && a->op == BinOp::Mul &&
        constValue(a->args[1], &k1) && constValue(b, &k2))
      return binary(BinOp::Mul, a->args[0], intImm(k1 * k2, a->dtype));
  }
  bool logic = op >= BinOp::EQ;
  ExprNode n(ExprKind::Binary);
  n.dtype = logic ? kBool : a->dtype;
  n.op = op;
  n.args = {std::move(a), std::move(b)};
  return make(std::move(n));
}

Expr operator+(Expr a, Expr b) { return binary(BinOp::Add, std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return binary(BinOp::Sub, std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return binary(BinOp::Mul, std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return binary(BinOp::Div, std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return binary(BinOp::Mod, std::move(a), std::move(b)); }
Expr operator+(Expr a, int64_t b) { return std::move(a) + intImm(b); }
Expr operator-(Expr a, int64_t b) { return std::move(a) - intImm(b); }
Expr operator*(Expr a, int64_t b) { return std::move(a) * intImm(b); }
Expr operator/(Expr a, int64_t b) { return std::move(a) / intImm(b); }
Expr operator%(Expr a, int64_t b) { return std::move(a) % intImm(b); }
Expr min(Expr a, Expr b) { return binary(BinOp::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(BinOp::Max, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return binary(BinOp::LT, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return binary(BinOp::LE, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return binary(BinOp::GT, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return binary(BinOp::GE, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return binary(BinOp::EQ, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return binary(BinOp::NE, std::move(a), std::move(b)); }
Expr land(Expr a, Expr b) { return binary(BinOp::And, std::move(a), std::move(b)); }
Expr lor(Expr a, Expr b) { return binary(BinOp::Or, std::move(a), std::move(b)); }

Expr lnot(Expr a) {
  ExprNode n(ExprKind::Not);
  n.dtype = kBool;
  n.args = {std::move(a)};
  return make(std::move(n));
}

Expr select(Expr cond, Expr a, Expr b) {
  ExprNode n(ExprKind::Select);
  n.dtype = a->dtype;
  n.args = {std::move(cond), std::move(a), std::move(b)};
  return make(std::move(n));
}

Expr cast(int dtype, Expr a) {
  if (a->dtype == dtype)
    return a;
  ExprNode n(ExprKind::Cast);
  n.dtype = dtype;
  n.args = {std::move(a)};
  return make(std::move(n));
}

namespace {
struct LibmFunction {
  const char *name;
  double (*fn)(double);
};
const LibmFunction kLibm[] = {
    {"erf", [](double x) { return std::erf(x); }},
    {"sin", [](double x) { return std::sin(x); }},
    {"cos", [](double x) { return std::cos(x); }},
    {"tan", [](double x) { return std::tan(x); }},
    {"asin", [](double x) { return std::asin(x); }},
    {"acos", [](double x) { return std::acos(x); }},
    {"atan", [](double x) { return std::atan(x); }},
    {"sinh", [](double x) { return std::sinh(x); }},
    {"cosh", [](double x) { return std::cosh(x); }},
    {"asinh", [](double x) { return std::asinh(x); }},
    {"acosh", [](double x) { return std::acosh(x); }},
    {"atanh", [](double x) { return std::atanh(x); }},
    {"log1p", [](double x) { return std::log1p(x); }},
    {"trunc", [](double x) { return std::trunc(x); }},
};
} // namespace

bool isLibmFunction(const std::string &name) {
  return std::any_of(std::begin(kLibm), std::end(kLibm),
                     [&](const LibmFunction &f) { return name == f.name; });
}

double libmValue(const std::string &name, double x) {
  for (const LibmFunction &f : kLibm)
    if (name == f.name)
      return f.fn(x);
  fail("loop IR: ", name, " is not a libm function");
}

Expr call(const std::string &intrinsic, std::vector<Expr> args, int dtype) {
  ExprNode n(ExprKind::Call);
  n.dtype = dtype;
  n.name = intrinsic;
  n.args = std::move(args);
  return make(std::move(n));
}

Expr load(const std::string &buffer, int dtype, Expr index) {
  ExprNode n(ExprKind::Load);
  n.dtype = dtype;
  n.name = buffer;
  n.args = {canonicalIndex(index)};
  return make(std::move(n));
}

Expr reduce(Combiner c, Expr source, std::vector<IterVar> axes, Expr cond) {
  ExprNode n(ExprKind::Reduce);
  n.dtype = source->dtype;
  n.combiner = c;
  n.args = {std::move(source)};
  if (cond)
    n.args.push_back(std::move(cond));
  n.reduceAxes = std::move(axes);
  return make(std::move(n));
}

std::pair<Expr, int64_t> splitConstant(const Expr &e) {
  int64_t k;
  if (constValue(e, &k))
    return {nullptr, k};
  if (e->kind == ExprKind::Binary && isIntType(e->dtype)) {
    if (e->op == BinOp::Add || e->op == BinOp::Sub) {
      auto [a, ca] = splitConstant(e->args[0]);
      auto [b, cb] = splitConstant(e->args[1]);
      if (e->op == BinOp::Sub) {
        if (b)
          return {binary(BinOp::Sub, a ? a : intImm(0, e->dtype), b), ca - cb};
        return {a, ca - cb};
      }
      if (!a)
        return {b, ca + cb};
      return {b ? binary(BinOp::Add, a, b) : a, ca + cb};
    }
    if (e->op == BinOp::Mul && constValue(e->args[1], &k)) {
      auto [a, ca] = splitConstant(e->args[0]);
      return {a ? binary(BinOp::Mul, a, e->args[1]) : nullptr, ca * k};
    }
  }
  return {e, 0};
}

std::optional<int64_t> linearCoef(const Expr &e, const ExprNode *v) {
  if (!usesVar(e, v))
    return 0;
  if (e.get() == v)
    return 1;
  if (e->kind != ExprKind::Binary)
    return std::nullopt;
  auto a = linearCoef(e->args[0], v), b = linearCoef(e->args[1], v);
  int64_t k;
  switch (e->op) {
  case BinOp::Add:
    return a && b ? std::optional<int64_t>(*a + *b) : std::nullopt;
  case BinOp::Sub:
    return a && b ? std::optional<int64_t>(*a - *b) : std::nullopt;
  case BinOp::Mul:
    if (constValue(e->args[1], &k) && a)
      return *a * k;
    if (constValue(e->args[0], &k) && b)
      return *b * k;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

void conjuncts(const Expr &c, std::vector<Expr> *out) {
  if (c->kind == ExprKind::Binary && c->op == BinOp::And) {
    conjuncts(c->args[0], out);
    conjuncts(c->args[1], out);
  } else if (c->kind == ExprKind::Call && c->name == "likely") {
    conjuncts(c->args[0], out);
  } else {
    out->push_back(c);
  }
}

bool sameExpr(const Expr &a, const Expr &b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->kind == ExprKind::Var ||
      a->intValue != b->intValue || a->floatValue != b->floatValue || a->name != b->name ||
      a->op != b->op || a->args.size() != b->args.size() || a->tensor || b->tensor ||
      !a->reduceAxes.empty() || !b->reduceAxes.empty())
    return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!sameExpr(a->args[i], b->args[i]))
      return false;
  return true;
}

namespace {

// `e` as `x op c` with a positive constant c.
bool byConstant(const Expr &e, BinOp op, Expr *x, int64_t *c) {
  if (!e || e->kind != ExprKind::Binary || e->op != op || !constValue(e->args[1], c) || *c <= 0)
    return false;
  *x = e->args[0];
  return true;
}

// (x / (a*b))*b + (x / a) % b -> x / a (or x when a is 1), with the terms in either order.
Expr foldQuotientAndRemainder(const Expr &l, const Expr &r) {
  Expr q, x, y, inner;
  int64_t b, big, b2, a = 1;
  if (!byConstant(l, BinOp::Mul, &q, &b) || !byConstant(q, BinOp::Div, &x, &big) ||
      !byConstant(r, BinOp::Mod, &inner, &b2) || b2 != b)
    return nullptr;
  if (!byConstant(inner, BinOp::Div, &y, &a)) {
    y = inner;
    a = 1;
  }
  if (big != a * b || !sameExpr(x, y))
    return nullptr;
  return a == 1 ? x : x / a;
}

} // namespace

double shiftBits(double a, double b, bool left) {
  if (b >= 64)
    return 0;
  auto v = static_cast<uint64_t>(a);
  auto by = static_cast<unsigned>(b);
  return static_cast<double>(left ? v << by : v >> by);
}

Expr foldDivMod(const Expr &e) {
  if (!e || e->kind != ExprKind::Binary || dtypeIsFloat(e->dtype))
    return e;
  Expr l = foldDivMod(e->args[0]), r = foldDivMod(e->args[1]);
  Expr x;
  int64_t a, b;
  if (e->op == BinOp::Div && byConstant(l, BinOp::Div, &x, &a) && constValue(r, &b) && b > 0 &&
      a <= (int64_t{1} << 31) && b <= (int64_t{1} << 31))
    return x / (a * b);
  if (e->op == BinOp::Add) {
    if (Expr f = foldQuotientAndRemainder(l, r))
      return f;
    if (Expr f = foldQuotientAndRemainder(r, l))
      return f;
  }
  if (l == e->args[0] && r == e->args[1])
    return e;
  return binary(e->op, l, r);
}

Expr canonicalIndex(const Expr &e) {
  auto [rest, c] = splitConstant(e);
  if (!rest)
    return intImm(c, e->dtype);
  return c == 0 ? rest : binary(BinOp::Add, rest, intImm(c, e->dtype));
}

namespace {

// Variables (by identity) replaced by expressions.
class Substituter : public IRMutator {
public:
  explicit Substituter(const std::vector<std::pair<const ExprNode *, Expr>> &map) : map_(map) {}
  Expr mutateExpr(const Expr &e) override {
    if (e->kind == ExprKind::Var) {
      for (const auto &[from, to] : map_)
        if (from == e.get())
          return to;
      return e;
    }
    return IRMutator::mutateExpr(e);
  }

private:
  const std::vector<std::pair<const ExprNode *, Expr>> &map_;
};

} // namespace

Expr substitute(const Expr &e, const std::vector<std::pair<const ExprNode *, Expr>> &map) {
  return Substituter(map).mutateExpr(e);
}

// ---------------------------------------------------------------------------------------------

namespace {

Stmt makeStmt(StmtNode n) { return std::make_shared<const StmtNode>(std::move(n)); }

} // namespace

Stmt forLoop(Expr v, Expr min, Expr extent, ForKind kind, Stmt body) {
  StmtNode n(StmtKind::For);
  n.var = std::move(v);
  n.a = std::move(min);
  n.b = std::move(extent);
  n.forKind = kind;
  n.body = {std::move(body)};
  return makeStmt(std::move(n));
}

Stmt store(const std::string &buffer, Expr index, Expr value) {
  StmtNode n(StmtKind::Store);
  n.name = buffer;
  n.a = canonicalIndex(index);
  n.b = std::move(value);
  return makeStmt(std::move(n));
}

Stmt allocate(const std::string &buffer, int dtype, std::vector<int64_t> extents, Stmt body) {
  StmtNode n(StmtKind::Allocate);
  n.name = buffer;
  n.dtype = dtype;
  n.extents = std::move(extents);
  n.body = {std::move(body)};
  return makeStmt(std::move(n));
}

Stmt allocateSized(const std::string &buffer, int dtype, Expr count, Stmt body) {
  StmtNode n(StmtKind::Allocate);
  n.name = buffer;
  n.dtype = dtype;
  n.a = std::move(count);
  n.body = {std::move(body)};
  return makeStmt(std::move(n));
}

Stmt attr(const std::string &node, const std::string &key, const std::string &value, Stmt body) {
  StmtNode n(StmtKind::Attr);
  n.name = node;
  n.key = key;
  n.value = value;
  n.body = {std::move(body)};
  return makeStmt(std::move(n));
}

Stmt produce(const std::string &name, Stmt body) {
  StmtNode n(StmtKind::Produce);
  n.name = name;
  n.body = {std::move(body)};
  return makeStmt(std::move(n));
}

Stmt ifThenElse(Expr cond, Stmt then, Stmt otherwise) {
  StmtNode n(StmtKind::IfThenElse);
  n.a = std::move(cond);
  n.body = {std::move(then)};
  if (otherwise)
    n.body.push_back(std::move(otherwise));
  return makeStmt(std::move(n));
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt &s : stmts) {
    if (!s)
      continue;
    if (s->kind == StmtKind::Seq)
      flat.insert(flat.end(), s->body.begin(), s->body.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1)
    return flat[0];
  StmtNode n(StmtKind::Seq);
  n.body = std::move(flat);
  return makeStmt(std::move(n));
}

Stmt letStmt(Expr v, Expr value, Stmt body) {
  StmtNode n(StmtKind::LetStmt);
  n.var = std::move(v);
  n.a = std::move(value);
  n.body = {std::move(body)};
  return makeStmt(std::move(n));
}

Stmt substitute(const Stmt &s, const std::vector<std::pair<const ExprNode *, Expr>> &map) {
  return Substituter(map).mutateStmt(s);
}

// ---------------------------------------------------------------------------------------------

namespace {

const char *binText(BinOp op) {
  switch (op) {
  case BinOp::Add:
    return " + ";
  case BinOp::Sub:
    return " - ";
  case BinOp::Mul:
    return "*";
  case BinOp::Div:
    return "/";
  case BinOp::Mod:
    return " % ";
  case BinOp::Shl:
    return " << ";
  case BinOp::Shr:
    return " >> ";
  case BinOp::EQ:
    return " == ";
  case BinOp::NE:
    return " != ";
  case BinOp::LT:
    return " < ";
  case BinOp::LE:
    return " <= ";
  case BinOp::GT:
    return " > ";
  case BinOp::GE:
    return " >= ";
  case BinOp::And:
    return " && ";
  case BinOp::Or:
    return " || ";
  default:
    return "";
  }
}

const char *combinerName(Combiner c) {
  switch (c) {
  case Combiner::Sum:
    return "sum";
  case Combiner::Max:
    return "max";
  case Combiner::Min:
    return "min";
  case Combiner::Prod:
    return "prod";
  }
  return "";
}

void print(std::ostream &o, const Expr &e);

void printArgs(std::ostream &o, const std::vector<Expr> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (i)
      o << ", ";
    print(o, args[i]);
  }
}

void print(std::ostream &o, const Expr &e) {
  switch (e->kind) {
  case ExprKind::IntImm:
    if (e->dtype == kBool)
      o << (e->intValue ? "(bool)1" : "(bool)0");
    else if (e->dtype == kInt32)
      o << e->intValue;
    else
      o << "(" << dtypeName(e->dtype) << ")" << e->intValue;
    return;
  case ExprKind::FloatImm: {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%f", e->floatValue);
    o << buf << (e->dtype == kFloat32 ? "f" : e->dtype == kFloat16 ? "h" : "");
    return;
  }
  case ExprKind::Var:
    o << e->name;
    return;
  case ExprKind::Binary:
    if (e->op == BinOp::Min || e->op == BinOp::Max) {
      o << (e->op == BinOp::Min ? "min(" : "max(");
      printArgs(o, e->args);
      o << ")";
      return;
    }
    o << "(";
    print(o, e->args[0]);
    o << binText(e->op);
    print(o, e->args[1]);
    o << ")";
    return;
  case ExprKind::Not:
    o << "!";
    print(o, e->args[0]);
    return;
  case ExprKind::Select:
    o << "select(";
    printArgs(o, e->args);
    o << ")";
    return;
  case ExprKind::Cast:
    o << dtypeName(e->dtype) << "(";
    print(o, e->args[0]);
    o << ")";
    return;
  case ExprKind::Call:
    o << e->name << "(";
    printArgs(o, e->args);
    o << ")";
    return;
  case ExprKind::Load:
    o << e->name << "[";
    print(o, e->args[0]);
    o << "]";
    return;
  case ExprKind::TensorRead:
    o << e->name << "(";
    printArgs(o, e->args);
    o << ")";
    return;
  case ExprKind::Reduce:
    o << "reduce_" << combinerName(e->combiner) << "(";
    print(o, e->args[0]);
    o << ", axis=[";
    for (size_t i = 0; i < e->reduceAxes.size(); ++i)
      o << (i ? ", " : "") << e->reduceAxes[i].var->name << ":" << e->reduceAxes[i].extent;
    o << "])";
    return;
  }
}

const char *forText(ForKind k) {
  switch (k) {
  case ForKind::Serial:
  case ForKind::Scalarized:
    return "for";
  case ForKind::Parallel:
    return "parallel";
  case ForKind::Vectorized:
    return "vectorized";
  case ForKind::Unrolled:
    return "unrolled";
  }
  return "for";
}

// Prints statements, counting lines so that each statement's first line can be recorded.
struct StmtPrinter {
  std::ostream &o;
  StmtLines *lines = nullptr;
  int line = 1;

  void endLine(const char *text = "\n") {
    o << text;
    ++line;
  }

  void print(const Stmt &s, int indent) {
    std::string pad(indent * 2, ' ');
    if (lines && s->kind != StmtKind::Seq)
      (*lines)[s.get()] = line;
    switch (s->kind) {
    case StmtKind::For:
      o << pad << forText(s->forKind) << " (" << s->var->name << ", ";
      loop::print(o, s->a);
      o << ", ";
      loop::print(o, s->b);
      endLine(") {\n");
      print(s->body[0], indent + 1);
      o << pad;
      endLine("}\n");
      return;
    case StmtKind::Store:
      o << pad << s->name << "[";
      loop::print(o, s->a);
      o << "] = ";
      loop::print(o, s->b);
      endLine();
      return;
    case StmtKind::Allocate:
      o << pad << "allocate " << s->name << "[" << dtypeName(s->dtype);
      for (int64_t e : s->extents)
        o << " * " << e;
      if (s->a) {
        o << " * ";
        loop::print(o, s->a);
      }
      endLine("]\n");
      print(s->body[0], indent);
      return;
    case StmtKind::Attr:
      o << pad << "// attr [" << s->name << "] " << s->key << " = " << s->value;
      endLine();
      print(s->body[0], indent);
      return;
    case StmtKind::Produce:
      o << pad << "produce " << s->name;
      endLine(" {\n");
      print(s->body[0], indent + 1);
      o << pad;
      endLine("}\n");
      return;
    case StmtKind::IfThenElse:
      o << pad << "if (";
      loop::print(o, s->a);
      endLine(") {\n");
      print(s->body[0], indent + 1);
      if (s->body.size() > 1) {
        o << pad;
        endLine("} else {\n");
        print(s->body[1], indent + 1);
      }
      o << pad;
      endLine("}\n");
      return;
    case StmtKind::Seq:
      if (lines && !s->body.empty()) // a sequence starts where its first statement does
        (*lines)[s.get()] = line;
      for (const Stmt &c : s->body)
        print(c, indent);
      return;
    case StmtKind::LetStmt:
      o << pad << "let " << s->var->name << " = ";
      loop::print(o, s->a);
      endLine();
      print(s->body[0], indent);
      return;
    }
  }
};

} // namespace

std::string printExpr(const Expr &e) {
  std::ostringstream o;
  print(o, e);
  return o.str();
}

std::string printStmt(const Stmt &s, StmtLines *lines) {
  std::ostringstream o;
  StmtPrinter{o, lines}.print(s, 0);
  return o.str();
}

} // namespace loupe::loop
