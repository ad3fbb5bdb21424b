// GuardVersions: the bounds tests of a generic kernel's tiles hoisted to one test per tile.
#include "backend/loop/GuardVersions.h"

#include "core/DType.h"
#include "core/loop/SizeVars.h"
#include "core/loop/Visitor.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

namespace loupe::loop {

namespace {

bool isLazySelect(const Expr &e) {
  return e->kind == ExprKind::Call && e->name == "tvm_if_then_else" && e->args.size() == 3;
}

bool readsSizeSymbol(const Expr &e) {
  if (e->kind == ExprKind::Var)
    return isSizeVar(e.get());
  for (const Expr &a : e->args)
    if (a && readsSizeSymbol(a))
      return true;
  return false;
}

// `a < n` of a guard `if (likely(a < n))`, or nullopt.
std::optional<std::pair<Expr, Expr>> guardTest(const Stmt &s) {
  if (s->kind != StmtKind::IfThenElse || s->body.size() != 1)
    return std::nullopt;
  Expr c = s->a;
  if (c->kind == ExprKind::Call && c->name == "likely" && c->args.size() == 1)
    c = c->args[0];
  if (c->kind != ExprKind::Binary || c->op != BinOp::LT)
    return std::nullopt;
  return std::make_pair(c->args[0], c->args[1]);
}

// Whether a statement holds a guard (an if) anywhere.
bool hasGuard(const Stmt &s) {
  struct Finder : IRVisitor {
    bool found = false;
    void visitStmt(const Stmt &t) override {
      found = found || t->kind == StmtKind::IfThenElse;
      IRVisitor::visitStmt(t);
    }
  } f;
  f.visitStmt(s);
  return f.found;
}

// A walk that knows the loops and lets around each statement: the loops of constant range (with
// their last value) and the variables it cannot bound (loops over symbolic extents, lets). Each
// guard `if (likely(a < n))` met is offered to guard().
class BoundsWalker : public IRVisitor {
public:
  void visitStmt(const Stmt &s) override {
    if (s->kind == StmtKind::For) {
      int64_t lo, n;
      bool constant = constValue(s->a, &lo) && constValue(s->b, &n) && n > 0;
      if (constant)
        inner_.push_back({s->var.get(), lo + n - 1});
      else
        variable_.push_back(s->var.get());
      IRVisitor::visitStmt(s);
      if (constant)
        inner_.pop_back();
      else
        variable_.pop_back();
      return;
    }
    if (s->kind == StmtKind::LetStmt) {
      variable_.push_back(s->var.get());
      IRVisitor::visitStmt(s);
      variable_.pop_back();
      return;
    }
    if (auto t = guardTest(s))
      guard(s, t->first, t->second);
    IRVisitor::visitStmt(s);
  }

protected:
  virtual void guard(const Stmt &s, const Expr &a, const Expr &n) = 0;

