// PatternUtil: small graph-pattern helpers shared by the rewriting passes (SimplifyInference,
// FoldScaleAxis, FoldConstant, FoldShapeOf), after NNVM's pattern_util.h.
#pragma once

#include "core/Buffers.h"
#include "core/Graph.h"
#include "core/Tensor.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loupe {

/// Finds the axis of `oshape` that a per-channel tensor of shape `biasShape` runs along, that is
/// biasShape = [1, …, 1, oshape[axis], 1, …, 1] aligned to the right of oshape. Returns the axis
/// in oshape and in biasShape, or {-1, -1}. A shape of all ones matches at
/// {oshape.size() - biasShape.size(), 0}, as NNVM had it.
std::pair<int, int> matchBroadcast1DAxis(const Shape &oshape, const Shape &biasShape);

/// Reshapes a per-channel tensor so it broadcasts along `axis` of an `outDim`-dimensional
/// tensor: squeezed first (node `<name>_sqz`) if it is not 1-D, then expand_dims(axis=1,
/// num_newaxis=outDim-axis-1) named `<name>_expand` when that is positive.
NodeEntry expandBiasToMatchAxis(NodeEntry bias, int outDim, int biasDim, int axis);

/// Per node: how many input slots read it plus how many graph outputs are it (NNVM's
/// GetNodeRefCounts).
std::vector<uint32_t> nodeRefCounts(const IndexedGraph &idx);

/// A `const` node named `name` holding `t`: `value` when every element is equal, else `data`,
/// with its shape and dtype (what FoldConstant and FoldShapeOf make).
NodePtr constantNode(const Tensor &t, const std::string &name);

/// The value of a node whose inputs are all constants (or that has none), by the reference
/// interpreter after InferShape and InferType — run privately, no instrument hears them.
Tensor evaluateNode(const NodePtr &node);

/// The value of node `n` when it is a constant: a variable bound in `params` (may be null) or a
/// `const` node (evaluated); nullopt for anything computed or unbound.
std::optional<Tensor> constantValue(const NodePtr &n, const StoredTensors *params);

/// A read-only view of a rewriting pass's source graph for matching patterns: each entry's op,
/// inputs, consumers and shape (when InferShape ran), and the value of constants — variables
/// bound in the pass context's params and `const` nodes.
class PatternView {
public:
  using Entry = IndexedGraph::Entry;

  /// `params` may be null (no bound values: only `const` nodes are constants).
  PatternView(const Graph &g, const StoredTensors *params);

  const IndexedGraph &idx;
  /// The node an entry is an output of.
  const Node &node(const Entry &e) const { return *idx.nodes[e.nodeId].node; }
  /// True when `e` is output 0 of a node of one of the ops `ops`.
  bool is(const Entry &e, std::initializer_list<const char *> ops) const;
  /// Input `i` of the node of `e`.
  const Entry &input(const Entry &e, size_t i) const { return idx.nodes[e.nodeId].inputs.at(i); }
  /// The entry's shape, or null when the graph has no shapes or this one is unknown.
  const Shape *shape(const Entry &e) const;
  /// The entry's dtype code (InferType's), or -1 when the graph has no dtypes or this one is
  /// unknown.
  int dtype(const Entry &e) const;
  /// The value of a constant whose elements are all equal, or nullopt.
  std::optional<double> uniform(const Entry &e) const;
  /// The value of a constant entry: a variable bound in the params or a `const` node; nullopt
  /// for anything computed.
  std::optional<Tensor> value(const Entry &e) const;
  /// True when `e` is computed from constants alone (bound variables and nodes without inputs),
  /// so PrecomputePrune folds it at build time.
  bool constant(const Entry &e) const;
  /// The one node that reads the node of `e` (output 0 of it), or nullopt when it has other
  /// readers or is a graph output.
  std::optional<Entry> onlyReader(const Entry &e) const;

private:
  const StoredTensors *params_;
  const std::vector<Shape> *shapes_ = nullptr;
  const std::vector<int64_t> *dtypes_ = nullptr;
  std::vector<uint32_t> refs_;
  std::vector<int64_t> reader_;          ///< per node: a node reading it, or -1
  mutable std::vector<int8_t> constant_; ///< per node: -1 unknown, 0 no, 1 yes
};

/// Two source entries are the same output of the same node.
inline bool sameEntry(const IndexedGraph::Entry &a, const IndexedGraph::Entry &b) {
  return a.nodeId == b.nodeId && a.index == b.index;
}

/// A value as a product: a constant coefficient times terms (entries, in the order found), as
/// `productOf` flattens a tree of multiplications and divisions by constants.
struct Product {
  double coefficient = 1;
  std::vector<IndexedGraph::Entry> terms;
};

/// Flattens `e` through broadcast_mul, elemwise_mul, __mul_scalar__, __div_scalar__ and
/// division by a constant: x * 0.5 * (1 + y) is 0.5 times the terms {x, 1 + y}.
Product productOf(const PatternView &v, const IndexedGraph::Entry &e);

/// The constant `c` when `e` is `t + c` or `c + t` (__add_scalar__, or broadcast_add or
/// elemwise_add with a uniform constant operand); `t` receives the other operand.
std::optional<double> plusConstant(const PatternView &v, const IndexedGraph::Entry &e,
                                   IndexedGraph::Entry &t);

/// True when `e` is `1 + t` or `t + 1` (plusConstant with 1).
bool onePlus(const PatternView &v, const IndexedGraph::Entry &e, IndexedGraph::Entry &t);

/// The exponent when `e` is a power of its input 0 by a constant (broadcast_pow by a uniform
/// constant, or __pow_scalar__), else nullopt.
std::optional<double> constantPower(const PatternView &v, const IndexedGraph::Entry &e);

/// True when `a` is within a relative `tol` of `b`.
bool near(double a, double b, double tol = 1e-6);

} // namespace loupe
