// GuardVersions: the bounds tests of a generic kernel's tiles hoisted to one test per tile.
#include "backend/loop/GuardVersions.h"

#include "core/DType.h"
#include "core/loop/SizeVars.h"
#include "core/loop/Visitor.h"

#include <map>
#include <optional>
#include <vector>

namespace loupe::loop {

namespace {

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

// The guards of `body` that one test per iteration of the enclosing loop decides: `a < n` with
// a or n reading a size symbol (a tail's test, or a test bound inference could not decide over
// a symbolic loop), n none of the loops inside, and a affine with non-negative coefficients in
// the loops inside (of constant ranges), their largest `a` tested instead.
class GuardCollector : public IRVisitor {
public:
  std::vector<Expr> tests;                  // largest a < n, one per guard kept
  std::map<const StmtNode *, bool> hoisted; // guards decided by the tests

  void visitStmt(const Stmt &s) override {
    if (s->kind == StmtKind::For) {
      int64_t lo, n;
      if (!constValue(s->a, &lo) || !constValue(s->b, &n) || n <= 0) {
        variable_.push_back(s->var.get());
        IRVisitor::visitStmt(s);
        variable_.pop_back();
        return;
      }
      inner_.push_back({s->var.get(), lo + n - 1});
      IRVisitor::visitStmt(s);
      inner_.pop_back();
      return;
    }
    if (s->kind == StmtKind::LetStmt) {
      variable_.push_back(s->var.get());
      IRVisitor::visitStmt(s);
      variable_.pop_back();
      return;
    }
    if (auto t = guardTest(s);
        t && (readsSizeSymbol(t->first) || readsSizeSymbol(t->second)) && decidable(*t))
      hoisted[s.get()] = true;
    IRVisitor::visitStmt(s);
  }

private:
  std::vector<std::pair<const ExprNode *, int64_t>> inner_; // loops of constant range: top
  std::vector<const ExprNode *> variable_;                  // loops and lets it cannot bound

  bool decidable(const std::pair<Expr, Expr> &t) {
    const auto &[a, n] = t;
    for (const ExprNode *v : variable_)
      if (usesVar(a, v) || usesVar(n, v))
        return false;
    Expr top = a;
    for (const auto &[v, hi] : inner_) {
      if (usesVar(n, v))
        return false;
      if (!usesVar(a, v))
        continue;
      std::optional<int64_t> k = linearCoef(a, v);
      if (!k || *k < 0)
        return false;
      top = substitute(top, {{v, intImm(hi)}});
    }
    tests.push_back(lt(top, n));
    return true;
  }
};

// The body without the hoisted guards, its scalarized vector loops vectorised again where no
// guard inside them remains.
class Unguard : public IRMutator {
public:
  explicit Unguard(const std::map<const StmtNode *, bool> &hoisted) : hoisted_(hoisted) {}
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

private:
  const std::map<const StmtNode *, bool> &hoisted_;
  static bool hasGuard(const Stmt &s) {
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

} // namespace

Stmt versionSymbolicGuards(const Stmt &body) { return Versioner().mutateStmt(body); }

} // namespace loupe::loop