  // `a` at the last values of the loops of constant range around it, when `a < n` holds there
  // for all of them: neither reads a variable it cannot bound, n none of those loops, and `a`
  // grows with each (a non-negative coefficient); nullopt otherwise.
  std::optional<Expr> largest(const Expr &a, const Expr &n) const {
    for (const ExprNode *v : variable_)
      if (usesVar(a, v) || usesVar(n, v))
        return std::nullopt;
    Expr top = a;
    for (const auto &[v, hi] : inner_) {
      if (usesVar(n, v))
        return std::nullopt;
      if (!usesVar(a, v))
        continue;
      std::optional<int64_t> k = linearCoef(a, v);
      if (!k || *k < 0)
        return std::nullopt;
      top = substitute(top, {{v, intImm(hi)}});
    }
    return top;
  }

private:
  std::vector<std::pair<const ExprNode *, int64_t>> inner_; // loops of constant range: top
  std::vector<const ExprNode *> variable_;                  // loops and lets it cannot bound
};

// The guards of `body` that one test per iteration of the enclosing loop decides: `a < n` with
// a or n reading a size symbol (a tail's test, or a test bound inference could not decide over
// a symbolic loop), n none of the loops inside, and a affine with non-negative coefficients in
// the loops inside (of constant ranges), their largest `a` tested instead.
class GuardCollector : public BoundsWalker {
public:
  std::vector<Expr> tests;                  // largest a < n, one per guard kept
  std::map<const StmtNode *, bool> hoisted; // guards decided by the tests

protected:
  void guard(const Stmt &s, const Expr &a, const Expr &n) override {
    if (!readsSizeSymbol(a) && !readsSizeSymbol(n))
      return;
    std::optional<Expr> top = largest(a, n);
    if (!top)
      return;
    hoisted[s.get()] = true;
    // Stages computed at one row test the same bounds: each test once.
    Expr test = lt(*top, n);
    if (seen_.insert(printExpr(test)).second)
      tests.push_back(test);
  }

private:
  std::set<std::string> seen_; // the tests kept, as text
};

// The body without the hoisted guards (and with the lazy selects whose tests are decided
// reading their first value), its scalarized vector loops vectorised again where no guard
// inside them remains.
class Unguard : public IRMutator {
public:
  explicit Unguard(const std::map<const StmtNode *, bool> &hoisted,
                   const std::set<const ExprNode *> &decided = {})
      : hoisted_(hoisted), decided_(decided) {}
  Stmt mutateStmt(const Stmt &s) override {
    if (hoisted_.count(s.get()))
      return mutateStmt(s->body[0]);
    Stmt m = IRMutator::mutateStmt(s);
    if (m->kind == StmtKind::For && m->forKind == ForKind::Scalarized && !hasGuard(m->body[0])) {
      StmtNode n = *m;
      n.forKind = ForKind::Vectorized;
      return std::make_shared<const StmtNode>(std::move(n));
    }
    return m;
  }
  Expr mutateExpr(const Expr &e) override {
    if (isLazySelect(e) && decided_.count(e->args[0].get()))
      return mutateExpr(e->args[1]);
    return IRMutator::mutateExpr(e);
  }

private:
  const std::map<const StmtNode *, bool> &hoisted_;
  const std::set<const ExprNode *> &decided_;
};

// The tail tests of a loop over a symbolic extent: the guards and lazy selects `a < n` in its
// body with `a` growing with the loop (a positive coefficient) and with the loops inside it (of
// constant ranges, non-negative coefficients), `n` none of them. Each holds for the whole body
// below the iteration `(n - r - 1 + c) / c` (c the loop's coefficient, r the rest of `a` at the
// inner loops' last values): the iterations before the least such bound need none of them.
class TailCollector : public BoundsWalker {
public:
  explicit TailCollector(const ExprNode *loop) : loop_(loop) {}
  std::map<const StmtNode *, bool> guards; // guards decided below the bound
  std::set<const ExprNode *> selects;      // lazy selects' tests decided below it
  Expr bound;                              // the least bound, null when none decided

  void visitExpr(const Expr &e) override {
    if (isLazySelect(e) && e->args[0]->kind == ExprKind::Binary && e->args[0]->op == BinOp::LT &&
        decide(e->args[0]->args[0], e->args[0]->args[1]))
      selects.insert(e->args[0].get());
    IRVisitor::visitExpr(e);
  }

protected:
  void guard(const Stmt &s, const Expr &a, const Expr &n) override {
    if (decide(a, n))
      guards[s.get()] = true;
  }

private:
  const ExprNode *loop_;

