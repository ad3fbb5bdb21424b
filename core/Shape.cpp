// Shape: printing and small helpers.
#include "core/Shape.h"

#include "core/Error.h"

namespace loupe {

bool shapeKnown(const Shape &s) {
  if (!s.rankKnown())
    return false;
  for (int64_t d : s)
    if (d == 0)
      return false;
  return true;
}

int64_t numElements(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    // Checked: a shape read from a file can hold any dimensions (found by fuzzing an ONNX
    // Reshape), and an overflowing product is undefined behaviour, not just a wrong count.
    if (__builtin_mul_overflow(n, d, &n))
      fail("shape ", shapeToTuple(s), " has more elements than a 64-bit count holds");
  return n;
}

int64_t largestDivisorUpTo(int64_t n, int64_t limit) {
  for (int64_t b = limit; b > 1; --b)
    if (n % b == 0)
      return b;
  return 1;
}

static std::string join(const Shape &s, const char *sep) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      out += sep;
    out += std::to_string(s[i]);
  }
  return out;
}

std::string shapeToList(const Shape &s) { return "[" + join(s, ", ") + "]"; }

std::string shapeToTuple(const Shape &s) {
  if (s.size() == 1)
    return "(" + std::to_string(s[0]) + ",)";
  return "(" + join(s, ", ") + ")";
}

std::string shapeToCompact(const Shape &s) { return "[" + join(s, ",") + "]"; }

int normalizeAxis(int64_t axis, int ndim, const std::string &what) {
  if (axis < -ndim || axis >= ndim)
    fail(what, ": axis ", axis, " is out of range for a ", ndim, "-d input");
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

} // namespace loupe
