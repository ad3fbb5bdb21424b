// Printer: PrintGraphIR and the node table, reproducing NNVM's punctuation exactly.
#include "core/Printer.h"

#include "core/AttrOrder.h"
#include "core/Error.h"

namespace loupe {

bool isPerNodeAttr(const std::string &key) {
  return key == "group_root" || key == "group_master" || key == "pattern" || key == "device";
}

namespace {

std::string entryRef(const IndexedGraph &idx, const IndexedGraph::Entry &e) {
  const Node &n = *idx.nodes[e.nodeId].node;
  if (n.isVariable())
    return "%" + n.name;
  std::string s = "%" + std::to_string(e.nodeId);
  if (n.numOutputs() > 1)
    s += "." + std::to_string(e.index);
  return s;
}

std::string renderValue(const GraphAttr &a, size_t i) {
  switch (a.type) {
  case GraphAttr::Type::ListInt:
    return std::to_string(a.ints[i]);
  case GraphAttr::Type::ListShape:
    return shapeToCompact(a.shapes[i]);
  default:
    return a.strs[i];
  }
}

size_t listSize(const GraphAttr &a) {
  switch (a.type) {
  case GraphAttr::Type::ListInt:
    return a.ints.size();
  case GraphAttr::Type::ListShape:
    return a.shapes.size();
  case GraphAttr::Type::ListStr:
  case GraphAttr::Type::ListLayout:
    return a.strs.size();
  default:
    return static_cast<size_t>(-1);
  }
}

struct Join {
  std::string key;
  const GraphAttr *attr;
  bool perNode;
};

std::string joined(const IndexedGraph &idx, const std::vector<Join> &joins, uint32_t nid) {
  std::string s;
  for (const auto &j : joins) {
    s += ", " + j.key + "=";
    uint32_t nout = idx.nodes[nid].node->numOutputs();
    if (j.perNode) {
      s += renderValue(*j.attr, nid);
    } else if (nout == 1) {
      s += renderValue(*j.attr, idx.entryId(nid, 0));
    } else {
      s += "[";
      for (uint32_t k = 0; k < nout; ++k)
        s += (k ? ", " : "") + renderValue(*j.attr, idx.entryId(nid, k));
      s += "]";
    }
  }
  return s;
}

} // namespace

std::string graphAttrKeysLine(const Graph &g) {
  if (g.attrs.empty())
    return "";
  std::string s = "graph_attr_keys = [";
  auto keys = orderedAttrKeys(g.attrs);
  for (size_t i = 0; i < keys.size(); ++i)
    s += (i ? ", " : "") + keys[i];
  return s + "]";
}

std::string printGraphIR(const Graph &g, const std::vector<std::string> &joinAttrs,
                         const std::function<std::string(uint32_t nid)> &comment) {
  const IndexedGraph &idx = g.index();
  std::vector<Join> joins;
  for (const auto &k : joinAttrs) {
    const GraphAttr *a = g.attr(k);
    if (!a)
      fail("the graph has no attribute '", k, "'", didYouMean(k, orderedAttrKeys(g.attrs)));
    size_t n = listSize(*a);
    bool perNode = isPerNodeAttr(k) && n == idx.numNodes();
    if (!perNode && n != idx.numEntries())
      fail("attribute '", k, "' is not a list with one value per entry or per node");
    joins.push_back({k, a, perNode});
  }
  std::string s = "Graph(";
  const char *sep = idx.argNodes.size() >= 4 ? ",\n      " : ", ";
  for (size_t i = 0; i < idx.argNodes.size(); ++i)
    s += (i ? sep : "") + ("%" + idx.nodes[idx.argNodes[i]].node->name);
  s += ") {\n";
  if (!joins.empty())
    for (uint32_t nid : idx.argNodes)
      s += "  %" + idx.nodes[nid].node->name + joined(idx, joins, nid) + "\n";
  for (uint32_t nid = 0; nid < idx.numNodes(); ++nid) {
    const auto &in = idx.nodes[nid];
    const Node &n = *in.node;
    if (n.isVariable())
      continue;
    s += "  %" + std::to_string(nid) + " = " + n.op->name + "(";
    bool first = true;
    for (const auto &e : in.inputs) {
      s += (first ? "" : ", ") + entryRef(idx, e);
      first = false;
    }
    for (const auto &[k, v] : nnvmOrdered(n.attrs)) {
      s += (first ? "" : ", ") + k + "='" + v + "'";
      first = false;
    }
    s += ")";
    if (!in.controlDeps.empty()) {
      s += ", control_deps=[";
      for (size_t i = 0; i < in.controlDeps.size(); ++i) {
        uint32_t c = in.controlDeps[i];
        const Node &cn = *idx.nodes[c].node;
        s += (i ? ", " : "") + (cn.isVariable() ? "%" + cn.name : "%" + std::to_string(c));
      }
      s += "]";
    }
    s += joined(idx, joins, nid);
    if (comment)
      if (std::string c = comment(nid); !c.empty())
        s += "  # " + c;
    s += "\n";
  }
  s += "  ret ";
  for (size_t i = 0; i < idx.heads.size(); ++i)
    s += (i ? ", " : "") + entryRef(idx, idx.heads[i]);
  s += "\n}";
  if (!g.attrs.empty())
    s += "\n" + graphAttrKeysLine(g) + "\n";
  return s;
}

PyValue nodeToPy(const IndexedGraph &idx, uint32_t nid) {
  const auto &in = idx.nodes[nid];
  const Node &n = *in.node;
  std::vector<std::pair<std::string, PyValue>> d;
  d.emplace_back("op", PyValue::s(n.isVariable() ? "null" : n.op->name));
  d.emplace_back("name", PyValue::s(n.name));
  if (!n.attrs.empty()) {
    // graph.index comes from SaveJSON, which writes attrs sorted by key.
    auto sorted = n.attrs;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::pair<std::string, PyValue>> a;
    for (const auto &[k, v] : sorted)
      a.emplace_back(k, PyValue::s(v));
    d.emplace_back("attrs", PyValue::dictOf(std::move(a)));
  }
  std::vector<PyValue> inputs;
  for (const auto &e : in.inputs)
    inputs.push_back(
        PyValue::list({PyValue::i(e.nodeId), PyValue::i(e.index), PyValue::i(e.version)}));
  d.emplace_back("inputs", PyValue::list(std::move(inputs)));
  if (!in.controlDeps.empty()) {
    std::vector<PyValue> cd;
    for (uint32_t c : in.controlDeps)
      cd.push_back(PyValue::i(c));
    d.emplace_back("control_deps", PyValue::list(std::move(cd)));
  }
  return PyValue::dictOf(std::move(d));
}

PyValue nodesToPy(const IndexedGraph &idx) {
  std::vector<PyValue> v;
  for (uint32_t i = 0; i < idx.numNodes(); ++i)
    v.push_back(nodeToPy(idx, i));
  return PyValue::list(std::move(v));
}

} // namespace loupe