  bool decide(const Expr &a, const Expr &n) {
    if (!usesVar(a, loop_) || usesVar(n, loop_))
      return false;
    std::optional<int64_t> c = linearCoef(a, loop_);
    std::optional<Expr> top = largest(a, n);
    if (!c || *c <= 0 || !top)
      return false;
    Expr rest = substitute(*top, {{loop_, intImm(0)}});
    int64_t r;
    Expr at =
        constValue(rest, &r) ? (r == *c - 1 ? n : n + (*c - 1 - r)) / *c : (n - rest - 1 + *c) / *c;
    bound = bound ? min(bound, at) : at;
    return true;
  }
};

// Each serial loop over a symbolic extent (a reduction along `seq` in vectors: its last vector
// tested per element) in two: the iterations every tail test holds for without the tests, then
// the rest with them.
class TailSplitter : public IRMutator {
public:
  Stmt mutateStmt(const Stmt &s) override {
    Stmt m = IRMutator::mutateStmt(s);
    if (m->kind != StmtKind::For || m->forKind != ForKind::Serial || !readsSizeSymbol(m->b))
      return m;
    int64_t lo;
    if (!constValue(m->a, &lo) || lo != 0)
      return m;
    TailCollector c(m->var.get());
    c.visitStmt(m->body[0]);
    if (!c.bound)
      return m;
    Expr whole = max(min(c.bound, m->b), intImm(0, m->b->dtype));
    Stmt fast = Unguard(c.guards, c.selects).mutateStmt(m->body[0]);
    return seq({forLoop(m->var, m->a, whole, ForKind::Serial, fast),
                forLoop(m->var, whole, m->b - whole, ForKind::Serial, m->body[0])});
  }
};

class Versioner : public IRMutator {
public:
  Stmt mutateStmt(const Stmt &s) override {
    if (s->kind != StmtKind::For || s->forKind != ForKind::Parallel)
      return IRMutator::mutateStmt(s);
    GuardCollector g;
    g.visitStmt(s->body[0]);
    if (g.hoisted.empty())
      return s;
    Expr all;
    for (const Expr &t : g.tests)
      all = all ? land(all, t) : t;
    Stmt fast = Unguard(g.hoisted).mutateStmt(s->body[0]);
    StmtNode n = *s;
    n.body = {ifThenElse(call("likely", {all}, kBool), fast, s->body[0])};
    return std::make_shared<const StmtNode>(std::move(n));
  }
};

// Each vector loop scalarized for its bounds tests (a last tile's columns, element by
// element), where its body is a chain of guards: the tests that do not read the loop hoisted
// out of it, and those that grow with it (`a < n`, a positive coefficient) decided per vector —
// all lanes in, the vector loop without them; the first lane out, nothing; else the lanes
// tested one by one.
class LaneVersioner : public IRMutator {
public:
  Stmt mutateStmt(const Stmt &s) override {
    Stmt m = IRMutator::mutateStmt(s);
    int64_t lo, n;
    if (m->kind != StmtKind::For || m->forKind != ForKind::Scalarized || !constValue(m->a, &lo) ||
        !constValue(m->b, &n) || n <= 0)
      return m;
    const ExprNode *v = m->var.get();
    Expr hoisted, first, last;
    std::vector<Expr> laneTests;
    Stmt inner = m->body[0];
    while (auto t = guardTest(inner)) {
      const auto &[a, bound] = *t;
      if (usesVar(bound, v))
        break;
      if (!usesVar(a, v)) {
        Expr test = lt(a, bound);
        hoisted = hoisted ? land(hoisted, test) : test;
      } else {
        std::optional<int64_t> c = linearCoef(a, v);
        if (!c || *c <= 0)
          break;
        Expr top = lt(substitute(a, {{v, intImm(lo + n - 1)}}), bound),
             bottom = lt(substitute(a, {{v, intImm(lo)}}), bound);
        first = first ? land(first, bottom) : bottom;
        last = last ? land(last, top) : top;
        laneTests.push_back(lt(a, bound));
      }
      inner = inner->body[0];
    }
    if (!hoisted && laneTests.empty())
      return m;
    // The body under its lane tests (in their order) for the partial vector; without them for a
    // whole one, vectorised when no other test is left inside.
    Stmt tested = inner;
    for (size_t k = laneTests.size(); k-- > 0;)
      tested = ifThenElse(call("likely", {laneTests[k]}, kBool), tested);
    Stmt result = forLoop(m->var, m->a, m->b, ForKind::Scalarized, tested);
    if (!laneTests.empty()) {
      bool clean = !hasGuard(inner);
      Stmt whole =
          forLoop(m->var, m->a, m->b, clean ? ForKind::Vectorized : ForKind::Scalarized, inner);
      result = ifThenElse(call("likely", {last}, kBool), whole, ifThenElse(first, result));
    }
    return hoisted ? ifThenElse(call("likely", {hoisted}, kBool), result) : result;
  }
};

} // namespace

Stmt versionSymbolicGuards(const Stmt &body) {
  return LaneVersioner().mutateStmt(Versioner().mutateStmt(TailSplitter().mutateStmt(body)));
}

} // namespace loupe::loop
