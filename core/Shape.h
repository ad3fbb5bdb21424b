// Shape: tensor shapes (NNVM TShape), with NNVM's "0 means unknown" convention and printers.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// A tensor shape: its dimensions, NNVM's TShape. A 0 dimension is unknown, as in NNVM's
/// InferShape, and so is an empty list, unless it is the rank-0 shape `()` of a scalar
/// (Relay's, and ONNX's; NNVM had none), made by `Shape::scalar()`. Keeping the two apart in
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
  /// Whether this is the rank-0 shape `()` (not an unknown one).
  bool isScalar() const { return empty() && scalar_; }
  /// Whether the rank is known: some dimensions, or `()`.
  bool rankKnown() const { return !empty() || scalar_; }

  /// Equal dimensions, and `()` is not the unknown shape.
  friend bool operator==(const Shape &a, const Shape &b) {
    return static_cast<const std::vector<int64_t> &>(a) ==
               static_cast<const std::vector<int64_t> &>(b) &&
           a.isScalar() == b.isScalar();
  }

private:
  bool scalar_ = false; ///< meaningful only while the list is empty
};

/// True when the rank is known (`()` included) and no dimension is 0 (unknown).
bool shapeKnown(const Shape &s);

/// Product of the dimensions (1 for a 0-d shape). Throws Error when it overflows int64.
int64_t numElements(const Shape &s);

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
