// Graph: the NNVM graph IR — immutable shared nodes, entries, symbols, graphs with typed
// attributes.
#pragma once

#include "core/Attrs.h"
#include "core/Op.h"
#include "core/Shape.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loupe {

struct Node;
/// Nodes are immutable once made and shared between graphs and history snapshots, so a pass
/// that leaves a node alone keeps the very same object (and "did it change" is a pointer test).
using NodePtr = std::shared_ptr<const Node>;

/// One output of a node: (node, output index, version). The version counts writes to a
/// mutated variable (NNVM's FMutateInputs); it is 0 everywhere else.
struct NodeEntry {
  NodePtr node;
  uint32_t index = 0;
  uint32_t version = 0;
};

/// A graph node: an op application, or a variable when `op` is null.
struct Node {
  const OpDef *op = nullptr;
  std::string name;
  AttrDict attrs; ///< as written, in order
  Attrs parsed;   ///< typed view of attrs (empty for variables)
  std::vector<NodeEntry> inputs;
  std::vector<NodePtr> controlDeps;

  bool isVariable() const { return op == nullptr; }
  /// Number of outputs (1 for variables).
  uint32_t numOutputs() const;
  /// Number of outputs a symbol made from this node exposes (batch_norm: 1 of 3).
  uint32_t numVisibleOutputs() const;
};

/// Every output of a node, as entries (index 0, 1, …; version 0).
std::vector<NodeEntry> outputsOf(const NodePtr &node);

/// Makes a variable node.
NodePtr makeVariable(const std::string &name, AttrDict attrs = {});

/// Makes an op node, parsing its attributes (see OpDef::parse for `strict`) and checking the
/// number of inputs. Throws Error naming the node on any problem.
NodePtr makeOpNode(const OpDef &op, const std::string &name, AttrDict attrs,
                   std::vector<NodeEntry> inputs, std::vector<NodePtr> controlDeps = {},
                   bool strict = true);

/// A symbol: a list of output entries (NNVM's Symbol); the graph language's values.
struct Symbol {
  std::vector<NodeEntry> outputs;
};

/// A typed graph attribute value, with NNVM's JSON type names.
struct GraphAttr {
  enum class Type { ListInt, ListShape, ListStr, Str, SizeT, Int, ListLayout, DictStrInt, Opaque };
  Type type = Type::Str;
  std::vector<int64_t> ints;
  std::vector<Shape> shapes;
  std::vector<std::string> strs; ///< list_str and list_layout
  std::string str;               ///< str; for Opaque, a description
  int64_t num = 0;               ///< size_t and int
  std::map<std::string, int64_t> dict;
  std::shared_ptr<const void> opaque; ///< values that cannot be saved (module, …)

  static GraphAttr listInt(std::vector<int64_t> v);
  static GraphAttr listShape(std::vector<Shape> v);
  static GraphAttr listStr(std::vector<std::string> v);
  static GraphAttr listLayout(std::vector<std::string> v);
  static GraphAttr string(std::string v);
  static GraphAttr sizeT(int64_t v);
  static GraphAttr integer(int64_t v);
  /// NNVM's JSON type name ("list_int", "list_shape", …).
  const char *typeName() const;
  /// The value as Python would print graph.json_attr(key): "[[1, 3], [3]]", "[0, 0]", "'llvm'".
  std::string pyRepr() const;
  bool operator==(const GraphAttr &o) const;
};

/// Graph attributes by key.
using GraphAttrs = std::map<std::string, GraphAttr>;

/// One attribute difference between two graphs: '+' added, '~' changed, '-' removed.
struct AttrChange {
  char kind;
  std::string key;
};

/// Compares two attribute maps key by key (values compared exactly): the added and changed keys
/// in the after-graph's print order, then the removed ones in the before-graph's.
std::vector<AttrChange> diffAttrs(const GraphAttrs &before, const GraphAttrs &after);

/// Graph attribute keys in Loupe's fixed print order (graph_attr_keys and SaveJSON). NNVM
/// printed hash-map order; Loupe instead ranks known keys in one documented list (chosen so
/// the orders the seeds show come out the same) and puts other keys after it, sorted.
std::vector<std::string> orderedAttrKeys(const GraphAttrs &attrs);

struct IndexedGraph;
class Graph;

/// Checks that a graph attribute with a known meaning fits the graph: per-entry lists (shape,
/// dtype, dltype, storage_id, layout, …) have one value per entry, per-node lists (group_root,
/// group_master, pattern, device) one per node, and node references are valid ids. Throws Error
/// ("graph attribute 'shape' has 1 value but the graph has 3 entries") otherwise; unknown keys
/// pass.
void validateGraphAttr(const Graph &g, const std::string &key);

/// A graph: outputs plus graph attributes. Copies are cheap (nodes are shared).
class Graph {
public:
  Graph() = default;
  explicit Graph(std::vector<NodeEntry> outputs, GraphAttrs attrs = {})
      : attrs(std::move(attrs)), outputs_(std::move(outputs)) {}

  const std::vector<NodeEntry> &outputs() const { return outputs_; }
  /// The indexed view (node ids in post-order DFS), built once and cached.
  const IndexedGraph &index() const;

  GraphAttrs attrs;

  /// The attribute or null.
  const GraphAttr *attr(const std::string &k) const;

  /// True when both graphs have the same output entries. Nodes are immutable, so the same head
  /// nodes mean the same graph structure.
  bool sameOutputs(const Graph &other) const;

private:
  std::vector<NodeEntry> outputs_;
  mutable std::shared_ptr<const IndexedGraph> index_;
};

/// The graph without its opaque attributes (compiled objects, which have no JSON form), as
/// NNVM's build moved `module` out before graph.json(); `dropped` receives their keys.
Graph withoutOpaqueAttrs(Graph g, std::vector<std::string> &dropped);

/// NNVM's IndexedGraph: dense node ids (post-order DFS from the outputs, inputs left to right,
/// then control deps), entry ids via node_row_ptr, argument nodes, heads.
struct IndexedGraph {
  struct Entry {
    uint32_t nodeId;
    uint32_t index;
    uint32_t version;
  };
  struct INode {
    NodePtr node;
    std::vector<Entry> inputs;
    std::vector<uint32_t> controlDeps;
  };
  std::vector<INode> nodes;
  std::vector<uint32_t> argNodes; ///< variable ids in id order
  std::vector<uint32_t> rowPtr;   ///< node_row_ptr, size nodes+1
  std::vector<Entry> heads;
  std::map<const Node *, uint32_t> idOf;

  explicit IndexedGraph(const std::vector<NodeEntry> &outputs);
  uint32_t entryId(uint32_t nid, uint32_t index) const { return rowPtr[nid] + index; }
  uint32_t entryId(const Entry &e) const { return entryId(e.nodeId, e.index); }
  uint32_t numEntries() const { return rowPtr.back(); }
  uint32_t numNodes() const { return static_cast<uint32_t>(nodes.size()); }
  /// Node id by name (first match in id order), or -1.
  int findByName(const std::string &name) const;
};

} // namespace loupe
