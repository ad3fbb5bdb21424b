// SymExpr: integer expressions of named size symbols (`seq`, `batch*seq*12`, `(seq+1)/2`), the
// dimensions of symbolic shapes, with the simplifications shape rules need.
//
// Why written rather than borrowed: shapes need products of symbols (`batch*seq`, the rows of a
// flattened activation), which isl's quasi-affine expressions cannot hold, and GiNaC has no floor
// division; what shapes need — polynomials with integer coefficients, floor division and
// remainder by constants, equality, substitution — is this file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// The sizes symbols are bound to (`batch` → 4).
using SymBindings = std::map<std::string, int64_t>;

/// An integer expression of size symbols, kept canonical: a sum of monomials, each an integer
/// coefficient times a sorted product of atoms (a symbol, or a floor division or remainder that
/// does not simplify). Two equal expressions in this form print the same and compare equal;
/// an expression without atoms is a constant.
class SymExpr {
public:
  /// The constant `c`.
  SymExpr(int64_t c = 0);
  /// The symbol `name` (a size: an integer ≥ 1 when bound).
  static SymExpr symbol(const std::string &name);
  /// Floor division by a positive constant (`(seq+1)/2`); throws Error when `d` ≤ 0.
  static SymExpr floorDiv(const SymExpr &a, int64_t d);
  /// Remainder of floor division by a positive constant; throws Error when `d` ≤ 0.
  static SymExpr mod(const SymExpr &a, int64_t d);
  /// Parses `seq`, `batch*seq*12`, `(seq+1)/2`, `seq%4`, `-1` (`/` is floor division by a
  /// constant); throws Error saying what is wrong where.
  static SymExpr parse(const std::string &text);

  bool isConstant() const;
  /// The value of a constant expression (0 for the zero expression); only when isConstant().
  int64_t constant() const;
  /// The symbols the expression reads.
  std::set<std::string> symbols() const;
  /// The value with every symbol bound; throws Error naming a symbol `b` does not bind.
  int64_t eval(const SymBindings &b) const;
  /// The expression with the symbols `b` binds replaced by their values.
  SymExpr substitute(const SymBindings &b) const;
  /// Exact division by a monomial (`c * seq * ...`): true, with the quotient, when every term
  /// holds the monomial's atoms and a multiple of its coefficient (how reshape's -1 divides
  /// the element count by the other dimensions').
  bool divideBy(const SymExpr &d, SymExpr *quotient) const;
  /// The expression divided by a constant when every coefficient divides exactly.
  bool exactDiv(int64_t d, SymExpr *out) const;
  /// The expression as its content times its primitive part: returns the greatest common
  /// divisor of the coefficients (positive; 0 for the zero expression) and sets `primitive` to
  /// the expression divided by it (`batch*seq*3072` → 3072 and `batch*seq`; a constant `c` → c
  /// and 1). Two sizes with the same primitive part keep one ratio at every binding of the
  /// symbols: the sizes one can order without knowing them (how PlanMemory compares blocks).
  int64_t content(SymExpr *primitive) const;
  /// Text: `batch*seq*12`, `seq+1`, `(seq+1)/2`.
  std::string str() const;

  friend SymExpr operator+(const SymExpr &a, const SymExpr &b);
  friend SymExpr operator-(const SymExpr &a, const SymExpr &b);
  friend SymExpr operator*(const SymExpr &a, const SymExpr &b);
  /// Equal canonical forms (atoms compared by their text, not by identity).
  friend bool operator==(const SymExpr &a, const SymExpr &b);
  friend bool operator!=(const SymExpr &a, const SymExpr &b) { return !(a == b); }

  struct Atom;
  /// A product of atoms, sorted by their text (empty: the constant monomial).
  using Monomial = std::vector<std::shared_ptr<const Atom>>;
  struct MonomialLess {
    bool operator()(const Monomial &a, const Monomial &b) const;
  };

  /// The monomials and their coefficients, highest degree first.
  const std::map<Monomial, int64_t, MonomialLess> &terms() const { return terms_; }
  /// The product of a monomial's atoms, coefficient 1.
  static SymExpr monomial(const Monomial &m);

private:
  std::map<Monomial, int64_t, MonomialLess> terms_; ///< no zero coefficients

  // `r / d` or `r % d` as one atom (r does not fold).
  static SymExpr remainderAtom(int kind, const SymExpr &r, int64_t d);
};

/// One atom of a monomial: a symbol, or `num / den` or `num % den` that did not simplify.
struct SymExpr::Atom {
  enum class Kind { Symbol, Div, Mod } kind = Kind::Symbol;
  std::string name; ///< the symbol's
  SymExpr num;      ///< Div and Mod
  int64_t den = 1;  ///< Div and Mod
  std::string text; ///< the atom as printed: its order and identity
};

/// The dimensions of a shape as expressions, each a constant or symbolic.
using SymDims = std::vector<SymExpr>;

/// Whether a name can be a size symbol: a letter or `_` first, then letters, digits and `_`.
bool isSymbolName(const std::string &s);

} // namespace loupe
