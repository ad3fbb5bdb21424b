// Visitor: the generic walks behind IRVisitor and IRMutator.
#include "core/loop/Visitor.h"

namespace loupe::loop {

void IRVisitor::visitExpr(const Expr &e) {
  for (const Expr &a : e->args)
    if (a)
      visitExpr(a);
}

void IRVisitor::visitStmt(const Stmt &s) {
  for (const Expr &e : {s->var, s->a, s->b})
    if (e)
      visitExpr(e);
  for (const Stmt &c : s->body)
    if (c)
      visitStmt(c);
}

Expr IRMutator::withArgs(const Expr &e, std::vector<Expr> args) {
  if (e->kind == ExprKind::Binary)
    return binary(e->op, args[0], args[1]);
  if (e->kind == ExprKind::Load)
    return load(e->name, e->dtype, args[0]);
  ExprNode n = *e;
  n.args = std::move(args);
  return std::make_shared<const ExprNode>(std::move(n));
}

Expr IRMutator::mutateExpr(const Expr &e) {
  if (e->args.empty())
    return e;
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr &a : e->args) {
    args.push_back(a ? mutateExpr(a) : a);
    changed |= args.back() != a;
  }
  return changed ? withArgs(e, std::move(args)) : e;
}

Stmt IRMutator::mutateStmt(const Stmt &s) {
  StmtNode n = *s;
  bool changed = false;
  for (Expr *e : {&n.a, &n.b})
    if (*e) {
      Expr m = mutateExpr(*e);
      changed |= m != *e;
      *e = m;
    }
  for (Stmt &c : n.body)
    if (c) {
      Stmt m = mutateStmt(c);
      changed |= m != c;
      c = m;
    }
  if (!changed)
    return s;
  if (n.kind == StmtKind::Store)
    return store(n.name, n.a, n.b);
  return std::make_shared<const StmtNode>(std::move(n));
}

} // namespace loupe::loop
