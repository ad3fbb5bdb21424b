// Layout: parsing layout strings and mapping shapes and element positions between layouts.
#include "core/Layout.h"

#include "core/Error.h"

#include <cctype>
#include <map>
#include <set>

namespace loupe {

std::vector<LayoutAxis> parseLayout(const std::string &layout) {
  std::vector<LayoutAxis> axes;
  std::set<char> seen;
  int64_t factor = 0;
  for (char c : layout) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      factor = factor * 10 + (c - '0');
      continue;
    }
    bool upper = std::isupper(static_cast<unsigned char>(c)),
         lower = std::islower(static_cast<unsigned char>(c));
    if (!upper && !lower)
      fail("layout '", layout, "': unexpected character '", c, "'");
    if (lower && factor <= 0)
      fail("layout '", layout, "': sub-axis '", c, "' needs a factor, as in 16", c);
    if (upper && factor != 0)
      fail("layout '", layout, "': a factor must be followed by a lower-case sub-axis");
    if (!seen.insert(c).second)
      fail("layout '", layout, "': axis '", c, "' appears twice");
    axes.push_back({c, lower ? factor : 0});
    factor = 0;
  }
  if (factor != 0)
    fail("layout '", layout, "' ends with a number");
  for (const auto &a : axes)
    if (a.factor && !seen.count(static_cast<char>(std::toupper(a.name))))
      fail("layout '", layout, "': sub-axis '", a.name, "' has no primal axis");
  return axes;
}

namespace {

// The full extent of every primal axis of a shape in a layout.
std::map<char, int64_t> extents(const Shape &s, const std::vector<LayoutAxis> &axes,
                                const std::string &layout) {
  if (s.size() != axes.size())
    fail("shape ", shapeToList(s), " does not have the ", axes.size(), " axes of layout ", layout);
  std::map<char, int64_t> full;
  for (size_t i = 0; i < axes.size(); ++i)
    if (!axes[i].factor)
      full[axes[i].name] = s[i];
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].factor) {
      if (s[i] != axes[i].factor)
        fail("shape ", shapeToList(s), " has ", s[i], " where layout ", layout, " says ",
             axes[i].factor);
      full[static_cast<char>(std::toupper(axes[i].name))] *= axes[i].factor;
    }
  return full;
}

std::set<char> primal(const std::vector<LayoutAxis> &axes) {
  std::set<char> p;
  for (const auto &a : axes)
    if (!a.factor)
      p.insert(a.name);
  return p;
}

int64_t subFactor(const std::vector<LayoutAxis> &axes, char primalAxis) {
  for (const auto &a : axes)
    if (a.factor && std::toupper(a.name) == primalAxis)
      return a.factor;
  return 1;
}

} // namespace

std::string primalLayout(const std::string &layout) {
  std::string p;
  for (const LayoutAxis &a : parseLayout(layout))
    if (a.factor == 0)
      p += a.name;
  return p;
}

// convertLayoutShape of a symbolic shape: each primal axis's full extent as an expression
// (the block axes must be their factors), cut as `dst` cuts it where the expression divides.
static Shape convertSymbolicLayoutShape(const Shape &s, const std::vector<LayoutAxis> &sa,
                                        const std::vector<LayoutAxis> &da, const std::string &src,
                                        const std::string &dst) {
  if (s.size() != sa.size())
    fail("shape ", shapeToList(s), " does not have the ", sa.size(), " axes of layout ", src);
  std::map<char, SymExpr> full;
  for (size_t i = 0; i < sa.size(); ++i)
    if (!sa[i].factor)
      full[sa[i].name] = s.dim(i);
  for (size_t i = 0; i < sa.size(); ++i)
    if (sa[i].factor) {
      if (s.dim(i) != SymExpr(sa[i].factor))
        fail("shape ", shapeToList(s), " has ", s.dimText(i), " where layout ", src, " says ",
             sa[i].factor);
      char p = static_cast<char>(std::toupper(sa[i].name));
      full[p] = full[p] * SymExpr(sa[i].factor);
    }
  SymDims out;
  for (const auto &a : da) {
    if (a.factor) {
      out.push_back(SymExpr(a.factor));
      continue;
    }
    int64_t f = subFactor(da, a.name);
    SymExpr cut;
    if (!full[a.name].exactDiv(f, &cut))
      fail("cannot convert ", shapeToList(s), " from ", src, " to ", dst, ": axis ", a.name,
           " of size ", full[a.name].str(), " does not split by ", f);
    out.push_back(cut);
  }
  return Shape::symbolic(out);
}

Shape convertLayoutShape(const Shape &s, const std::string &src, const std::string &dst) {
  auto sa = parseLayout(src), da = parseLayout(dst);
  if (primal(sa) != primal(da))
    fail("cannot convert layout ", src, " to ", dst, ": they have different axes");
  if (s.isSymbolic())
    return convertSymbolicLayoutShape(s, sa, da, src, dst);
  auto full = extents(s, sa, src);
  Shape out;
  for (const auto &a : da) {
    if (a.factor) {
      out.push_back(a.factor);
      continue;
    }
    int64_t f = subFactor(da, a.name);
    if (full[a.name] % f != 0)
      fail("cannot convert ", shapeToList(s), " from ", src, " to ", dst, ": axis ", a.name,
           " of size ", full[a.name], " does not split by ", f);
    out.push_back(full[a.name] / f);
  }
  return out;
}

LayoutSourceMap::LayoutSourceMap(const Shape &srcShape, const std::string &src,
                                 const std::string &dst)
    : dstShape_(convertLayoutShape(srcShape, src, dst)) { // validates layouts and shape
  auto sa = parseLayout(src), da = parseLayout(dst);
  auto slot = [](char axis) { return std::toupper(static_cast<unsigned char>(axis)) - 'A'; };
  for (const LayoutAxis &a : da)
    dst_.push_back({slot(a.name), a.factor ? 1 : subFactor(da, a.name)});
  std::map<char, int64_t> full = extents(srcShape, sa, src);
  for (const auto &[axis, extent] : full) {
    primals_.push_back(slot(axis));
    tables_[slot(axis)].assign(static_cast<size_t>(extent), 0);
  }
  int64_t stride = 1;
  for (size_t i = sa.size(); i-- > 0;) {
    std::vector<int64_t> &t = tables_[slot(sa[i].name)];
    int64_t div = sa[i].factor ? 1 : subFactor(sa, sa[i].name);
    for (size_t c = 0; c < t.size(); ++c) {
      int64_t v = static_cast<int64_t>(c);
      t[c] += (sa[i].factor ? v % sa[i].factor : v / div) * stride;
    }
    stride *= srcShape[i];
  }
}

int64_t LayoutSourceMap::offset(const std::vector<int64_t> &dstIndex) const {
  int64_t coord[26] = {}; // the logical coordinate of every primal axis, by letter
  for (size_t i = 0; i < dst_.size(); ++i)
    coord[dst_[i].primal] += dstIndex[i] * dst_[i].scale;
  int64_t off = 0;
  for (int p : primals_)
    off += tables_[p][coord[p]];
  return off;
}

} // namespace loupe
