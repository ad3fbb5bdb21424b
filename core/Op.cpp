// Op: registry storage, attribute parsing against declared parameters, shape/type merging.
#include "core/Op.h"

#include "core/Error.h"

#include <algorithm>

namespace loupe {

const char *patternName(int p) {
  switch (p) {
  case kElemWise:
    return "ElemWise";
  case kBroadcast:
    return "Broadcast";
  case kInjective:
    return "Injective";
  case kCommReduce:
    return "CommReduce";
  case kOutEWiseFusable:
    return "OutEWiseFusable";
  default:
    return "Opaque";
  }
}

std::vector<int64_t> stridesOf(const Shape &s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i)
    st[i] = st[i + 1] * s[i + 1];
  return st;
}

// Merges `src` into `dst`: unknown (0) dims take the other's value; known dims must agree.
static bool mergeShape(Shape &dst, const Shape &src) {
  if (!src.rankKnown())
    return true;
  if (!dst.rankKnown()) {
    dst = src;
    return true;
  }
  if (dst.size() != src.size() || dst.isScalar() != src.isScalar())
    return false;
  for (size_t i = 0; i < dst.size(); ++i) {
    if (src[i] == 0)
      continue;
    if (dst[i] == 0)
      dst[i] = src[i];
    else if (dst[i] != src[i])
      return false;
  }
  // A symbolic shape's expressions are kept: merged into a shape whose symbolic dimensions are
  // still unknown, they say what those dimensions are.
  if (src.isSymbolic() && !dst.isSymbolic()) {
    SymDims d = src.dims();
    for (size_t i = 0; i < d.size(); ++i)
      if (!d[i].isConstant() && dst[i] != 0)
        return true; // known here: the concrete size stands
    dst = Shape::symbolic(d);
  }
  return true;
}

void ShapeCtx::error(const std::string &msg) const {
  fail("operator ", node, " (", op, "): ", msg);
}

void SymShapeCtx::error(const std::string &msg) const {
  fail("operator ", node, " (", op, "): ", msg);
}

void ShapeCtx::assignIn(size_t i, const Shape &s) {
  Shape merged = in[i];
  if (!mergeShape(merged, s)) {
    std::string arg = i < argNames.size() ? argNames[i] : "input " + std::to_string(i);
    error(cat("input '", arg, "' has shape ", shapeToList(in[i]), " but ", shapeToList(s),
              " is required"));
  }
  in[i] = merged;
}

void ShapeCtx::assignOut(size_t i, const Shape &s) {
  Shape merged = out[i];
  if (!mergeShape(merged, s))
    error(cat("output ", i, " has shape ", shapeToList(out[i]), " but the inputs give ",
              shapeToList(s)));
  out[i] = merged;
}

void sameTypeRule(TypeCtx &c) {
  int t = -1;
  for (int v : c.out)
    if (v != -1) {
      t = v;
      break;
    }
  if (t == -1)
    for (int v : c.in)
      if (v != -1) {
        t = v;
        break;
      }
  if (t == -1)
    return;
  for (size_t i = 0; i < c.in.size(); ++i)
    c.assignIn(i, t);
  for (size_t i = 0; i < c.out.size(); ++i)
    c.assignOut(i, t);
}

void TypeCtx::assignIn(size_t i, int t) {
  if (t == -1)
    return;
  if (in[i] != -1 && in[i] != t)
    fail("operator ", node, " (", op, "): input ", i, " has dtype ", dtypeName(in[i]), " but ",
         dtypeName(t), " is required");
  in[i] = t;
}

void TypeCtx::assignOut(size_t i, int t) {
  if (t == -1)
    return;
  if (out[i] != -1 && out[i] != t)
    fail("operator ", node, " (", op, "): output ", i, " has dtype ", dtypeName(out[i]),
         " but the inputs give ", dtypeName(t));
  out[i] = t;
}

const ParamSpec *OpDef::findParam(const std::string &n) const {
  for (const auto &p : params)
    if (p.name == n)
      return &p;
  return nullptr;
}

Attrs OpDef::parse(const AttrDict &dict, bool strict) const {
  Attrs a;
  for (const auto &[k, v] : dict) {
    const ParamSpec *p = findParam(k);
    if (!p) {
      bool hidden = k.rfind("__", 0) == 0;
      bool isVarArgKey = !keyVarNumArgs.empty() && k == keyVarNumArgs;
      if (hidden || isVarArgKey || (!strict && params.empty()))
        continue;
      std::vector<std::string> names;
      for (const auto &q : params)
        names.push_back(q.name);
      if (params.empty())
        fail("unknown attribute '", k, "': ", name, " takes no attributes");
      std::string list;
      for (const auto &n : names)
        list += (list.empty() ? "" : ", ") + n;
      fail("unknown attribute '", k, "'", didYouMean(k, names), "; ", name, " takes ", list);
    }
    try {
      a.set(k, parseParam(*p, v), v, true);
    } catch (const Error &e) {
      fail("attribute '", k, "': ", e.what());
    }
  }
  for (const auto &p : params) {
    if (a.given(p.name))
      continue;
    if (!p.dflt)
      fail("missing required attribute '", p.name, "'", p.doc.empty() ? "" : " (" + p.doc + ")");
    a.set(p.name, parseParam(p, *p.dflt), *p.dflt, false);
  }
  return a;
}

OpRegistry &OpRegistry::get() {
  static OpRegistry r;
  return r;
}

OpDef &OpRegistry::add(const std::string &name) {
  auto &slot = ops_[name];
  if (slot)
    fail("internal: op ", name, " registered twice");
  slot = std::make_unique<OpDef>();
  slot->name = name;
  byName_[name] = slot.get();
  return *slot;
}

const OpDef *OpRegistry::find(const std::string &name) const {
  auto it = byName_.find(name);
  if (it != byName_.end())
    return it->second;
  // Aliases are attached after add() returns, so look them up lazily.
  for (const auto &[n, op] : ops_)
    for (const auto &al : op->aliases)
      if (al == name)
        return op.get();
  return nullptr;
}

std::vector<const OpDef *> OpRegistry::all() const {
  std::vector<const OpDef *> v;
  for (const auto &[n, op] : ops_)
    v.push_back(op.get());
  return v;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> v;
  for (const auto &[n, op] : ops_) {
    v.push_back(n);
    for (const auto &al : op->aliases)
      v.push_back(al);
  }
  std::sort(v.begin(), v.end());
  return v;
}

// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours each cost one, so "rleu" is one step from "relu" as a typist would count it.
static size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::vector<std::string> nearestNames(const std::string &name,
                                      const std::vector<std::string> &candidates) {
  std::vector<std::pair<size_t, std::string>> scored;
  // A third of the name's letters, at least one, and never every letter: "3" is not near "x",
  // nor "foo" near "dot".
  size_t limit = std::max<size_t>(1, name.size() / 3);
  for (const auto &c : candidates) {
    size_t d = editDistance(name, c);
    if (d <= limit && d < std::max(name.size(), c.size()))
      scored.emplace_back(d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < 3; ++i)
    out.push_back(scored[i].second);
  return out;
}

std::string didYouMean(const std::string &name, const std::vector<std::string> &candidates) {
  auto near = nearestNames(name, candidates);
  if (near.empty())
    return "";
  std::string s = " (did you mean ";
  for (size_t i = 0; i < near.size(); ++i)
    s += (i ? ", '" : "'") + near[i] + "'";
  return s + "?)";
}

} // namespace loupe
