// Importer: one ONNX model's conversion in progress — the workbench value of each ONNX name, the
// constants import holds, and what the operator converters ask of it.
#pragma once

#include "core/Attrs.h"
#include "core/Graph.h"
#include "core/Tensor.h"
#include "frontend/onnx/OnnxImport.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace loupe::frontend {

/// Converts an ONNX model's graph node by node with the converters of frontend/onnx/'s family
/// files. Converters read their node's inputs and attributes through it and make ops with op();
/// every error names the file, the node and its operator.
class Importer {
public:
  Importer(onnx::ModelProto &m, std::string path, const DimSizes &dims);

  /// Converts the whole graph: inputs, initializers, every node, the outputs; then checks that
  /// every shape can be inferred and drops the params nothing reads.
  OnnxModel run();

  // --- what converters use ---

  /// "FILE: node NAME (OpType)", the front of every error about node `n`.
  std::string where(const onnx::NodeProto &n) const;
  /// The model's ai.onnx opset.
  int64_t opset() const { return opset_; }
  /// Makes output `k` of `n` the value `e` now (converters normally return their outputs).
  void bindOutput(const onnx::NodeProto &n, int k, const NodeEntry &e);
  /// The current value of an ONNX name.
  NodeEntry valueOf(const std::string &name) const { return values_.at(name); }
  /// The node's name for the workbench: the ONNX node name, else its first named output (an
  /// LSTM's Y may be left unnamed).
  std::string nameOf(const onnx::NodeProto &n, const std::string &suffix = "") const;
  /// Whether `n` has a (non-empty) input `k`.
  bool hasInput(const onnx::NodeProto &n, int k) const;
  /// Input `k` of `n` as a graph value; a scalar constant is read as a param of shape ().
  NodeEntry input(const onnx::NodeProto &n, int k);
  /// input() for an operand that broadcasts: a constant scalar beside a tensor (PyTorch's
  /// `x * 0.5`, a softmax scale, Clip's bounds) is read as a one-element tensor, which
  /// broadcasts with the other operand exactly as the scalar does (and is what NNVM's passes,
  /// which know no scalars, fold and fuse).
  NodeEntry broadcastInput(const onnx::NodeProto &n, int k);
  /// The name of the (1,) param holding scalar constant `scalar`'s element, made once.
  std::string oneElementOf(const std::string &scalar);
  /// The name of the param of shape () holding scalar constant `scalar`, made once.
  std::string scalarParamOf(const std::string &scalar);
  /// The value of a constant input — an initializer, a Constant's output, or a computation
  /// that fold() can evaluate now — if it is one.
  const Tensor *constant(const onnx::NodeProto &n, int k);
  /// The param a constant input is (an initializer, through any Identity; a folded
  /// computation made one), without loading its values; null when it is none (a scalar or not
  /// a constant).
  const std::pair<const std::string, StoredTensor> *paramInput(const onnx::NodeProto &n, int k);
  /// Folds the value `name` into a param when it is known before any input is: every path from
  /// it ends at a param or at a shape_of whose input's shape InferShape knows from the graph so
  /// far (the Shape → Gather → Concat → Reshape chains PyTorch exports). The chain is evaluated
  /// by the reference interpreter on a copy in which each shape_of reads a zero placeholder of
  /// that shape, so nothing upstream of it runs. Null when it cannot be folded.
  const Tensor *fold(const std::string &name);
  /// Marks value `name` as empty (a Slice of no elements, as the shape computations of
  /// exporters' expanded functions make): static shapes cannot hold it, so it is no value;
  /// Concat leaves it out, and any other reader is refused by name.
  void markEmpty(const std::string &name) { empty_.insert(name); }
  bool isEmpty(const std::string &name) const { return empty_.count(name) > 0; }
  /// A size computed from size symbols (`Shape` of a symbolic input, then Gather, Concat,
  /// Mul, … of it): a scalar or a 1-D list of expressions.
  struct SymValue {
    bool scalar = false;
    SymDims elems;
  };
  /// Evaluates node `n` over size symbols when it computes sizes from them (the Shape → Gather →
  /// Concat → Reshape chains PyTorch exports with dynamic axes): an output of constants becomes
  /// a param, as fold() makes one, and one that depends on the symbols a SymValue the
  /// converters reading it take (Reshape's target as codes). True when `n` was evaluated so
  /// (no graph node is made for it).
  bool foldSymbolic(const onnx::NodeProto &n);
  /// Input `k` of `n` when it is a size computed from symbols; null otherwise.
  const SymValue *symbolicInput(const onnx::NodeProto &n, int k) const;
  /// The shape of `e` as InferShape infers it from the graph so far, if it can.
  std::optional<Shape> inferredShape(const NodeEntry &e) const;
  /// The shape of `e` when InferShape infers a symbolic one (`(batch, seq, 768)`).
  std::optional<Shape> inferredSymbolicShape(const NodeEntry &e) const;
  /// The shape of `e`, concrete or symbolic, for conversions that read only its rank or its
  /// dimensions as expressions (Shape::dim), never a symbolic one's 0 sizes.
  std::optional<Shape> describedShape(const NodeEntry &e) const {
    std::optional<Shape> s = inferredShape(e);
    return s ? s : inferredSymbolicShape(e);
  }
  /// Whether input `k` is a scalar: a rank-0 constant or graph input.
  bool isScalar(const onnx::NodeProto &n, int k) const;
  /// The dtype of `e` as InferType infers it from the graph so far, or -1.
  int inferredDType(const NodeEntry &e) const;
  /// The dtype of input `k` when it is a param (a scalar constant too) or a graph input, else -1.
  int knownDType(const onnx::NodeProto &n, int k) const;
  /// Adds a constant the conversion computed as the param of output `k`.
  std::vector<NodeEntry> constantOutput(const onnx::NodeProto &n, Tensor t);
  /// The shape of input `k` when it is a param or a graph input (declared), or a value whose
  /// shape inference knows (a dequantized weight), else null.
  const Shape *knownShape(const onnx::NodeProto &n, int k);
  /// Fails saying input `k` of `n` (`what`) must be a constant; when it is a size computed
  /// from the size symbols, says so and how to give their sizes instead.
  [[noreturn]] void notConstant(const onnx::NodeProto &n, int k, const std::string &what) const;
  /// The integers of constant input `k` (`what` names it in errors).
  std::vector<int64_t> constInts(const onnx::NodeProto &n, int k, const char *what);
  /// Later opsets moved some attributes (axes, pads, split, shape) to inputs: the constant
  /// input `k` when the node has it, else the attribute `key`.
  std::vector<int64_t> intsInputOrAttr(const onnx::NodeProto &n, int k, const char *key);
  /// Attribute `key` of `n`, or null.
  const onnx::AttributeProto *attr(const onnx::NodeProto &n, const std::string &key) const;
  int64_t attrInt(const onnx::NodeProto &n, const std::string &key, int64_t dflt) const;
  double attrFloat(const onnx::NodeProto &n, const std::string &key, double dflt) const;
  std::string attrString(const onnx::NodeProto &n, const std::string &key,
                         const std::string &dflt) const;
  std::vector<int64_t> attrInts(const onnx::NodeProto &n, const std::string &key) const;
  /// Refuses attributes the conversion does not honour (so nothing is silently wrong).
  void only(const onnx::NodeProto &n, const std::vector<const char *> &known) const;
  /// A new node of op `opName`, named after `n` (with `suffix`); the op's own complaint about
  /// its attributes or inputs names `n`.
  NodeEntry op(const onnx::NodeProto &n, const std::string &opName, AttrDict attrs,
               std::vector<NodeEntry> ins, const std::string &suffix = "");
  /// op() of a multi-output op: all its outputs.
  std::vector<NodeEntry> opOutputs(const onnx::NodeProto &n, const std::string &opName,
                                   AttrDict attrs, std::vector<NodeEntry> ins,
                                   const std::string &suffix = "");
  /// Remembers that input `k` of `e`'s node must have rank `rank`, else `message` (checked
  /// once shapes are known).
  void requireRank(const NodeEntry &e, uint32_t k, size_t rank, std::string message);
  /// A constant the conversion of `n` makes (a mask, positions), as a param named after the
  /// node with `suffix`.
  NodeEntry constantParam(const onnx::NodeProto &n, const std::string &suffix, Tensor t);
  /// A param made from param `source` by `make` (a weight's transpose), named after the first
  /// node that asks: made once per source and suffix, so that layers sharing a weight
  /// (PyTorch's deep-copied layers, through Identity) share what is made of it too, instead of
  /// holding a copy each; `make` runs only the first time.
  NodeEntry derivedParam(const onnx::NodeProto &n, const std::string &suffix,
                         const std::string &source, const std::function<Tensor()> &make);
  /// A constant by name: a param of the graph, or (rank 0) a scalar kept apart, which
  /// conversions read as a value (constant()) or as a broadcast operand (broadcastInput()).
  void addParam(const std::string &name, Tensor t);

private:
  /// `t` as a param of the graph named `name`: a variable of its shape and dtype.
  void bindParam(const std::string &name, Tensor t);

