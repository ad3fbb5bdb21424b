// Dot: DOT text from an indexed graph and its shape, dtype and group_root attributes.
#include "core/Dot.h"

#include "core/DType.h"
#include "core/Op.h"

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

} // namespace

std::string graphToDot(const Graph &g) {
  const IndexedGraph &idx = g.index();
  const GraphAttr *shape = sized(g, "shape", idx.numEntries());
  const GraphAttr *dtype = sized(g, "dtype", idx.numEntries());
  const GraphAttr *root = sized(g, "group_root", idx.numNodes());
  std::ostringstream out;
  out << "digraph loupe {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
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
           "];\n";
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
    for (const auto &in : idx.nodes[nid].inputs) {
      out << "  n" << in.nodeId << " -> n" << nid;
      if (idx.nodes[in.nodeId].node->numOutputs() > 1)
        out << " [label=" << quoted(std::to_string(in.index)) << "]";
      out << ";\n";
    }
  out << "}\n";
  return out.str();
}

} // namespace loupe
