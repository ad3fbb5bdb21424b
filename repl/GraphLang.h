// GraphLang: lexer and parser of the small Python-like language that mirrors nnvm.symbol.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace loupe {

/// An expression of the graph language. Positions are 1-based line:column in the input.
struct Expr {
  enum class Kind { Int, Float, Str, Name, Tuple, List, Call, Binary, Unary, Index };
  Kind kind;
  int line = 0, col = 0;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string text; ///< Str value, Name, Call's callee ("conv2d"), or the operator ("+", "**")
  std::vector<std::unique_ptr<Expr>> items; ///< Tuple/List items, Call positional args,
                                            ///< Binary (lhs, rhs), Unary operand, Index (base, i)
  std::vector<std::pair<std::string, std::unique_ptr<Expr>>> kwargs; ///< Call keywords
  std::vector<int> kwCols; ///< column of each keyword (for errors)
};
using ExprPtr = std::unique_ptr<Expr>;

/// A statement: `name = expr` or a bare expression (target empty).
struct Stmt {
  std::string target;
  ExprPtr value;
  int line = 0, col = 0;
};

/// Parses one or more statements (separated by newlines or ';'; `#` starts a comment).
/// Throws Error carrying line and column on a syntax error.
std::vector<Stmt> parseStatements(const std::string &text);

/// True when `text` has an unclosed bracket or string, so an interactive reader should ask for
/// another line before parsing.
bool needsMoreInput(const std::string &text);

} // namespace loupe
