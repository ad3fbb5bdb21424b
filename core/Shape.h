// Shape: tensor shapes (NNVM TShape), with NNVM's "0 means unknown" convention and printers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loupe {

/// A tensor shape. An empty shape, or one with a 0 dimension, is (partially) unknown, as in
/// NNVM's InferShape.
using Shape = std::vector<int64_t>;

/// True when the shape has at least one dimension and no dimension is 0 (unknown).
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
