// Visitor: the loop IR's visitor and mutator — one generic walk over every node kind, so a
// pass over loops overrides only the kinds it cares about (TVM's IRVisitor / IRMutator).
#pragma once

#include "core/loop/LoopIR.h"

namespace loupe::loop {

/// Walks expressions and statements. The defaults visit every operand: an expression's
/// arguments (tensor-read indices, reduce source and condition included), a statement's
/// expressions and then its body. Override and call the base to keep walking.
class IRVisitor {
public:
  virtual ~IRVisitor() = default;
  virtual void visitExpr(const Expr &e);
  virtual void visitStmt(const Stmt &s);
};

/// Rewrites expressions and statements bottom-up. The defaults rewrite every operand and
/// rebuild a node only when an operand changed (through the builders, so integer arithmetic
/// folds again); unchanged subtrees stay shared.
class IRMutator {
public:
  virtual ~IRMutator() = default;
  virtual Expr mutateExpr(const Expr &e);
  virtual Stmt mutateStmt(const Stmt &s);

protected:
  /// `e` with new operands (the default's rebuild step, for overrides that change operands).
  static Expr withArgs(const Expr &e, std::vector<Expr> args);
};

} // namespace loupe::loop
