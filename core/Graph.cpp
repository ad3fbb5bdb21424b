// Graph: node construction, graph attributes, and the indexed view.
#include "core/Graph.h"

#include "core/Error.h"
#include "core/PyFormat.h"

#include <algorithm>
#include <set>

namespace loupe {

uint32_t Node::numOutputs() const { return op ? static_cast<uint32_t>(op->numOutputs(parsed)) : 1; }

uint32_t Node::numVisibleOutputs() const {
  return op ? static_cast<uint32_t>(op->numVisibleOutputs(parsed)) : 1;
}

std::vector<NodeEntry> outputsOf(const NodePtr &node) {
  std::vector<NodeEntry> outs;
  for (uint32_t k = 0; k < node->numOutputs(); ++k)
    outs.push_back({node, k, 0});
  return outs;
}

NodePtr makeVariable(const std::string &name, AttrDict attrs) {
  auto n = std::make_shared<Node>();
  n->name = name;
  n->attrs = std::move(attrs);
  return n;
}

NodePtr makeOpNode(const OpDef &op, const std::string &name, AttrDict attrs,
                   std::vector<NodeEntry> inputs, std::vector<NodePtr> controlDeps, bool strict) {
  auto n = std::make_shared<Node>();
  n->op = &op;
  n->name = name;
  try {
    n->parsed = op.parse(attrs, strict);
  } catch (const Error &e) {
    fail("operator ", name, " (", op.name, "): ", e.what());
  }
  n->attrs = std::move(attrs);
  if (!op.variadic) {
    size_t want = op.argNames(n->parsed).size();
    if (inputs.size() != want)
      fail("operator ", name, " (", op.name, "): expects ", want, " inputs, got ", inputs.size());
  } else if (inputs.size() < op.minInputs) {
    fail("operator ", name, " (", op.name, "): expects at least one input");
  }
  for (const auto &e : inputs)
    if (!e.node || e.index >= e.node->numOutputs())
      fail("operator ", name, " (", op.name, "): input refers to a missing output");
  n->inputs = std::move(inputs);
  n->controlDeps = std::move(controlDeps);
  return n;
}

GraphAttr GraphAttr::listInt(std::vector<int64_t> v) {
  GraphAttr a;
  a.type = Type::ListInt;
  a.ints = std::move(v);
  return a;
}
GraphAttr GraphAttr::listShape(std::vector<Shape> v) {
  GraphAttr a;
  a.type = Type::ListShape;
  a.shapes = std::move(v);
  return a;
}
GraphAttr GraphAttr::listStr(std::vector<std::string> v) {
  GraphAttr a;
  a.type = Type::ListStr;
  a.strs = std::move(v);
  return a;
}
GraphAttr GraphAttr::listLayout(std::vector<std::string> v) {
  GraphAttr a;
  a.type = Type::ListLayout;
  a.strs = std::move(v);
  return a;
}
GraphAttr GraphAttr::string(std::string v) {
  GraphAttr a;
  a.type = Type::Str;
  a.str = std::move(v);
  return a;
}
GraphAttr GraphAttr::sizeT(int64_t v) {
  GraphAttr a;
  a.type = Type::SizeT;
  a.num = v;
  return a;
}
GraphAttr GraphAttr::integer(int64_t v) {
  GraphAttr a;
  a.type = Type::Int;
  a.num = v;
  return a;
}

const char *GraphAttr::typeName() const {
  switch (type) {
  case Type::ListInt:
    return "list_int";
  case Type::ListShape:
    return "list_shape";
  case Type::ListStr:
    return "list_str";
  case Type::Str:
    return "str";
  case Type::SizeT:
    return "size_t";
  case Type::Int:
    return "int";
  case Type::ListLayout:
    return "list_layout";
  case Type::DictStrInt:
    return "dict_str_int";
  case Type::Opaque:
    return "opaque";
  }
  return "?";
}

std::string GraphAttr::pyRepr() const {
  std::string out;
  auto list = [&](size_t n, auto item) {
    out = "[";
    for (size_t i = 0; i < n; ++i) {
      if (i)
        out += ", ";
      out += item(i);
    }
    out += "]";
  };
  switch (type) {
  case Type::ListInt:
    list(ints.size(), [&](size_t i) { return std::to_string(ints[i]); });
    break;
  case Type::ListShape:
    list(shapes.size(), [&](size_t i) { return shapeToList(shapes[i]); });
    break;
  case Type::ListStr:
  case Type::ListLayout:
    list(strs.size(), [&](size_t i) { return pyStrRepr(strs[i]); });
    break;
  case Type::Str:
    out = pyStrRepr(str);
    break;
  case Type::SizeT:
  case Type::Int:
    out = std::to_string(num);
    break;
  case Type::DictStrInt: {
    out = "{";
    bool first = true;
    for (const auto &[k, v] : dict) {
      out += (first ? "" : ", ") + pyStrRepr(k) + ": " + std::to_string(v);
      first = false;
    }
    out += "}";
    break;
  }
  case Type::Opaque:
    out = "<" + str + ">";
    break;
  }
  return out;
}

bool GraphAttr::operator==(const GraphAttr &o) const {
  return type == o.type && ints == o.ints && shapes == o.shapes && strs == o.strs && str == o.str &&
         num == o.num && dict == o.dict && opaque == o.opaque;
}

std::vector<std::string> orderedAttrKeys(const GraphAttrs &attrs) {
  // The documented order. Observed seed lines it reproduces:
  //   [shape_num_unknown_nodes, layout, shape] and [storage_id, dtype, dltype, shape, module].
  static const std::vector<std::string> kRank = {"json",
                                                 "graphir",
                                                 "storage_id",
                                                 "storage_inplace_index",
                                                 "storage_allocated_bytes",
                                                 "storage_num_not_allocated",
                                                 "pattern",
                                                 "group_root",
                                                 "group_master",
                                                 "shape_num_unknown_nodes",
                                                 "dtype_num_unknown_nodes",
                                                 "layout",
                                                 "dtype",
                                                 "dltype",
                                                 "shape",
                                                 "device",
                                                 "shape_inputs",
                                                 "dtype_inputs",
                                                 "layout_inputs",
                                                 "opt_level",
                                                 "target",
                                                 "target_host",
                                                 "module"};
  std::vector<std::string> out;
  for (const auto &k : kRank)
    if (attrs.count(k))
      out.push_back(k);
  std::set<std::string> ranked(kRank.begin(), kRank.end());
  for (const auto &[k, v] : attrs)
    if (!ranked.count(k))
      out.push_back(k);
  return out;
}

void validateGraphAttr(const Graph &g, const std::string &key) {
  const GraphAttr *a = g.attr(key);
  if (!a)
    return;
  static const std::set<std::string> kPerEntry = {"shape",      "dtype",  "dltype",
                                                  "storage_id", "layout", "storage_inplace_index"};
  static const std::set<std::string> kPerNode = {"group_root", "group_master", "pattern", "device"};
  bool perEntry = kPerEntry.count(key) != 0, perNode = kPerNode.count(key) != 0;
  if (!perEntry && !perNode)
    return;
  const IndexedGraph &idx = g.index();
  size_t want = perEntry ? idx.numEntries() : idx.numNodes();
  size_t have = a->type == GraphAttr::Type::ListShape ? a->shapes.size()
                : a->type == GraphAttr::Type::ListInt ? a->ints.size()
                : (a->type == GraphAttr::Type::ListStr || a->type == GraphAttr::Type::ListLayout)
                    ? a->strs.size()
                    : static_cast<size_t>(-1);
  if (have == static_cast<size_t>(-1))
    fail("graph attribute '", key, "' must be a list, not ", a->typeName());
  if (have != want)
    fail("graph attribute '", key, "' has ", have, " value", have == 1 ? "" : "s",
         " but the graph has ", want,
         perEntry ? (want == 1 ? " entry" : " entries") : (want == 1 ? " node" : " nodes"));
  if (key == "group_root" || key == "group_master")
    for (int64_t v : a->ints)
      if (v < -1 || v >= static_cast<int64_t>(idx.numNodes()))
        fail("graph attribute '", key, "' refers to node ", v, ", which does not exist");
}

Graph withoutOpaqueAttrs(Graph g, std::vector<std::string> &dropped) {
  for (auto it = g.attrs.begin(); it != g.attrs.end();)
    if (it->second.type == GraphAttr::Type::Opaque) {
      dropped.push_back(it->first);
      it = g.attrs.erase(it);
    } else {
      ++it;
    }
  return g;
}

std::vector<AttrChange> diffAttrs(const GraphAttrs &before, const GraphAttrs &after) {
  std::vector<AttrChange> c;
  for (const auto &k : orderedAttrKeys(after)) {
    auto it = before.find(k);
    if (it == before.end())
      c.push_back({'+', k});
    else if (!(it->second == after.at(k)))
      c.push_back({'~', k});
  }
  for (const auto &k : orderedAttrKeys(before))
    if (!after.count(k))
      c.push_back({'-', k});
  return c;
}

bool Graph::sameOutputs(const Graph &other) const {
  if (outputs_.size() != other.outputs_.size())
    return false;
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i].node != other.outputs_[i].node || outputs_[i].index != other.outputs_[i].index)
      return false;
  return true;
}

