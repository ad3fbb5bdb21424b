// Scopes: names split into scope paths, and per folded scope its ops, op counts and the shapes
// crossing its border.
#include "view/Scopes.h"

#include "core/DType.h"
#include "core/Text.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace loupe::gui {

namespace {

// The shape of entry `e` as a box line shows it, or empty before InferShape.
std::string shapeText(const Graph &g, uint32_t e) {
  const GraphAttr *shape = g.attr("shape");
  if (!shape || shape->shapes.size() != g.index().numEntries() || !shapeDescribed(shape->shapes[e]))
    return "";
  return shapeToTuple(shape->shapes[e]);
}

// "in (1, 96, 56, 56)" from distinct shapes, the first two and a count of the rest.
std::string shapesLine(const char *what, const std::vector<std::string> &shapes) {
  std::vector<std::string> distinct;
  for (const std::string &s : shapes)
    if (!s.empty() && std::find(distinct.begin(), distinct.end(), s) == distinct.end())
      distinct.push_back(s);
  if (distinct.empty())
    return "";
  std::string line = what;
  for (size_t i = 0; i < distinct.size() && i < 2; ++i)
    line += (i ? ", " : " ") + distinct[i];
  if (distinct.size() > 2)
    line += " +" + std::to_string(distinct.size() - 2);
  return line;
}

// A variable, or an exporter's copy of one (ONNX Identity): weights, not data entering a scope.
bool variableLike(const Node &n) {
  return n.isVariable() ||
         (n.op->name == "copy" && n.inputs.size() == 1 && n.inputs[0].node->isVariable());
}

} // namespace

std::string foldedScope(const Graph &g, uint32_t nid, const ScopeFold &fold) {
  const Node &n = *g.index().nodes.at(nid).node;
  if (fold.depth <= 0 || n.isVariable())
    return "";
  std::vector<std::string> s = scopeOf(n.name);
  for (size_t k = static_cast<size_t>(fold.depth); k <= s.size(); ++k)
    if (std::string p = scopePath(s, k); !fold.unfolded.count(p))
      return p;
  return "";
}

std::vector<CollapsedBox> scopeBoxes(const Graph &g, const ScopeFold &fold) {
  const IndexedGraph &idx = g.index();
  std::map<std::string, std::vector<uint32_t>> members;
  std::vector<std::string> scopeAt(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (std::string p = foldedScope(g, nid, fold); !p.empty()) {
      members[p].push_back(nid);
      scopeAt[nid] = p;
    }
  // What leaves a box: entries its ops make that an op outside reads or the graph returns.
  std::vector<std::vector<uint32_t>> leaving(idx.numNodes());
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    for (const auto &e : idx.nodes[nid].inputs)
      if (!scopeAt[e.nodeId].empty() && scopeAt[e.nodeId] != scopeAt[nid])
        leaving[e.nodeId].push_back(idx.entryId(e));
  for (const auto &h : idx.heads)
    if (!scopeAt[h.nodeId].empty())
      leaving[h.nodeId].push_back(idx.entryId(h));
  std::vector<CollapsedBox> boxes;
  for (auto &[path, ops] : members) {
    CollapsedBox b;
    b.members = ops; // in id order: the first names the box
    b.scope = path;
    std::map<std::string, size_t> byOp;
    std::vector<std::string> in, out;
    for (uint32_t nid : ops) {
      ++byOp[idx.nodes[nid].node->op->name];
      for (const auto &e : idx.nodes[nid].inputs)
        if (scopeAt[e.nodeId] != path && !variableLike(*idx.nodes[e.nodeId].node))
          in.push_back(shapeText(g, idx.entryId(e)));
      for (uint32_t e : leaving[nid])
        out.push_back(shapeText(g, e));
    }
    std::vector<std::pair<size_t, std::string>> counts;
    for (const auto &[op, count] : byOp)
      counts.push_back({count, op});
    std::stable_sort(counts.begin(), counts.end(),
                     [](const auto &a, const auto &c) { return a.first > c.first; });
    std::string kinds;
    for (size_t i = 0; i < counts.size() && i < 3; ++i)
      kinds += (i ? ", " : "") + std::to_string(counts[i].first) + " " + counts[i].second;
    if (counts.size() > 3)
      kinds += ", …";
    b.lines = {"[+] " + path,
               std::to_string(ops.size()) + (ops.size() == 1 ? " op: " : " ops: ") + kinds};
    for (const std::string &line : {shapesLine("in", in), shapesLine("out", out)})
      if (!line.empty())
        b.lines.push_back(line);
    boxes.push_back(std::move(b));
  }
  std::sort(boxes.begin(), boxes.end(), [](const CollapsedBox &a, const CollapsedBox &b) {
    return a.members[0] < b.members[0];
  });
  return boxes;
}

int scopeDepth(const Graph &g) {
  size_t deepest = 0;
  for (const auto &in : g.index().nodes)
    if (!in.node->isVariable())
      deepest = std::max(deepest, scopeOf(in.node->name).size());
  return static_cast<int>(deepest);
}

std::vector<ScopeOutline> scopeOutlines(const Graph &g, const GraphLayout &layout,
                                        const ScopeFold &fold, double margin) {
  std::vector<ScopeOutline> outlines;
  if (fold.depth <= 0 || fold.unfolded.empty())
    return outlines;
  std::map<std::string, ScopeOutline> byPath;
  size_t deepest = 0;
  for (const LaidNode &n : layout.nodes) {
    // A box's scopes: a folded scope's own path, or an op's name's scopes.
    std::vector<std::string> path =
        !n.scope.empty() ? splitList(n.scope, '/')
                         : (n.kind == NodeKind::Op ? scopeOf(g.index().nodes[n.nid].node->name)
                                                   : std::vector<std::string>{});
    for (size_t k = 1; k <= path.size(); ++k) {
      std::string p = scopePath(path, k);
      if (!fold.unfolded.count(p) || (k == path.size() && !n.scope.empty()))
        continue; // (a folded scope's box is not inside its own outline)
      auto [it, fresh] = byPath.try_emplace(p);
      ScopeOutline &o = it->second;
      if (fresh) {
        o = {p, static_cast<int>(k), n.x - n.w / 2, n.y - n.h / 2, n.x + n.w / 2, n.y + n.h / 2};
      } else {
        o.x0 = std::min(o.x0, n.x - n.w / 2), o.y0 = std::min(o.y0, n.y - n.h / 2);
        o.x1 = std::max(o.x1, n.x + n.w / 2), o.y1 = std::max(o.y1, n.y + n.h / 2);
      }
      deepest = std::max(deepest, k);
    }
  }
  for (auto &[path, o] : byPath) {
    // Each level out a little wider, and a name's height taller: its path is written on top.
    double levels = static_cast<double>(deepest - static_cast<size_t>(o.depth));
    double grow = margin + 6.0 * levels;
    o.x0 -= grow, o.y0 -= margin + 16.0 * levels + 14, o.x1 += grow, o.y1 += grow;
    outlines.push_back(o);
  }
  std::stable_sort(outlines.begin(), outlines.end(),
                   [](const ScopeOutline &a, const ScopeOutline &b) { return a.depth < b.depth; });
  return outlines;
}

ScopeFold revealing(const Graph &g, uint32_t nid, ScopeFold fold) {
  if (fold.depth <= 0 || nid >= g.index().numNodes())
    return fold;
  std::vector<std::string> s = scopeOf(g.index().nodes[nid].node->name);
  for (size_t k = static_cast<size_t>(fold.depth); k <= s.size(); ++k)
    fold.unfolded.insert(scopePath(s, k));
  return fold;
}

} // namespace loupe::gui