  std::map<std::pair<std::string, std::string>, NodeEntry> derived_; // derivedParam's
  /// Param `name`'s value as doubles, loaded for the conversion of the current node (dropped
  /// after it: a network's weights are held stored, one loaded at a time).
  const Tensor &loaded(const std::string &name);
  std::map<std::string, Tensor> loaded_;
  onnx::ModelProto &model_; ///< its initializers' bytes are released as they are decoded
  std::string path_;
  const DimSizes &dims_;
  std::set<std::string> usedDims_;     // the symbolic dimensions the inputs have
  std::set<std::string> scalarInputs_; // graph inputs of rank 0 (variables of shape ())
  int64_t opset_ = 1;
  std::map<std::string, NodeEntry> values_;
  std::set<std::string> empty_;               // values of no elements (markEmpty)
  std::map<std::string, Tensor> scalars_;     ///< rank-0 constants (no graph value)
  std::map<std::string, SymValue> symValues_; ///< sizes computed from symbols (foldSymbolic)
  /// The inferred shapes knownShape gave of computed constants (dequantized weights).
  std::map<std::string, Shape> computedShapes_;
  std::map<std::string, Shape> declared_; ///< graph inputs' shapes
  OnnxModel out_;
  struct RankCheck {
    // Owned: a node whose output name a later node reuses is otherwise freed (found by fuzzing).
    NodePtr node;
    uint32_t input;
    size_t rank;
    std::string message;
  };
  std::vector<RankCheck> rankChecks_;
};

/// A size computed from symbols as text: `seq` for a scalar, `[batch, seq*12, 64]` for a list.
std::string symValueText(const Importer::SymValue &v);

} // namespace loupe::frontend