const GraphAttr *Graph::attr(const std::string &k) const {
  auto it = attrs.find(k);
  return it == attrs.end() ? nullptr : &it->second;
}

const IndexedGraph &Graph::index() const {
  if (!index_)
    index_ = std::make_shared<IndexedGraph>(outputs_);
  return *index_;
}

IndexedGraph::IndexedGraph(const std::vector<NodeEntry> &outputs) {
  // Iterative post-order DFS (graphs can be deep): a node gets its id once all its inputs and
  // control deps have one.
  struct Frame {
    const NodePtr *node;
    size_t next;
  };
  auto visit = [&](const NodePtr &root) {
    if (idOf.count(root.get()))
      return;
    std::vector<Frame> stack{{&root, 0}};
    std::set<const Node *> onStack{root.get()};
    while (!stack.empty()) {
      Frame &f = stack.back();
      const Node &n = **f.node;
      size_t total = n.inputs.size() + n.controlDeps.size();
      if (f.next < total) {
        const NodePtr &child = f.next < n.inputs.size() ? n.inputs[f.next].node
                                                        : n.controlDeps[f.next - n.inputs.size()];
        ++f.next;
        if (!idOf.count(child.get())) {
          if (onStack.count(child.get()))
            fail("graph has a cycle through node ", child->name);
          onStack.insert(child.get());
          stack.push_back({&child, 0});
        }
        continue;
      }
      uint32_t id = static_cast<uint32_t>(nodes.size());
      idOf[&n] = id;
      INode in;
      in.node = *f.node;
      for (const auto &e : n.inputs)
        in.inputs.push_back({idOf.at(e.node.get()), e.index, e.version});
      for (const auto &c : n.controlDeps)
        in.controlDeps.push_back(idOf.at(c.get()));
      nodes.push_back(std::move(in));
      onStack.erase(&n);
      stack.pop_back();
    }
  };
  for (const auto &e : outputs)
    visit(e.node);
  rowPtr.push_back(0);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].node->isVariable())
      argNodes.push_back(i);
    rowPtr.push_back(rowPtr.back() + nodes[i].node->numOutputs());
  }
  for (const auto &e : outputs)
    heads.push_back({idOf.at(e.node.get()), e.index, e.version});
}

int IndexedGraph::findByName(const std::string &name) const {
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].node->name == name)
      return static_cast<int>(i);
  return -1;
}

} // namespace loupe
