// Symbols: binding a symbolic graph's size symbols from its inputs' shapes, and substituting them.
#include "passes/Symbols.h"

#include "core/Attrs.h"
#include "core/Error.h"
#include "core/Op.h"
#include "core/Text.h"

namespace loupe {

std::map<std::string, Shape> symbolicInputs(const Graph &g) {
  std::map<std::string, Shape> out;
  const IndexedGraph &idx = g.index();
  for (uint32_t nid : idx.argNodes) {
    const Node &v = *idx.nodes[nid].node;
    if (const std::string *s = findAttr(v.attrs, "shape")) {
      Shape parsed = parseShape(*s);
      if (parsed.isSymbolic())
        out[v.name] = parsed;
    }
  }
  return out;
}

std::set<std::string> graphSymbols(const Graph &g) {
  std::set<std::string> out;
  for (const auto &[name, s] : symbolicInputs(g))
    for (const std::string &sym : s.symbols())
      out.insert(sym);
  return out;
}

std::string bindingsText(const SymBindings &b) {
  std::vector<std::string> parts;
  for (const auto &[k, v] : b)
    parts.push_back(k + "=" + std::to_string(v));
  return joinNames(parts);
}

SymBindings parseBindings(const std::string &text) {
  SymBindings b;
  for (const std::string &part : splitList(text, ',')) {
    size_t from = part.find_first_not_of(' '), eq = part.find('=');
    std::string name = eq == std::string::npos || from >= eq ? "" : part.substr(from, eq - from),
                size = eq == std::string::npos ? "" : part.substr(eq + 1);
    bool digits = !size.empty() && size.size() < 19 &&
                  size.find_first_not_of("0123456789") == std::string::npos;
    if (name.empty() || !digits || std::stoll(size) < 1 ||
        !b.emplace(name, std::stoll(size)).second)
      fail("'", text, "' is not sizes such as 'batch=1, seq=64'");
  }
  if (b.empty())
    fail("'", text, "' is not sizes such as 'batch=1, seq=64'");
  return b;
}

SymBindings bindInputs(const Graph &g, const std::map<std::string, Shape> &given,
                       const SymBindings &words, const SymBindings &keep) {
  std::map<std::string, Shape> declared = symbolicInputs(g);
  std::set<std::string> symbols = graphSymbols(g);
  SymBindings b;
  std::map<std::string, std::string> from; // which input (or word) bound each symbol
  for (const auto &[name, size] : words) {
    if (!symbols.count(name))
      fail("'", name, "' is no size symbol of the graph (its symbols: ",
           joinNames(std::vector<std::string>(symbols.begin(), symbols.end())), ")");
    if (size < 1)
      fail(name, "=", size, ": a size is a positive integer");
    b[name] = size;
    from[name] = name + "=" + std::to_string(size);
  }
  // Plain symbols first (they bind), then every dimension checked against the bindings.
  for (const auto &[name, shape] : given) {
    auto d = declared.find(name);
    if (d == declared.end())
      continue;
    if (shape.size() != d->second.size())
      fail("input ", name, " has shape ", shapeToTuple(shape), ", rank ", shape.size(),
           ", but the graph takes ", shapeToTuple(d->second));
    for (size_t i = 0; i < shape.size(); ++i) {
      SymExpr e = d->second.dim(i);
      std::set<std::string> syms = e.symbols();
      if (syms.size() != 1 || e != SymExpr::symbol(*syms.begin()))
        continue;
      const std::string &sym = *syms.begin();
      auto it = b.find(sym);
      if (it != b.end() && it->second != shape[i])
        fail("input ", name, " gives ", sym, "=", shape[i], " (dimension ", i, " of ",
             shapeToTuple(shape), "), but ",
             from[sym].find('=') != std::string::npos && !given.count(from[sym])
                 ? from[sym] + " was given"
                 : "input " + from[sym] + " gives " + sym + "=" + std::to_string(it->second));
      b[sym] = shape[i];
      from[sym] = name;
    }
  }
  for (const std::string &sym : symbols) {
    if (!b.count(sym) && keep.count(sym))
      b[sym] = keep.at(sym);
    if (!b.count(sym))
      fail("size symbol ", sym, " is not bound: give an input of that size or ", sym, "=N");
  }
  for (const auto &[name, shape] : given) {
    auto d = declared.find(name);
    if (d == declared.end())
      continue;
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t want = d->second.dim(i).eval(b);
      if (want != shape[i])
        fail("input ", name, " has shape ", shapeToTuple(shape), ", but the graph takes ",
             shapeToTuple(d->second), " = ", shapeToTuple(d->second.bound(b)), " at ",
             bindingsText(b));
    }
  }
  return b;
}

namespace {

// Whether attribute `key` of `n` holds sizes that may be expressions of size symbols: a
// variable's `shape`, an op's attribute of ParamKind::SizeTuple (reshape's target).
bool isSizesAttr(const Node &n, const std::string &key) {
  if (n.isVariable())
    return key == "shape";
  const ParamSpec *p = n.op->findParam(key);
  return p && p->kind == ParamKind::SizeTuple;
}

} // namespace

bool hasSymbolicSizes(const Node &n) {
  if (n.isVariable())
    return false;
  for (const auto &[k, v] : n.attrs)
    if (isSizesAttr(n, k) && parseShape(v).isSymbolic())
      return true;
  return false;
}

std::vector<SizeLimit> sizeLimits(const Graph &g) {
  std::vector<SizeLimit> out;
  const GraphAttr *shapes = g.attr("shape");
  if (!shapes)
    return out;
  const IndexedGraph &idx = g.index();
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable() || !n.op->sizeLimits)
      continue;
    std::vector<SymDims> in;
    for (const auto &e : idx.nodes[nid].inputs)
      in.push_back(shapes->shapes[idx.entryId(e)].dims());
    for (auto &[size, limit] : n.op->sizeLimits(n.parsed, in))
      out.push_back({size, limit, n.name});
  }
  return out;
}

void checkSizeLimits(const std::vector<SizeLimit> &limits, const SymBindings &b) {
  for (const SizeLimit &l : limits) {
    int64_t size = l.size.eval(b), limit = l.limit.eval(b);
    if (size > limit)
      fail("node ", l.node, " slices to ", l.size.str(), " = ", size, " within ", l.limit.str(),
           l.limit.isConstant() ? "" : " = " + std::to_string(limit), " at ", bindingsText(b), ": ",
           l.size.str(), " must be at most ", limit);
  }
}

Graph bindSymbols(const Graph &g, const SymBindings &b) {
  std::map<const Node *, NodePtr> copies;
  std::function<NodePtr(const NodePtr &)> copy = [&](const NodePtr &n) -> NodePtr {
    if (auto it = copies.find(n.get()); it != copies.end())
      return it->second;
    auto c = std::make_shared<Node>(*n);
    for (auto &[k, v] : c->attrs)
      if (isSizesAttr(*c, k))
        if (Shape s = parseShape(v); s.isSymbolic())
          v = shapeToTuple(s.bound(b));
    if (!c->isVariable())
      c->parsed = c->op->parse(c->attrs, false);
    for (NodeEntry &e : c->inputs)
      e.node = copy(e.node);
    for (NodePtr &d : c->controlDeps)
      d = copy(d);
    return copies[n.get()] = c;
  };
  std::vector<NodeEntry> heads;
  for (const NodeEntry &h : g.outputs())
    heads.push_back({copy(h.node), h.index, h.version});
  return Graph(heads);
}

} // namespace loupe
