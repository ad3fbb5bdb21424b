// SizeVars: size symbols as loop variables and size expressions as loop arithmetic.
#include "core/loop/SizeVars.h"

#include "core/loop/Visitor.h"

#include <map>
#include <mutex>
#include <set>

namespace loupe::loop {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, Expr> vars;
  std::set<const ExprNode *> nodes;
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

Expr sizeVar(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto [it, added] = r.vars.try_emplace(name);
  if (added) {
    it->second = var(name);
    r.nodes.insert(it->second.get());
  }
  return it->second;
}

bool isSizeVar(const ExprNode *v) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.nodes.count(v) != 0;
}

Expr sizeExpr(const SymExpr &e) {
  Expr sum;
  for (const auto &[mono, coef] : e.terms()) {
    Expr term;
    for (const auto &atom : mono) {
      Expr a;
      switch (atom->kind) {
      case SymExpr::Atom::Kind::Symbol:
        a = sizeVar(atom->name);
        break;
      case SymExpr::Atom::Kind::Div:
        a = sizeExpr(atom->num) / atom->den;
        break;
      case SymExpr::Atom::Kind::Mod:
        a = sizeExpr(atom->num) % atom->den;
        break;
      }
      term = term ? term * a : a;
    }
    term = term ? (coef == 1 ? term : term * coef) : intImm(coef);
    sum = sum ? sum + term : term;
  }
  return sum ? sum : intImm(0);
}

Expr dimExtent(const Shape &shape, size_t d) {
  return shape.isSymbolic() && !shape.dim(d).isConstant() ? sizeExpr(shape.dim(d))
                                                          : intImm(shape[d]);
}

IterVar reduceAxisOver(const Shape &shape, size_t d, const std::string &name) {
  Expr size = dimExtent(shape, d);
  if (size->kind == ExprKind::IntImm)
    return {var(name), shape[d], nullptr};
  return {var(name), 0, size};
}

Shape dropDim(const Shape &shape, size_t d) {
  if (!shape.isSymbolic()) {
    Shape out = shape;
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(d));
    return out;
  }
  SymDims dims = shape.dims();
  dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(d));
  return Shape::symbolic(dims);
}

Shape appendDim(const Shape &shape, int64_t extent) {
  if (!shape.isSymbolic()) {
    Shape out = shape;
    out.push_back(extent);
    return out;
  }
  SymDims dims = shape.dims();
  dims.push_back(SymExpr(extent));
  return Shape::symbolic(dims);
}

std::vector<std::string> sizeSymbolsOf(const Stmt &s) {
  struct Names : IRVisitor {
    std::set<std::string> found;
    void visitExpr(const Expr &e) override {
      if (e->kind == ExprKind::Var && isSizeVar(e.get()))
        found.insert(e->name);
      IRVisitor::visitExpr(e);
    }
  } names;
  names.visitStmt(s);
  return {names.found.begin(), names.found.end()};
}

} // namespace loupe::loop
