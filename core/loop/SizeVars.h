// SizeVars: a symbolic shape's size symbols as loop-IR variables, so that loops and buffer
// indices can run over `batch*seq` rows bound at run time (a generic kernel's extents).
#pragma once

#include "core/Shape.h"
#include "core/loop/LoopIR.h"

#include <string>
#include <vector>

namespace loupe::loop {

/// The loop variable of size symbol `name`: one node per name in the process, so that every
/// stage, loop and index of a function that reads `seq` reads the same variable (variables are
/// compared by identity).
Expr sizeVar(const std::string &name);

/// Whether `v` is a size symbol's variable (made by sizeVar).
bool isSizeVar(const ExprNode *v);

/// A size expression as integer loop arithmetic over the symbols' variables (`batch*seq*12`,
/// `(seq + 1)/2`); sizes are never negative, so floor division is the loop IR's division.
Expr sizeExpr(const SymExpr &e);

/// Dimension `d` of `shape` as an extent: its value, or its expression of the size symbols.
Expr dimExtent(const Shape &shape, size_t d);

/// A reduction axis over dimension `d` of `shape`: constant, or over its symbolic extent.
IterVar reduceAxisOver(const Shape &shape, size_t d, const std::string &name);

/// `shape` without dimension `d`, its other dimensions' expressions kept.
Shape dropDim(const Shape &shape, size_t d);

/// `shape` with `extent` appended, its dimensions' expressions kept.
Shape appendDim(const Shape &shape, int64_t extent);

/// The size symbols a statement reads, sorted by name.
std::vector<std::string> sizeSymbolsOf(const Stmt &s);

} // namespace loupe::loop
