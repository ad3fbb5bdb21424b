// Shape: tensor shapes (NNVM TShape), with NNVM's "0 means unknown" convention and printers.
#pragma once

#include "core/SymExpr.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// A tensor shape: its dimensions, NNVM's TShape. A 0 dimension is unknown, as in NNVM's
/// InferShape, and so is an empty list, unless it is the rank-0 shape `()` of a scalar
/// (Relay's, and ONNX's; NNVM had none), made by `Shape::scalar()`. A symbolic shape
/// (`(batch, seq, 768)`, made by `Shape::symbolic`) keeps each dimension's expression beside its
/// value: a constant dimension has its value, a symbolic one 0 — unknown to every rule that
/// reads sizes, which is what a size not known until run time is. Keeping the two apart in
/// one flag, rather than a sentinel rank, keeps every NNVM rule that writes `Shape s;` for
/// "not known yet" meaning what it meant; a rule that can produce `()` says so explicitly.
class Shape : public std::vector<int64_t> {
public:
  using std::vector<int64_t>::vector;
  Shape() = default;
  Shape(const std::vector<int64_t> &dims) : std::vector<int64_t>(dims) {}
  Shape(std::vector<int64_t> &&dims) : std::vector<int64_t>(std::move(dims)) {}

  /// The rank-0 shape `()`: one element, no dimensions.
  static Shape scalar() {
    Shape s;
    s.scalar_ = true;
    return s;
  }
  /// A shape of these dimensions; symbolic when one of them is not a constant.
  static Shape symbolic(const SymDims &dims);
  /// Whether some dimension is a symbolic expression.
  bool isSymbolic() const { return !syms_.empty() && syms_.size() == size(); }
  /// Dimension i as an expression (its value when not symbolic).
  SymExpr dim(size_t i) const { return isSymbolic() ? syms_[i] : SymExpr((*this)[i]); }
  /// Every dimension as an expression.
  SymDims dims() const;
  /// The symbols the dimensions read.
  std::set<std::string> symbols() const;
  /// The shape with the symbols `b` binds replaced by their values (still symbolic when `b`
  /// leaves some unbound).
  Shape bound(const SymBindings &b) const;
  /// The text of dimension i: its value or its expression.
  std::string dimText(size_t i) const;

  // Writing a dimension through a mutable reference or iterator drops the expressions: a rule
  // that copies a symbolic shape and changes a size (dense's last axis to its units) makes a
  // shape with unknown sizes, never one whose expressions describe other sizes. Reads through
  // const access keep them.
  int64_t &operator[](size_t i) { return plain()[i]; }
  const int64_t &operator[](size_t i) const { return base()[i]; }
  int64_t &at(size_t i) { return plain().at(i); }
  const int64_t &at(size_t i) const { return base().at(i); }
  int64_t &front() { return plain().front(); }
  const int64_t &front() const { return base().front(); }
  int64_t &back() { return plain().back(); }
  const int64_t &back() const { return base().back(); }
  iterator begin() { return plain().begin(); }
  const_iterator begin() const { return base().begin(); }
  iterator end() { return plain().end(); }
  const_iterator end() const { return base().end(); }
  reverse_iterator rbegin() { return plain().rbegin(); }
  const_reverse_iterator rbegin() const { return base().rbegin(); }
  reverse_iterator rend() { return plain().rend(); }
  const_reverse_iterator rend() const { return base().rend(); }
  int64_t *data() { return plain().data(); }
  const int64_t *data() const { return base().data(); }

  /// Whether this is the rank-0 shape `()` (not an unknown one).
  bool isScalar() const { return empty() && scalar_; }
  /// Whether the rank is known: some dimensions, or `()`.
  bool rankKnown() const { return !empty() || scalar_; }

  /// Equal dimensions, and `()` is not the unknown shape.
  friend bool operator==(const Shape &a, const Shape &b) {
    return static_cast<const std::vector<int64_t> &>(a) ==
               static_cast<const std::vector<int64_t> &>(b) &&
           a.isScalar() == b.isScalar() && a.isSymbolic() == b.isSymbolic() &&
           (!a.isSymbolic() || a.syms_ == b.syms_);
  }

private:
  std::vector<int64_t> &plain() {
    syms_.clear();
    return *this;
  }
  const std::vector<int64_t> &base() const { return *this; }

  bool scalar_ = false; ///< meaningful only while the list is empty
  SymDims syms_;        ///< one per dimension when symbolic, else empty
};

/// True when the rank is known (`()` included) and no dimension is 0 (unknown).
bool shapeKnown(const Shape &s);

/// True when every dimension is a size or an expression of size symbols: what a shape display
/// shows (a symbolic shape is not shapeKnown: its sizes come at run time).
inline bool shapeDescribed(const Shape &s) { return shapeKnown(s) || s.isSymbolic(); }

/// Product of the dimensions (1 for a 0-d shape). Throws Error when it overflows int64.
int64_t numElements(const Shape &s);
/// Product of the dimensions as an expression: numElements for a shape of sizes, the product of
/// the expressions for a symbolic one (`(batch, seq, 768)` → `batch*seq*768`).
SymExpr elementCount(const Shape &s);

/// The largest divisor of `n` not above `limit` (1 when there is none above 1): block sizes
/// and tile widths that divide a dimension.
int64_t largestDivisorUpTo(int64_t n, int64_t limit);

/// Python list form used by `:attr`: "[1, 13, 100, 100]".
std::string shapeToList(const Shape &s);

/// Python tuple form used in attribute strings: "(1, 13, 100, 100)", "(3,)", "()".
std::string shapeToTuple(const Shape &s);

/// Compact form used by PrintGraphIR's joined attributes: "[1,13,100,100]".
std::string shapeToCompact(const Shape &s);

/// Normalises a possibly negative axis against a rank; throws Error naming `what` if out of range.
int normalizeAxis(int64_t axis, int ndim, const std::string &what);

} // namespace loupe
