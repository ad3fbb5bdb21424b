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

SymExpr elementCount(const Shape &s) {
  if (!s.isSymbolic())
    return SymExpr(numElements(s));
  SymExpr n(1);
  for (size_t i = 0; i < s.size(); ++i)
    n = n * s.dim(i);
  return n;
}

int64_t largestDivisorUpTo(int64_t n, int64_t limit) {
  for (int64_t b = limit; b > 1; --b)
    if (n % b == 0)
      return b;
  return 1;
}

Shape Shape::symbolic(const SymDims &dims) {
  Shape s;
  bool symbolic = false;
  for (const SymExpr &d : dims) {
    s.push_back(d.isConstant() ? d.constant() : 0);
    symbolic = symbolic || !d.isConstant();
  }
  if (symbolic)
    s.syms_ = dims;
  else if (dims.empty())
    s.scalar_ = true;
  return s;
}

SymDims Shape::dims() const {
  SymDims out;
  for (size_t i = 0; i < size(); ++i)
    out.push_back(dim(i));
  return out;
}

std::set<std::string> Shape::symbols() const {
  std::set<std::string> out;
  if (isSymbolic())
    for (const SymExpr &d : syms_)
      for (const std::string &n : d.symbols())
        out.insert(n);
  return out;
}

Shape Shape::bound(const SymBindings &b) const {
  if (!isSymbolic())
    return *this;
  SymDims d;
  for (const SymExpr &e : syms_)
    d.push_back(e.substitute(b));
  return symbolic(d);
}

std::string Shape::dimText(size_t i) const {
  return isSymbolic() ? syms_[i].str() : std::to_string((*this)[i]);
}

static std::string join(const Shape &s, const char *sep) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      out += sep;
    out += s.dimText(i);
  }
  return out;
}

std::string shapeToList(const Shape &s) { return "[" + join(s, ", ") + "]"; }

std::string shapeToTuple(const Shape &s) {
  if (s.size() == 1)
    return "(" + s.dimText(0) + ",)";
  return "(" + join(s, ", ") + ")";
}

std::string shapeToCompact(const Shape &s) { return "[" + join(s, ",") + "]"; }

int normalizeAxis(int64_t axis, int ndim, const std::string &what) {
  if (axis < -ndim || axis >= ndim)
    fail(what, ": axis ", axis, " is out of range for a ", ndim, "-d input");
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

} // namespace loupe
