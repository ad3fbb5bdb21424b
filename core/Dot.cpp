// Dot: DOT text from an indexed graph and its shape, dtype and group_root attributes.
#include "core/Dot.h"

#include "core/DType.h"
#include "core/Op.h"

#include <cstdio>
#include <map>
#include <sstream>

namespace loupe {

namespace {

// A DOT string literal: quotes and backslashes escaped, line breaks as DOT's \n.
std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

// A per-entry or per-node attribute, when it has the right length for this graph.
const GraphAttr *sized(const Graph &g, const char *key, size_t n) {
  const GraphAttr *a = g.attr(key);
  if (!a)
    return nullptr;
  size_t have = a->type == GraphAttr::Type::ListShape ? a->shapes.size() : a->ints.size();
  return have == n ? a : nullptr;
}

// A coordinate with two decimals, as Graphviz writes them.
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

} // namespace

std::string graphToDot(const Graph &g, const DotPlacement *placed) {
  const IndexedGraph &idx = g.index();
  const GraphAttr *shape = sized(g, "shape", idx.numEntries());
  const GraphAttr *dtype = sized(g, "dtype", idx.numEntries());
  const GraphAttr *root = sized(g, "group_root", idx.numNodes());
  std::ostringstream out;
  out << "digraph loupe {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  if (placed)
    out << "  graph [bb=" << quoted("0,0," + number(placed->width) + "," + number(placed->height))
        << "];\n";
  // A placed node's pos (its centre) and its size in inches, fixed: what neato -n2 draws.
  auto placement = [&](uint32_t nid) -> std::string {
    if (!placed)
      return "";
    auto it = placed->nodes.find(nid);
    if (it == placed->nodes.end())
      return "";
    const DotPlacement::Box &b = it->second;
    return ", pos=" + quoted(number(b.x) + "," + number(b.y) + "!") +
           ", width=" + number(b.w / 72) + ", height=" + number(b.h / 72) + ", fixedsize=true";
  };
  auto nodeLine = [&](uint32_t nid, const std::string &indent) {
    const Node &n = *idx.nodes[nid].node;
    std::string label = n.name;
    if (!n.isVariable()) {
      label += "\n" + n.op->name;
      if (n.op->name == "tvm_op")
        label += " " + n.parsed.getStr("func_name");
    }
    for (uint32_t k = 0; k < n.numOutputs(); ++k) {
      uint32_t e = idx.entryId(nid, k);
      std::string out;
      if (shape && shapeKnown(shape->shapes[e]))
        out += shapeToTuple(shape->shapes[e]);
      if (dtype && dtype->ints[e] >= 0)
        out += (out.empty() ? "" : " ") + std::string(dtypeName(static_cast<int>(dtype->ints[e])));
      if (!out.empty())
        label += "\n" + out;
    }
    return indent + "n" + std::to_string(nid) + " [label=" + quoted(label) +
           (n.isVariable() ? ", shape=ellipse, style=filled, fillcolor=\"#eeeeee\""
                           : ", shape=box") +
           placement(nid) + "];\n";
  };
  // Groups of two or more nodes become clusters; the rest are drawn at the top level.
  std::map<int64_t, std::vector<uint32_t>> groups;
  if (root)
    for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
      if (root->ints[nid] >= 0)
        groups[root->ints[nid]].push_back(nid);
  std::vector<bool> clustered(idx.numNodes(), false);
  for (const auto &[r, members] : groups) {
    if (members.size() < 2)
      continue;
    out << "  subgraph cluster_" << r
        << " {\n    label=" << quoted("group " + idx.nodes[r].node->name)
        << ";\n    style=rounded;\n";
    for (uint32_t m : members) {
      out << nodeLine(m, "    ");
      clustered[m] = true;
    }
    out << "  }\n";
  }
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    if (!clustered[nid])
      out << nodeLine(nid, "  ");
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid)
    for (uint32_t k = 0; k < idx.nodes[nid].inputs.size(); ++k) {
      const auto &in = idx.nodes[nid].inputs[k];
      std::vector<std::string> attrs;
      if (idx.nodes[in.nodeId].node->numOutputs() > 1)
        attrs.push_back("label=" + quoted(std::to_string(in.index)));
      if (placed)
        if (auto it = placed->edges.find({in.nodeId, nid, k}); it != placed->edges.end()) {
          // An edge's pos: its end point (the arrowhead's tip), then the spline's points.
          const DotPlacement::Curve &c = it->second;
          std::string pos = "e," + number(c.head.first) + "," + number(c.head.second);
          for (const auto &[x, y] : c.points)
            pos += " " + number(x) + "," + number(y);
          attrs.push_back("pos=" + quoted(pos));
        }
      out << "  n" << in.nodeId << " -> n" << nid;
      for (size_t i = 0; i < attrs.size(); ++i)
        out << (i ? ", " : " [") << attrs[i];
      out << (attrs.empty() ? "" : "]") << ";\n";
    }
  out << "}\n";
  return out.str();
}

} // namespace loupe
