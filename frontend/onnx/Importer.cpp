// OnnxImport: the ONNX protobuf (Debian's libonnx) read with protobuf, each operator converted
// by one function of the table below into the workbench's NNVM ops.
#include "frontend/onnx/OnnxImport.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/File.h"
#include "core/Interpreter.h"
#include "core/Memory.h"
#include "core/Op.h"
#include "passes/Pass.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

namespace loupe::frontend {

namespace {

// The newest ai.onnx opset whose operator changes the converters know (opset 21, ONNX 1.16:
// PyTorch's exporters write 17 and 18). Newer models are refused rather than misread.
constexpr int64_t kNewestOpset = 21;

// ONNX's element types that have a workbench dtype.
int dtypeOf(int32_t onnxType, const std::string &what) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return kFloat32;
  case onnx::TensorProto::DOUBLE:
    return kFloat64;
  case onnx::TensorProto::FLOAT16:
    return kFloat16;
  case onnx::TensorProto::INT8:
    return kInt8;
  case onnx::TensorProto::INT16:
    return kInt16;
  case onnx::TensorProto::INT32:
    return kInt32;
  case onnx::TensorProto::INT64:
    return kInt64;
  case onnx::TensorProto::UINT8:
    return kUint8;
  case onnx::TensorProto::UINT16:
    return kUint16;
  case onnx::TensorProto::UINT32:
    return kUint32;
  case onnx::TensorProto::UINT64:
    return kUint64;
  case onnx::TensorProto::BOOL:
    return kBoolean;
  default:
    fail(what, ": ONNX element type ",
         onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnxType)),
         " is not supported (float16/32/64, int8/16/32/64, uint8/16/32/64 and bool are)");
  }
}

Tensor toTensor(const onnx::TensorProto &t, const std::string &what) {
  int dt = dtypeOf(t.data_type(), what);
  Shape shape(t.dims().begin(), t.dims().end());
  // The data is checked against the shape before the tensor is allocated: a 200-byte file
  // declaring 2.5 G elements it does not hold made the importer allocate 20 GB (found by
  // fuzzing).
  size_t n = static_cast<size_t>(checkedNumElements(shape));
  Tensor out;
  if (t.has_raw_data()) {
    auto width = static_cast<size_t>(dtypeBytes(dt));
    const std::string &raw = t.raw_data();
    if (raw.size() / width != n || raw.size() % width != 0)
      fail(what, ": raw_data holds ", raw.size(), " bytes but shape ", shapeToList(shape),
           " needs ", n * width);
    out = Tensor(shape, dt);
    for (size_t i = 0; i < n; ++i)
      out.data[i] = loadElement(raw.data() + i * width, dt);
    return out;
  }
  auto take = [&](const auto &field, auto convert) {
    if (static_cast<size_t>(field.size()) != n)
      fail(what, ": holds ", field.size(), " values but shape ", shapeToList(shape), " needs ", n);
    out = Tensor(shape, dt);
    for (size_t i = 0; i < n; ++i)
      out.data[i] = convert(field[static_cast<int>(i)]);
  };
  auto value = [](auto v) { return static_cast<double>(v); };
  switch (dt) {
  case kFloat32:
    take(t.float_data(), value);
    break;
  case kFloat64:
    take(t.double_data(), value);
    break;
  case kInt64:
    take(t.int64_data(), value);
    break;
  case kUint32:
  case kUint64:
    take(t.uint64_data(), value);
    break;
  case kFloat16: // int32_data holds a float16's bits
    take(t.int32_data(), [](int32_t bits) {
      auto h = static_cast<uint16_t>(bits);
      return loadElement(&h, kFloat16);
    });
    break;
  default: // the smaller integers and bool are held in int32_data
    take(t.int32_data(), [dt](int32_t v) { return roundToDType(v, dt); });
  }
  return out;
}

std::string tupleText(const std::vector<int64_t> &v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string floatText(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

class Importer;
using Converter = std::function<std::vector<NodeEntry>(Importer &, const onnx::NodeProto &)>;
const std::map<std::string, Converter> &converters();

class Importer {
public:
  Importer(const onnx::ModelProto &m, std::string path, const DimSizes &dims)
      : model_(m), path_(std::move(path)), dims_(dims) {
    for (const auto &o : m.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx")
        opset_ = o.version();
  }

  OnnxModel run() {
    const onnx::GraphProto &g = model_.graph();
    for (const auto &init : g.initializer())
      addParam(init.name(), toTensor(init, path_ + ": initializer " + init.name()));
    for (const auto &in : g.input()) {
      if (values_.count(in.name()) || scalars_.count(in.name()))
        continue; // an initializer listed as an input too (older exporters did)
      const auto &tt = in.type().tensor_type();
      Shape shape;
      for (const auto &d : tt.shape().dim()) {
        if (d.has_dim_value()) {
          shape.push_back(d.dim_value());
          continue;
        }
        if (d.dim_param().empty())
          fail(path_, ": input ", in.name(), " has a dimension of unknown size");
        auto size = dims_.find(d.dim_param());
        if (size == dims_.end())
          fail(path_, ": input ", in.name(), " has a symbolic dimension '", d.dim_param(),
               "'; give its size (:load FILE ", d.dim_param(), "=N)");
        shape.push_back(size->second);
        usedDims_.insert(d.dim_param());
      }
      // A scalar input is the one element of a (1,) variable (as a rank-0 output is), read
      // only where an operand broadcasts, which it then does as the scalar would.
      if (shape.empty()) {
        shape = {1};
        scalarInputs_.insert(in.name());
        out_.scalarInputs.push_back(in.name());
      }
      int dt = dtypeOf(tt.elem_type(), path_ + ": input " + in.name());
      declared_[in.name()] = shape;
      out_.inputDTypes[in.name()] = dt;
      values_[in.name()] = {
          makeVariable(in.name(), {{"shape", tupleText(shape)}, {"dtype", std::to_string(dt)}}), 0,
          0};
      out_.inputs.push_back(in.name());
    }
    for (const auto &[name, size] : dims_) {
      if (usedDims_.count(name))
        continue;
      std::string known;
      for (const std::string &u : usedDims_)
        known += (known.empty() ? "'" : ", '") + u + "'";
      fail(path_, ": no input has a symbolic dimension '", name, "' (",
           known.empty() ? "it has none" : "its symbolic dimensions: " + known, ")");
    }
    const auto &table = converters();
    for (int i = 0; i < g.node_size(); ++i) {
      const onnx::NodeProto &n = g.node(i);
      // Nodes are named by their name or first output (found by fuzzing: a node with neither).
      if (n.output_size() == 0 || (n.name().empty() && n.output(0).empty()))
        fail(path_, ": node ", i, " (", n.op_type(), ") has no name and no named output");
      if (!n.domain().empty() && n.domain() != "ai.onnx")
        fail(where(n), ": operator domain '", n.domain(), "' is not supported");
      auto it = table.find(n.op_type());
      if (it == table.end())
        fail(where(n), ": operator ", n.op_type(), " is not supported");
      std::vector<NodeEntry> outs = it->second(*this, n);
      for (int k = 0; k < n.output_size() && k < static_cast<int>(outs.size()); ++k)
        if (!n.output(k).empty())
          values_[n.output(k)] = outs[k];
    }
    std::vector<NodeEntry> heads;
    for (const auto &o : g.output()) {
      // A reduction to a scalar is (1,) here (NNVM's rule): a declared rank-0 output is that
      // one element (checked once shapes are known).
      const auto &ot = o.type().tensor_type();
      if (ot.has_shape() && ot.shape().dim_size() == 0)
        out_.scalarOutputs.push_back(heads.size());
      auto it = values_.find(o.name());
      // A scalar constant (Size of a known shape) as an output: its one element as a (1,) param.
      if (it == values_.end() && scalars_.count(o.name()))
        it = values_.find(oneElementOf(o.name()));
      if (it == values_.end())
        fail(path_, ": graph output ", o.name(), " is never computed");
      heads.push_back(it->second);
    }
    out_.graph = Graph(heads);
    out_.opset = opset_;
    // Every shape must be inferable from the inputs' (a clear error now rather than at :build),
    // and the ranks some conversions rely on are checked.
    Graph shaped;
    try {
      shaped = applyPasses(out_.graph, {"InferShape"});
    } catch (const Error &e) {
      // A node whose conversion needs a certain rank says so rather than its op's complaint.
      for (const RankCheck &c : rankChecks_)
        if (std::string(e.what()).find("operator " + c.node->name + " (") != std::string::npos)
          fail(c.message);
      fail(path_, ": shapes cannot be inferred: ", e.what());
    }
    const IndexedGraph &idx = shaped.index();
    for (const RankCheck &c : rankChecks_) {
      // A node the outputs do not depend on is not in the graph (found by fuzzing).
      auto at = idx.idOf.find(c.node.get());
      if (at == idx.idOf.end())
        continue;
      const Shape &s =
          shaped.attr("shape")->shapes[idx.entryId(idx.nodes[at->second].inputs[c.input])];
      if (s.size() != c.rank)
        fail(c.message);
    }
    for (size_t k : out_.scalarOutputs) {
      const Shape &s = shaped.attr("shape")->shapes[idx.entryId(idx.heads[k])];
      if (numElements(s) != 1)
        fail(path_, ": output ", g.output(static_cast<int>(k)).name(),
             " is declared a scalar (rank 0) but computes shape ", shapeToTuple(s));
    }
    // Params the graph does not read are left out.
    std::set<std::string> used;
    for (uint32_t nid : out_.graph.index().argNodes)
      used.insert(out_.graph.index().nodes[nid].node->name);
    for (auto it = out_.params.begin(); it != out_.params.end();)
      it = used.count(it->first) ? std::next(it) : out_.params.erase(it);
    return out_;
  }

  // --- what converters use ---
  std::string where(const onnx::NodeProto &n) const {
    return path_ + ": node " + (n.name().empty() ? n.output(0) : n.name()) + " (" + n.op_type() +
           ")";
  }
  int64_t opset() const { return opset_; }
  /// Makes output `k` of `n` the value `e` now (converters normally return their outputs).
  void bindOutput(const onnx::NodeProto &n, int k, const NodeEntry &e) {
    if (n.output_size() > k && !n.output(k).empty())
      values_[n.output(k)] = e;
  }
  /// The current value of an ONNX name.
  NodeEntry valueOf(const std::string &name) const { return values_.at(name); }
  /// The node's name for the workbench: the ONNX node name, else its first output.
  std::string nameOf(const onnx::NodeProto &n, const std::string &suffix = "") const {
    return (n.name().empty() ? n.output(0) : n.name()) + suffix;
  }
  bool hasInput(const onnx::NodeProto &n, int k) const {
    return n.input_size() > k && !n.input(k).empty();
  }
  NodeEntry input(const onnx::NodeProto &n, int k) {
    if (!hasInput(n, k))
      fail(where(n), ": input ", k, " is missing");
    if (scalarInputs_.count(n.input(k)))
      fail(where(n), ": input '", n.input(k),
           "' is a scalar (rank 0) graph input, which only an operand that broadcasts with a "
           "tensor (Add, Mul, Where, Gemm's C, …) can read");
    auto it = values_.find(n.input(k));
    if (it == values_.end() && scalars_.count(n.input(k)))
      fail(where(n), ": input '", n.input(k),
           "' is a scalar (rank 0); the workbench's tensors have rank 1 or more");
    if (it == values_.end())
      fail(where(n), ": input '", n.input(k), "' is not defined before it");
    return it->second;
  }
  /// input() for an operand that broadcasts: a constant scalar (PyTorch's `x * 0.5`, a
  /// softmax scale, Clip's bounds) is read as a one-element tensor, which broadcasts with the
  /// other operand (of rank 1 or more) exactly as the scalar does.
  NodeEntry broadcastInput(const onnx::NodeProto &n, int k) {
    auto s = hasInput(n, k) ? scalars_.find(n.input(k)) : scalars_.end();
    // Every operand a scalar would make a scalar result, which a one-element tensor is not.
    bool tensorOperand = false;
    for (int i = 0; i < n.input_size(); ++i)
      tensorOperand |=
          hasInput(n, i) && !scalars_.count(n.input(i)) && !scalarInputs_.count(n.input(i));
    // A scalar graph input is already its one-element tensor.
    if (tensorOperand && hasInput(n, k) && scalarInputs_.count(n.input(k)))
      return values_.at(n.input(k));
    if (s == scalars_.end() || !tensorOperand)
      return input(n, k);
    return values_.at(oneElementOf(s->first));
  }
  /// The name of the (1,) param holding scalar constant `scalar`'s element, made once.
  std::string oneElementOf(const std::string &scalar) {
    std::string name = scalar + "_as_1d";
    if (!values_.count(name)) {
      Tensor t = scalars_.at(scalar);
      t.shape = {1};
      addParam(name, std::move(t));
    }
    return name;
  }
  /// The value of a constant input — an initializer, a Constant's output, or a computation
  /// that fold() can evaluate now — if it is one.
  const Tensor *constant(const onnx::NodeProto &n, int k) {
    if (!hasInput(n, k))
      return nullptr;
    auto it = out_.params.find(n.input(k));
    if (it != out_.params.end())
      return &it->second;
    auto s = scalars_.find(n.input(k));
    return s != scalars_.end() ? &s->second : fold(n.input(k));
  }
  /// Folds the value `name` into a param when it is known before any input is: every path from
  /// it ends at a param or at a shape_of whose input's shape InferShape knows from the graph so
  /// far (the Shape → Gather → Concat → Reshape chains PyTorch exports). The chain is evaluated
  /// by the reference interpreter on a copy in which each shape_of reads a zero placeholder of
  /// that shape, so nothing upstream of it runs. Null when it cannot be folded.
  const Tensor *fold(const std::string &name) {
    auto v = values_.find(name);
    if (v == values_.end() || v->second.node->isVariable())
      return nullptr;
    try {
      std::map<std::string, Tensor> inputs;
      std::map<const Node *, NodePtr> copies;
      size_t budget = 1000; // ops; a shape computation is a few dozen
      std::function<NodePtr(const NodePtr &)> copy = [&](const NodePtr &nd) -> NodePtr {
        if (auto it = copies.find(nd.get()); it != copies.end())
          return it->second;
        if (nd->isVariable()) {
          auto p = out_.params.find(nd->name);
          if (p == out_.params.end())
            throw Error("reads a graph input");
          inputs[nd->name] = p->second;
          return copies[nd.get()] = nd;
        }
        if (--budget == 0)
          throw Error("too large");
        std::vector<NodeEntry> ins;
        if (nd->op->name == "shape_of") {
          std::optional<Shape> known = inferredShape(nd->inputs[0]);
          if (!known || checkedNumElements(*known) > (1 << 22))
            throw Error("unknown shape");
          const Shape &s = *known;
          std::string placeholder = nd->name + "/shape_of_input";
          inputs[placeholder] = Tensor(s, kFloat32);
          ins.push_back(
              {makeVariable(placeholder, {{"shape", tupleText(s)}, {"dtype", "0"}}), 0, 0});
        } else {
          for (const NodeEntry &in : nd->inputs)
            ins.push_back({copy(in.node), in.index, 0});
        }
        return copies[nd.get()] = makeOpNode(*nd->op, nd->name, nd->attrs, ins);
      };
      NodeEntry head{copy(v->second.node), v->second.index, 0};
      Graph g({head});
      Graph typed = applyPasses(g, {"InferShape", "InferType"});
      Tensor t = interpret(typed, inputs).at(0);
      addParam(name, std::move(t));
      return &out_.params.at(name);
    } catch (const Error &) {
      return nullptr; // the converter asking says what it needed
    }
  }
  /// The shape of `e` as InferShape infers it from the graph so far, if it can.
  std::optional<Shape> inferredShape(const NodeEntry &e) const {
    try {
      Graph shaped = applyPasses(Graph({e}), {"InferShape"});
      const IndexedGraph &idx = shaped.index();
      const Shape &s = shaped.attr("shape")->shapes[idx.entryId(idx.heads[0])];
      if (shapeKnown(s))
        return s;
    } catch (const Error &) {
    }
    return std::nullopt;
  }
  /// Whether input `k` is a scalar: a rank-0 constant or graph input.
  bool isScalar(const onnx::NodeProto &n, int k) const {
    return hasInput(n, k) && (scalars_.count(n.input(k)) || scalarInputs_.count(n.input(k)));
  }
  /// The dtype of `e` as InferType infers it from the graph so far, or -1.
  int inferredDType(const NodeEntry &e) const {
    try {
      Graph typed = applyPasses(Graph({e}), {"InferType"});
      const IndexedGraph &idx = typed.index();
      return static_cast<int>(typed.attr("dtype")->ints[idx.entryId(idx.heads[0])]);
    } catch (const Error &) {
      return -1;
    }
  }
  /// The dtype of input `k` when it is a param (a scalar constant too) or a graph input, else -1.
  int knownDType(const onnx::NodeProto &n, int k) const {
    if (!hasInput(n, k))
      return -1;
    if (auto p = out_.params.find(n.input(k)); p != out_.params.end())
      return p->second.dtype;
    if (auto c = scalars_.find(n.input(k)); c != scalars_.end())
      return c->second.dtype;
    auto d = out_.inputDTypes.find(n.input(k));
    return d == out_.inputDTypes.end() ? -1 : d->second;
  }
  /// Adds a constant the conversion computed as the param of output `k`.
  std::vector<NodeEntry> constantOutput(const onnx::NodeProto &n, Tensor t) {
    bool scalar = t.shape.empty();
    addParam(n.output(0), std::move(t));
    if (scalar)
      return {}; // read by constant() and broadcastInput(), not a graph value
    return {values_.at(n.output(0))};
  }
  /// The shape of input `k` when it is a param or a graph input (declared), else null.
  const Shape *knownShape(const onnx::NodeProto &n, int k) {
    if (const Tensor *t = constant(n, k))
      return t->shape.empty() ? nullptr : &t->shape; // a scalar is no tensor's shape here
    auto it = hasInput(n, k) ? declared_.find(n.input(k)) : declared_.end();
    return it == declared_.end() ? nullptr : &it->second;
  }
  std::vector<int64_t> constInts(const onnx::NodeProto &n, int k, const char *what) {
    const Tensor *t = constant(n, k);
    if (!t)
      fail(where(n), ": ", what, " must be a constant (an initializer or Constant)");
    // A float tensor in their place (NaN in it was converted to int64: undefined; found by
    // fuzzing) is refused: ONNX declares these inputs int64.
    if (dtypeIsFloat(t->dtype))
      fail(where(n), ": ", what, " must be an integer tensor, got ", dtypeName(t->dtype));
    // Saturating: tensors hold doubles, and INT64_MAX (PyTorch's "to the end" in Slice) is 2^63
    // as a double, one past int64's range (converting it was undefined; found by fuzzing).
    std::vector<int64_t> out;
    for (double v : t->data)
      out.push_back(v >= 0x1p63   ? std::numeric_limits<int64_t>::max()
                    : v < -0x1p63 ? std::numeric_limits<int64_t>::min()
                                  : static_cast<int64_t>(v));
    return out;
  }
  // Later opsets moved some attributes (axes, pads, split, shape) to inputs: the constant
  // input `k` when the node has it, else the attribute `key`.
  std::vector<int64_t> intsInputOrAttr(const onnx::NodeProto &n, int k, const char *key) {
    return hasInput(n, k) ? constInts(n, k, key) : attrInts(n, key);
  }
  const onnx::AttributeProto *attr(const onnx::NodeProto &n, const std::string &key) const {
    for (const auto &a : n.attribute())
      if (a.name() == key)
        return &a;
    return nullptr;
  }
  int64_t attrInt(const onnx::NodeProto &n, const std::string &key, int64_t dflt) const {
    const auto *a = attr(n, key);
    return a ? a->i() : dflt;
  }
  double attrFloat(const onnx::NodeProto &n, const std::string &key, double dflt) const {
    const auto *a = attr(n, key);
    return a ? a->f() : dflt;
  }
  std::string attrString(const onnx::NodeProto &n, const std::string &key,
                         const std::string &dflt) const {
    const auto *a = attr(n, key);
    return a ? a->s() : dflt;
  }
  std::vector<int64_t> attrInts(const onnx::NodeProto &n, const std::string &key) const {
    const auto *a = attr(n, key);
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
  }
  /// Refuses attributes the conversion does not honour (so nothing is silently wrong).
  void only(const onnx::NodeProto &n, const std::vector<const char *> &known) const {
    for (const auto &a : n.attribute()) {
      bool ok = false;
      for (const char *k : known)
        ok |= a.name() == k;
      if (!ok)
        fail(where(n), ": attribute '", a.name(), "' is not supported");
    }
  }
  NodeEntry op(const onnx::NodeProto &n, const std::string &opName, AttrDict attrs,
               std::vector<NodeEntry> ins, const std::string &suffix = "") {
    const OpDef *def = OpRegistry::get().find(opName);
    try {
      return {makeOpNode(*def, nameOf(n, suffix), std::move(attrs), std::move(ins)), 0, 0};
    } catch (const Error &e) {
      fail(where(n), ": ", e.what());
    }
  }
  std::vector<NodeEntry> opOutputs(const onnx::NodeProto &n, const std::string &opName,
                                   AttrDict attrs, std::vector<NodeEntry> ins) {
    NodeEntry e = op(n, opName, std::move(attrs), std::move(ins));
    return outputsOf(e.node);
  }
  /// Remembers that input `k` of `e`'s node must have rank `rank`, else `message` (checked
  /// once shapes are known).
  void requireRank(const NodeEntry &e, uint32_t k, size_t rank, std::string message) {
    rankChecks_.push_back({e.node, k, rank, std::move(message)});
  }
  /// A constant the conversion of `n` makes (a mask, positions), as a param named after the
  /// node with `suffix`.
  NodeEntry constantParam(const onnx::NodeProto &n, const std::string &suffix, Tensor t) {
    std::string name = nameOf(n, suffix);
    addParam(name, std::move(t));
    return values_.at(name);
  }
  /// A constant by name: a param of the graph, or (rank 0) a scalar kept apart, which
  /// conversions read as a value (constant()) or as a broadcast operand (broadcastInput()).
  void addParam(const std::string &name, Tensor t) {
    if (t.shape.empty()) {
      scalars_[name] = std::move(t);
      return;
    }
    values_[name] = {
        makeVariable(name, {{"shape", tupleText(t.shape)}, {"dtype", std::to_string(t.dtype)}}), 0,
        0};
    out_.params[name] = std::move(t);
  }

private:
  const onnx::ModelProto &model_;
  std::string path_;
  const DimSizes &dims_;
  std::set<std::string> usedDims_;     // the symbolic dimensions the inputs have
  std::set<std::string> scalarInputs_; // graph inputs of rank 0, held as (1,)
  int64_t opset_ = 1;
  std::map<std::string, NodeEntry> values_;
  std::map<std::string, Tensor> scalars_; ///< rank-0 constants (no graph value)
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

Converter unary(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {});
    return std::vector<NodeEntry>{im.op(n, op, {}, {im.input(n, 0)})};
  };
}

// Before opset 7 the arithmetic ops broadcast only when `broadcast` is 1, the second operand's
// axes matching the first's from `axis` on (by default its trailing ones, as NumPy's suffix
// rule): it gets unit axes after its own up to the first's rank. Without the flag the shapes
// must be equal, which the broadcasting op checks.
Shape shapeNow(Importer &im, const onnx::NodeProto &n, int k, size_t minRank);

NodeEntry legacyBroadcastOperand(Importer &im, const onnx::NodeProto &n) {
  NodeEntry b = im.broadcastInput(n, 1);
  const Tensor *scalar = im.constant(n, 1);
  if (im.opset() >= 7 || !im.attrInt(n, "broadcast", 0) || !im.attr(n, "axis") ||
      (scalar && scalar->shape.empty()))
    return b;
  Shape a = shapeNow(im, n, 0, 1), bs = shapeNow(im, n, 1, 1);
  auto rank = static_cast<int64_t>(a.size());
  int64_t axis = im.attrInt(n, "axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  int64_t trailing = rank - axis - static_cast<int64_t>(bs.size());
  bool fits = axis >= 0 && trailing >= 0;
  for (size_t i = 0; fits && i < bs.size(); ++i)
    fits = bs[i] == 1 || bs[i] == a[static_cast<size_t>(axis) + i];
  if (!fits)
    fail(im.where(n), ": operand B ", shapeToTuple(bs), " does not fit into A ", shapeToTuple(a),
         " from axis ", im.attrInt(n, "axis", 0));
  if (trailing == 0)
    return b;
  return im.op(n, "expand_dims",
               {{"axis", std::to_string(bs.size())}, {"num_newaxis", std::to_string(trailing)}},
               {b}, "_aligned");
}

Converter binary(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    if (im.opset() < 7)
      im.only(n, {"broadcast", "axis"});
    else
      im.only(n, {});
    return std::vector<NodeEntry>{
        im.op(n, op, {}, {im.broadcastInput(n, 0), legacyBroadcastOperand(im, n)})};
  };
}

// Gather and GatherElements: negative indices count from the end (mode wrap).
Converter indexing(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axis"});
    int64_t axis = im.attrInt(n, "axis", 0);
    AttrDict a = {{"axis", std::to_string(axis)}, {"mode", "wrap"}};
    const Tensor *index = im.constant(n, 1);
    if (!index || !index->shape.empty())
      return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0), im.input(n, 1)})};
    // A scalar index drops the axis. PyTorch's exports read a dimension so (`x.shape[0]`:
    // Gather of a Shape at a scalar): from a known 1-D value the result is a scalar constant.
    const Tensor *data = im.constant(n, 0);
    if (data && data->shape.size() == 1) {
      int64_t len = data->shape[0], i = static_cast<int64_t>(index->data[0]);
      if (i < -len || i >= len)
        fail(im.where(n), ": index ", i, " is out of range for length ", len);
      Tensor value(Shape{}, data->dtype);
      value.data[0] = data->data[i < 0 ? i + len : i];
      im.addParam(n.output(0), std::move(value));
      return std::vector<NodeEntry>{};
    }
    NodeEntry taken = im.op(n, op, a, {im.input(n, 0), im.broadcastInput(n, 1)}, "_taken");
    return std::vector<NodeEntry>{
        im.op(n, "squeeze", {{"axis", "(" + std::to_string(axis) + ",)"}}, {taken})};
  };
}

// NegativeLogLikelihoodLoss of `logp` (N, C, d1…) at the classes in `target` (N, d1…), with an
// optional per-class weight and ignore_index, reduced by `reduction` (none, sum, mean: divided
// by the weights applied). As ops: the picked log-probabilities by gather_elements along the
// class axis (an ignored target reads class 0 and gets weight 0), their weights by take.
NodeEntry nllLoss(Importer &im, const onnx::NodeProto &n, NodeEntry logp, NodeEntry target,
                  std::optional<NodeEntry> weight) {
  std::string reduction = im.attrString(n, "reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    fail(im.where(n), ": reduction '", reduction, "' is not none, sum or mean");
  std::optional<NodeEntry> kept; // target != ignore_index
  if (const auto *ii = im.attr(n, "ignore_index")) {
    Tensor t({1}, kInt64);
    t.data[0] = static_cast<double>(ii->i());
    kept = im.op(n, "broadcast_not_equal", {},
                 {target, im.constantParam(n, "_ignore_index", std::move(t))}, "_kept");
    target = im.op(n, "where", {}, {*kept, target, im.op(n, "zeros_like", {}, {target}, "_zero")},
                   "_target");
  }
  NodeEntry at = im.op(n, "expand_dims", {{"axis", "1"}}, {target}, "_class");
  NodeEntry picked =
      im.op(n, "gather_elements", {{"axis", "1"}, {"mode", "clip"}}, {logp, at}, "_gathered");
  picked = im.op(n, "squeeze", {{"axis", "(1,)"}}, {picked}, "_picked");
  std::optional<NodeEntry> w;
  if (weight)
    w = im.op(n, "take", {{"axis", "0"}, {"mode", "clip"}}, {*weight, target}, "_weight");
  if (kept) {
    NodeEntry one = w ? *w : im.op(n, "ones_like", {}, {picked}, "_one");
    w = im.op(n, "where", {}, {*kept, one, im.op(n, "zeros_like", {}, {one}, "_none")}, "_applied");
  }
  NodeEntry loss = w ? im.op(n, "elemwise_mul", {}, {picked, *w}, "_weighted") : picked;
  if (reduction == "none")
    return im.op(n, "negative", {}, {loss});
  loss = im.op(n, "negative", {}, {loss}, "_loss");
  if (reduction == "sum")
    return im.op(n, "sum", {}, {loss});
  if (!w)
    return im.op(n, "mean", {}, {loss});
  return im.op(n, "elemwise_div", {},
               {im.op(n, "sum", {}, {loss}, "_sum"), im.op(n, "sum", {}, {*w}, "_weights")});
}

// NegativeLogLikelihoodLoss of log-probabilities, and SoftmaxCrossEntropyLoss (`logits`) of
// scores: log_softmax over the class axis first, the log-probabilities its second output.
Converter nllLossOf(bool logits) {
  return [logits](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"reduction", "ignore_index"});
    std::optional<NodeEntry> weight;
    if (im.hasInput(n, 2))
      weight = im.input(n, 2);
    if (!logits)
      return std::vector<NodeEntry>{nllLoss(im, n, im.input(n, 0), im.input(n, 1), weight)};
    NodeEntry logp = im.op(n, "log_softmax", {{"axis", "1"}}, {im.input(n, 0)}, "_log_prob");
    return std::vector<NodeEntry>{nllLoss(im, n, logp, im.input(n, 1), weight), logp};
  };
}

// Constants an operator makes at import from a shape (ConstantOfShape, EyeLike) are held by the
// importer: more than 2^24 elements (128 MB as the reference's doubles) from a few bytes of
// model is refused (found by fuzzing: a 6 KB file made an 8 GB ConstantOfShape).
void requireConstantSize(Importer &im, const onnx::NodeProto &n, const Shape &shape) {
  if (checkedNumElements(shape) > (int64_t{1} << 24))
    fail(im.where(n), ": shape ", shapeToList(shape),
         " makes a constant of more than 2^24 elements, which import does not make");
}

// The one value of a constant input that must be a scalar or a one-element tensor (CumSum's
// axis, OneHot's depth, Range's bounds).
double scalarInput(Importer &im, const onnx::NodeProto &n, int k, const char *what) {
  const Tensor *t = im.constant(n, k);
  if (!t)
    fail(im.where(n), ": ", what, " must be a constant (an initializer or Constant)");
  if (t->data.size() != 1)
    fail(im.where(n), ": ", what, " must hold one value, got shape ", shapeToList(t->shape));
  if (!std::isfinite(t->data[0]))
    fail(im.where(n), ": ", what, " must be finite");
  return t->data[0];
}

// A value in int64's range as an integer attribute (a float NaN or 1e30 is refused).
int64_t integral(Importer &im, const onnx::NodeProto &n, double v, const char *what, double lo,
                 double hi) {
  if (!(v >= lo && v <= hi) || v != std::floor(v))
    fail(im.where(n), ": ", what, " ", floatText(v), " must be an integer in ", floatText(lo),
         " … ", floatText(hi));
  return static_cast<int64_t>(v);
}

std::vector<NodeEntry> cumSum(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"exclusive", "reverse"});
  int64_t axis = integral(im, n, scalarInput(im, n, 1, "axis"), "axis", -64, 64);
  return {im.op(n, "cumsum",
                {{"axis", std::to_string(axis)},
                 {"exclusive", im.attrInt(n, "exclusive", 0) ? "True" : "False"},
                 {"reverse", im.attrInt(n, "reverse", 0) ? "True" : "False"}},
                {im.input(n, 0)})};
}

std::vector<NodeEntry> oneHot(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis"});
  int64_t depth = integral(im, n, scalarInput(im, n, 1, "depth"), "depth", 1, 1 << 24);
  return {
      im.op(n, "one_hot",
            {{"depth", std::to_string(depth)}, {"axis", std::to_string(im.attrInt(n, "axis", -1))}},
            {im.input(n, 0), im.input(n, 2)})};
}

std::vector<NodeEntry> topK(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis", "largest", "sorted", "k"});
  // The output is sorted either way (sorted=0 leaves the order to the implementation).
  int64_t k = im.opset() < 10 ? im.attrInt(n, "k", 0)
                              : integral(im, n, scalarInput(im, n, 1, "K"), "K", 1, 1 << 30);
  return im.opOutputs(n, "topk",
                      {{"k", std::to_string(k)},
                       {"axis", std::to_string(im.attrInt(n, "axis", -1))},
                       {"largest", im.attrInt(n, "largest", 1) ? "True" : "False"}},
                      {im.input(n, 0)});
}

// ScatterElements (and opset 9's Scatter, the same without reduction) and ScatterND.
Converter scatter(bool nd) {
  return [nd](Importer &im, const onnx::NodeProto &n) {
    std::string reduction = im.attrString(n, "reduction", "none");
    if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
        reduction != "min")
      fail(im.where(n), ": reduction '", reduction, "' is not none, add, mul, max or min");
    AttrDict a = {{"reduction", reduction}};
    if (nd) {
      im.only(n, {"reduction"});
    } else {
      im.only(n, {"reduction", "axis"});
      a.push_back({"axis", std::to_string(im.attrInt(n, "axis", 0))});
    }
    return std::vector<NodeEntry>{im.op(n, nd ? "scatter_nd" : "scatter_elements", a,
                                        {im.input(n, 0), im.input(n, 1), im.input(n, 2)})};
  };
}

// EyeLike: a constant of the input's shape (2-D), ones on the k-th diagonal.
std::vector<NodeEntry> eyeLike(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"dtype", "k"});
  std::optional<Shape> s = im.inferredShape(im.input(n, 0));
  if (!s || s->size() != 2)
    fail(im.where(n), ": the input's shape must be known and 2-D");
  int dt = im.attr(n, "dtype")
               ? dtypeOf(static_cast<int32_t>(im.attrInt(n, "dtype", 1)), im.where(n) + ": dtype")
               : std::max(im.knownDType(n, 0), 0);
  int64_t k = im.attrInt(n, "k", 0);
  requireConstantSize(im, n, *s);
  Tensor t(*s, dt);
  for (int64_t r = 0; r < (*s)[0]; ++r)
    if (r + k >= 0 && r + k < (*s)[1])
      t.data[r * (*s)[1] + r + k] = 1;
  return im.constantOutput(n, std::move(t));
}

// Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
std::vector<NodeEntry> shrink(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"lambd", "bias"});
  double lambd = im.attrFloat(n, "lambd", 0.5), bias = im.attrFloat(n, "bias", 0);
  NodeEntry x = im.input(n, 0);
  auto c = [&](const std::string &suffix, double v) {
    Tensor t(Shape{1}, std::max(im.knownDType(n, 0), 0));
    t.data[0] = roundToDType(v, t.dtype);
    return im.constantParam(n, suffix, std::move(t));
  };
  NodeEntry below = im.op(n, "broadcast_less", {}, {x, c("_neg_lambd", -lambd)}, "_below");
  NodeEntry above = im.op(n, "broadcast_greater", {}, {x, c("_lambd", lambd)}, "_above");
  NodeEntry b = c("_bias", bias);
  NodeEntry up = im.op(n, "broadcast_add", {}, {x, b}, "_up");
  NodeEntry down = im.op(n, "broadcast_sub", {}, {x, b}, "_down");
  NodeEntry zero = im.op(n, "zeros_like", {}, {x}, "_zero");
  NodeEntry inner = im.op(n, "where", {}, {above, down, zero}, "_inner");
  return {im.op(n, "where", {}, {below, up, inner})};
}

// Range of constant bounds: a constant of start + i * delta for i < ceil((limit - start) /
// delta), in start's dtype.
std::vector<NodeEntry> range(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {});
  double start = scalarInput(im, n, 0, "start"), limit = scalarInput(im, n, 1, "limit"),
         delta = scalarInput(im, n, 2, "delta");
  if (delta == 0)
    fail(im.where(n), ": delta must not be 0");
  double count = std::ceil((limit - start) / delta);
  if (!(count >= 1) || count > (1 << 24))
    fail(im.where(n), ": the range [", floatText(start), ", ", floatText(limit), ") step ",
         floatText(delta), " must hold 1 … 2^24 elements (empty tensors have no shape here)");
  Tensor t({static_cast<int64_t>(count)}, im.constant(n, 0)->dtype);
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = roundToDType(start + static_cast<double>(i) * delta, t.dtype);
  return im.constantOutput(n, std::move(t));
}

// HannWindow, HammingWindow and BlackmanWindow of a constant size: a constant of the
// generalised cosine window a0 - a1 cos(2πn/N) + a2 cos(4πn/N), N the size (periodic) or the
// size - 1 (symmetric).
Converter window(double a0, double a1, double a2) {
  return [=](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"periodic", "output_datatype"});
    int64_t size = integral(im, n, scalarInput(im, n, 0, "size"), "size", 1, 1 << 24);
    int dt = dtypeOf(static_cast<int32_t>(im.attrInt(n, "output_datatype", 1)),
                     im.where(n) + ": output_datatype");
    double period = static_cast<double>(im.attrInt(n, "periodic", 1) ? size : size - 1);
    Tensor t({size}, dt);
    for (int64_t i = 0; i < size; ++i) {
      double x = 2 * M_PI * static_cast<double>(i) / period;
      t.data[i] = roundToDType(a0 - a1 * std::cos(x) + a2 * std::cos(2 * x), dt);
    }
    return im.constantOutput(n, std::move(t));
  };
}

// LRN across channels: x / (bias + alpha / size * Σ x²)^beta, the sum over the `size`
// channels around each (floor((size-1)/2) before, the rest after), as the sum of `size`
// channel-shifted slices of x² padded with zeros.
std::vector<NodeEntry> lrn(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"alpha", "beta", "bias", "size"});
  int64_t size = im.attrInt(n, "size", 0);
  if (size < 1 || size > 64)
    fail(im.where(n), ": size ", size, " must be 1 … 64");
  NodeEntry x = im.input(n, 0);
  std::optional<Shape> s = im.inferredShape(x);
  if (!s || s->size() < 3)
    fail(im.where(n), ": the input's shape must be known, with a channel axis and more");
  int64_t before = (size - 1) / 2, after = size - 1 - before, channels = (*s)[1];
  NodeEntry sq = im.op(n, "elemwise_mul", {}, {x, x}, "_square");
  std::string widths = "((0, 0), (" + std::to_string(before) + ", " + std::to_string(after) + ")";
  for (size_t d = 2; d < s->size(); ++d)
    widths += ", (0, 0)";
  NodeEntry padded = im.op(n, "pad", {{"pad_width", widths + ")"}}, {sq}, "_padded");
  std::optional<NodeEntry> sum;
  for (int64_t k = 0; k < size; ++k) {
    NodeEntry slice = im.op(n, "strided_slice",
                            {{"begin", "(" + std::to_string(k) + ",)"},
                             {"end", "(" + std::to_string(k + channels) + ",)"},
                             {"axes", "(1,)"}},
                            {padded}, "_window" + std::to_string(k));
    sum = sum ? im.op(n, "elemwise_add", {}, {*sum, slice}, "_sum" + std::to_string(k)) : slice;
  }
  double alpha = im.attrFloat(n, "alpha", 1e-4), beta = im.attrFloat(n, "beta", 0.75),
         bias = im.attrFloat(n, "bias", 1);
  NodeEntry scaled =
      im.op(n, "__mul_scalar__", {{"scalar", floatText(alpha / static_cast<double>(size))}}, {*sum},
            "_scaled");
  NodeEntry base = im.op(n, "__add_scalar__", {{"scalar", floatText(bias)}}, {scaled}, "_base");
  NodeEntry denom = im.op(n, "__pow_scalar__", {{"scalar", floatText(beta)}}, {base}, "_denom");
  return {im.op(n, "elemwise_div", {}, {x, denom})};
}

// ArgMax/ArgMin: one axis, keepdims (default 1) and select_last_index.
Converter argReduce(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axis", "keepdims", "select_last_index"});
    AttrDict a = {{"axis", std::to_string(im.attrInt(n, "axis", 0))},
                  {"keepdims", im.attrInt(n, "keepdims", 1) ? "True" : "False"},
                  {"select_last_index", im.attrInt(n, "select_last_index", 0) ? "True" : "False"}};
    return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0)})};
  };
}

// A unary op with float attributes: each (ONNX name, op name, ONNX default).
struct FloatAttr {
  const char *onnx, *op;
  double dflt;
};
Converter unaryWith(const char *op, std::vector<FloatAttr> attrs) {
  return [op, attrs](Importer &im, const onnx::NodeProto &n) {
    std::vector<const char *> known;
    AttrDict a;
    for (const FloatAttr &f : attrs) {
      known.push_back(f.onnx);
      a.push_back({f.op, floatText(im.attrFloat(n, f.onnx, f.dflt))});
    }
    im.only(n, known);
    return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0)})};
  };
}

// Max, Min, Sum, Mean: the inputs folded left to right with a broadcasting binary op (the last
// node takes the ONNX node's name); one input is a copy. Mean divides the sum by the count.
Converter variadic(const char *op, bool mean = false) {
  return [op, mean](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {});
    int count = n.input_size();
    NodeEntry acc = im.input(n, 0);
    for (int k = 1; k < count; ++k)
      acc = im.op(n, op, {}, {acc, im.broadcastInput(n, k)},
                  k + 1 < count || mean ? "_" + std::string(op) + std::to_string(k) : "");
    if (count == 1 && !mean)
      acc = im.op(n, "copy", {}, {acc});
    if (mean)
      acc = im.op(n, "__div_scalar__", {{"scalar", std::to_string(count)}}, {acc});
    return std::vector<NodeEntry>{acc};
  };
}

// A convolution's or pool's pads as ONNX orders them (the begins of every spatial axis, then
// the ends), for kernel `k`, strides `s` and dilations `d` of one value per spatial axis.
// `auto_pad` SAME_UPPER / SAME_LOWER pads so that each output size is the input's divided by the
// stride, rounded up, the odd cell at the end (UPPER) or the start (LOWER); that needs the
// input's shape.
std::vector<int64_t> windowPads(Importer &im, const onnx::NodeProto &n,
                                const std::vector<int64_t> &k, const std::vector<int64_t> &s,
                                const std::vector<int64_t> &d) {
  size_t rank = k.size();
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  if (autoPad == "VALID")
    return std::vector<int64_t>(2 * rank, 0);
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    std::optional<Shape> x = im.inferredShape(im.input(n, 0));
    if (!x || x->size() != rank + 2)
      fail(im.where(n), ": auto_pad ", autoPad, " needs the input's shape, known and ", rank + 2,
           "-D");
    std::vector<int64_t> p(2 * rank);
    for (size_t a = 0; a < rank; ++a) {
      int64_t in = (*x)[2 + a], out = (in + s[a] - 1) / s[a];
      int64_t total = std::max<int64_t>(0, (out - 1) * s[a] + (k[a] - 1) * d[a] + 1 - in);
      p[a] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      p[a + rank] = total - p[a];
    }
    return p;
  }
  if (autoPad != "NOTSET")
    fail(im.where(n), ": auto_pad ", autoPad,
         " is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
  std::vector<int64_t> p = im.attrInts(n, "pads");
  if (p.empty())
    return std::vector<int64_t>(2 * rank, 0);
  if (p.size() != 2 * rank)
    fail(im.where(n), ": pads ", tupleText(p), " must have ", 2 * rank, " values for a ", rank,
         "-D kernel");
  return p;
}

// windowPads of a 2-D operator, (top, left, bottom, right), from its lifted 2-D kernel, strides
// and dilations; with `oneD`, a 1-D operator's (begin, end) becomes the (0, begin, 0, end) of its
// lift. Symmetric pads go into the op.
std::vector<int64_t> pads2d(Importer &im, const onnx::NodeProto &n, const std::vector<int64_t> &k,
                            const std::vector<int64_t> &s, const std::vector<int64_t> &d,
                            bool oneD = false) {
  if (!oneD)
    return windowPads(im, n, k, s, d);
  std::vector<int64_t> p = windowPads(im, n, {k[1]}, {s[1]}, {d[1]});
  return {0, p[0], 0, p[1]};
}

// A 1-D attribute (strides, dilations) lifted to 2-D: (v) -> (1, v); `dflt` when absent.
std::vector<int64_t> lifted(std::vector<int64_t> v, bool oneD, int64_t dflt) {
  if (v.empty())
    return {dflt, dflt};
  if (oneD && v.size() == 1)
    return {1, v[0]};
  return v;
}

// 1-D convolutions and pools run as 2-D ones on (N, C, 1, L): the input gains an axis of 1
// before H, and the result loses it.
NodeEntry liftTo2d(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                   const std::string &suffix) {
  return im.op(n, "expand_dims", {{"axis", "2"}}, {x}, suffix);
}

// A window attribute (strides, dilations) of a `rank`-D operator: one value per spatial axis,
// 1 each when absent.
std::vector<int64_t> windowAttr(Importer &im, const onnx::NodeProto &n, const char *key,
                                size_t rank) {
  std::vector<int64_t> v = im.attrInts(n, key);
  if (v.empty())
    return std::vector<int64_t>(rank, 1);
  if (v.size() != rank)
    fail(im.where(n), ": ", key, " ", tupleText(v), " must have ", rank, " values");
  return v;
}

// The padding attribute of a volume op from ONNX pads: (d, h, w) when symmetric, else all six.
std::string volumePadding(const std::vector<int64_t> &p) {
  bool symmetric = std::equal(p.begin(), p.begin() + 3, p.begin() + 3);
  return tupleText(symmetric ? std::vector<int64_t>(p.begin(), p.begin() + 3) : p);
}

void need2d(Importer &im, const onnx::NodeProto &n, const std::vector<int64_t> &kernel) {
  if (kernel.size() != 2)
    fail(im.where(n), ": only 1-D, 2-D and 3-D kernels are supported, got ", tupleText(kernel));
}

std::vector<NodeEntry> conv(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"});
  std::vector<int64_t> k = im.attrInts(n, "kernel_shape");
  const Shape *w = im.knownShape(n, 1);
  if (!w)
    fail(im.where(n), ": the weight's shape must be known (an initializer or a graph input)");
  if (k.empty() && w->size() == 4)
    k = {(*w)[2], (*w)[3]};
  if (k.empty() && w->size() == 3)
    k = {(*w)[2]};
  if (k.empty() && w->size() == 5)
    k = {(*w)[2], (*w)[3], (*w)[4]};
  if (k.size() == 3) {
    std::vector<int64_t> s = windowAttr(im, n, "strides", 3), d = windowAttr(im, n, "dilations", 3);
    bool bias = im.hasInput(n, 2);
    std::vector<NodeEntry> ins = {im.input(n, 0), im.input(n, 1)};
    if (bias)
      ins.push_back(im.input(n, 2));
    return {im.op(n, "conv3d",
                  {{"channels", std::to_string((*w)[0])},
                   {"kernel_size", tupleText(k)},
                   {"strides", tupleText(s)},
                   {"padding", volumePadding(windowPads(im, n, k, s, d))},
                   {"dilation", tupleText(d)},
                   {"groups", std::to_string(im.attrInt(n, "group", 1))},
                   {"use_bias", bias ? "True" : "False"}},
                  ins)};
  }
  bool oneD = k.size() == 1 && w->size() == 3;
  if (oneD)
    k = {1, k[0]};
  need2d(im, n, k);
  std::vector<int64_t> s = lifted(im.attrInts(n, "strides"), oneD, 1),
                       d = lifted(im.attrInts(n, "dilations"), oneD, 1),
                       p = pads2d(im, n, k, s, d, oneD);
  NodeEntry x = oneD ? liftTo2d(im, n, im.input(n, 0), "_2d") : im.input(n, 0);
  if (p[0] != p[2] || p[1] != p[3]) {
    x = im.op(
        n, "pad",
        {{"pad_width", "((0, 0), (0, 0), (" + std::to_string(p[0]) + ", " + std::to_string(p[2]) +
                           "), (" + std::to_string(p[1]) + ", " + std::to_string(p[3]) + "))"}},
        {x}, "_pad");
    p = {0, 0, 0, 0};
  }
  bool bias = im.hasInput(n, 2);
  std::vector<NodeEntry> ins = {x, oneD ? liftTo2d(im, n, im.input(n, 1), "_weight_2d")
                                        : im.input(n, 1)};
  if (bias)
    ins.push_back(im.input(n, 2));
  NodeEntry y = im.op(n, "conv2d",
                      {{"channels", std::to_string((*w)[0])},
                       {"kernel_size", tupleText(k)},
                       {"strides", tupleText(s)},
                       {"padding", tupleText({p[0], p[1]})},
                       {"dilation", tupleText(d)},
                       {"groups", std::to_string(im.attrInt(n, "group", 1))},
                       {"use_bias", bias ? "True" : "False"}},
                      ins, oneD ? "_conv2d" : "");
  if (oneD)
    y = im.op(n, "squeeze", {{"axis", "2"}}, {y});
  return {y};
}

// Axis `axis` of a rank-`rank` input, a negative one counting from the end; out of range is an
// error naming the node.
int64_t axisOf(Importer &im, const onnx::NodeProto &n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail(im.where(n), ": axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

// The axes of a rank-`rank` input an attribute or input lists (opset 18's Pad and Resize), each
// once, negative ones counting from the end.
std::vector<int64_t> distinctAxes(Importer &im, const onnx::NodeProto &n,
                                  const std::vector<int64_t> &axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t at = a < 0 ? a + rank : a;
    if (at < 0 || at >= rank || std::find(out.begin(), out.end(), at) != out.end())
      fail(im.where(n), ": axis ", a, " is out of range for rank ", rank, " or repeated");
    out.push_back(at);
  }
  return out;
}

// A vector (C) made to broadcast along axis `axis` of a rank-`rank` tensor: (C, 1, …) with a 1
// for each axis after it.
NodeEntry alongAxis(Importer &im, const onnx::NodeProto &n, const NodeEntry &v, int64_t rank,
                    int64_t axis, const std::string &suffix) {
  int64_t after = rank - 1 - axis;
  if (after <= 0)
    return v;
  return im.op(n, "expand_dims", {{"axis", "1"}, {"num_newaxis", std::to_string(after)}}, {v},
               suffix);
}

// A per-channel vector (C) made to broadcast along axis 1 of a rank-`rank` tensor: (C, 1, …).
NodeEntry alongChannels(Importer &im, const onnx::NodeProto &n, const NodeEntry &v, size_t rank,
                        const std::string &suffix) {
  return alongAxis(im, n, v, static_cast<int64_t>(rank), 1, suffix);
}

// QuantizeLinear's and DequantizeLinear's scale or zero point (input k) against x (input 0): a
// scalar (per tensor) read as a one-element tensor; a 1-D one (opset 13, per axis) along `axis`.
NodeEntry quantizationOperand(Importer &im, const onnx::NodeProto &n, int k,
                              const std::string &suffix) {
  if (im.isScalar(n, k))
    return im.broadcastInput(n, k);
  Shape s = shapeNow(im, n, k, 1);
  if (s.size() != 1)
    fail(im.where(n), ": input ", k, " must be a scalar or 1-D, got ", shapeToList(s));
  if (s[0] == 1) // one element (a scalar computed in the graph): it broadcasts as it is
    return im.input(n, k);
  auto rank = static_cast<int64_t>(shapeNow(im, n, 0, 1).size());
  int64_t axis = axisOf(im, n, im.attrInt(n, "axis", 1), rank);
  return alongAxis(im, n, im.input(n, k), rank, axis, suffix);
}

// The zero point (input 2) of QuantizeLinear or DequantizeLinear as float32, if it has one.
std::optional<NodeEntry> zeroPointAsFloat(Importer &im, const onnx::NodeProto &n) {
  if (!im.hasInput(n, 2))
    return std::nullopt;
  return im.op(n, "cast", {{"dtype", "float32"}}, {quantizationOperand(im, n, 2, "_zero_point")},
               "_zero_float");
}

// The integer types QuantizeLinear writes and the range it saturates to.
struct Quantized {
  int dtype;
  double lo, hi;
};
Quantized quantizedType(Importer &im, const onnx::NodeProto &n) {
  int dt = im.hasInput(n, 2) ? im.knownDType(n, 2) : kUint8;
  if (dt == -1 && !im.isScalar(n, 2)) // computed in the graph (DynamicQuantizeLinear expanded)
    dt = im.inferredDType(im.input(n, 2));
  switch (dt) {
  case kUint8:
    return {dt, 0, 255};
  case kInt8:
    return {dt, -128, 127};
  case kUint16:
    return {dt, 0, 65535};
  case kInt16:
    return {dt, -32768, 32767};
  default:
    fail(im.where(n), ": y_zero_point must be of type uint8, int8, uint16 or int16");
  }
}

// saturate(round(x / scale) + zero) in q's type: QuantizeLinear's and DynamicQuantizeLinear's
// arithmetic (round halves to even), `zero` already a float tensor or null. Its nodes are named
// with `what` (the result: the node's own name when empty).
NodeEntry quantized(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                    const NodeEntry &scale, const NodeEntry *zero, const Quantized &q,
                    const std::string &what = "") {
  NodeEntry y = im.op(n, "round", {}, {im.op(n, "broadcast_div", {}, {x, scale}, what + "_scaled")},
                      what + "_rounded");
  if (zero)
    y = im.op(n, "broadcast_add", {}, {y, *zero}, what + "_shifted");
  y = im.op(n, "clip", {{"a_min", floatText(q.lo)}, {"a_max", floatText(q.hi)}}, {y},
            what + "_saturated");
  return im.op(n, "cast", {{"dtype", std::string(dtypeName(q.dtype))}}, {y}, what);
}

// x's mean over the axes `over` names (with keepdims), its deviation from it and the mean
// squared deviation, the biased variance: the statistics of the normalisations composed of ops
// here.
struct Moments {
  NodeEntry mean, dev, var;
};
Moments momentsOf(Importer &im, const onnx::NodeProto &n, const NodeEntry &x,
                  const AttrDict &over) {
  NodeEntry mean = im.op(n, "mean", over, {x}, "_mean");
  NodeEntry dev = im.op(n, "broadcast_sub", {}, {x, mean}, "_dev");
  return {mean, dev,
          im.op(n, "mean", over, {im.op(n, "elemwise_mul", {}, {dev, dev}, "_sq")}, "_var")};
}

// Resize (and Upsample, its older form) of the last two axes of 4-D data by constant scales
// or sizes: resize2d with ONNX's coordinate and rounding modes. Opset 10's Resize and Upsample
// map coordinates asymmetrically and round nearest neighbours down.
std::vector<NodeEntry> resize(Importer &im, const onnx::NodeProto &n) {
  bool legacy = n.op_type() == "Upsample" || im.opset() < 11;
  im.only(n, {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
              "exclude_outside", "extrapolation_value", "scales", "antialias", "axes",
              "keep_aspect_ratio_policy"});
  if (im.attrInt(n, "antialias", 0) != 0)
    fail(im.where(n), ": antialias is not supported");
  std::string mode = im.attrString(n, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    fail(im.where(n), ": mode ", mode, " is not one of nearest, linear, cubic");
  std::string coords =
      legacy ? "asymmetric" : im.attrString(n, "coordinate_transformation_mode", "half_pixel");
  if (coords == "tf_crop_and_resize" || coords == "half_pixel_symmetric")
    fail(im.where(n), ": coordinate_transformation_mode ", coords, " is not supported");
  if (mode != "nearest" && coords == "tf_half_pixel_for_nn")
    fail(im.where(n), ": tf_half_pixel_for_nn is for nearest neighbours only");
  std::string rounding = legacy ? "floor" : im.attrString(n, "nearest_mode", "round_prefer_floor");
  NodeEntry x = im.input(n, 0);
  std::optional<Shape> shape = im.inferredShape(x);
  if (!shape || shape->size() != 4)
    fail(im.where(n), ": the data's shape must be known and 4-D (N, C, H, W)");
  // The scales: an attribute (Upsample before opset 9), input 1 (opset 9-10) or input 2;
  // else the sizes, input 3.
  std::vector<double> scales;
  if (const auto *a = im.attr(n, "scales"))
    scales.assign(a->floats().begin(), a->floats().end());
  int scalesAt = legacy ? 1 : 2;
  if (scales.empty() && im.hasInput(n, scalesAt)) {
    const Tensor *t = im.constant(n, scalesAt);
    if (!t)
      fail(im.where(n), ": scales must be a constant (an initializer or Constant)");
    scales = t->data;
  }
  std::vector<int64_t> sizes;
  if (scales.empty()) {
    if (legacy || !im.hasInput(n, 3))
      fail(im.where(n), ": needs scales or sizes");
    sizes = im.constInts(n, 3, "sizes");
  }
  const Shape &d = *shape;
  // Opset 18: scales or sizes for the listed axes only; the others keep their size.
  std::vector<int64_t> axes = im.attrInts(n, "axes");
  bool partial = !axes.empty();
  if (!partial)
    axes = {0, 1, 2, 3};
  size_t given = scales.empty() ? sizes.size() : scales.size();
  if (given != axes.size())
    fail(im.where(n), ": ", scales.empty() ? "sizes" : "scales", " must have ", axes.size(),
         " values (", partial ? "one per axis in axes" : "N, C, H, W", "), got ", given);
  std::vector<double> fullScales(4, 1.0);
  std::vector<int64_t> fullSizes(d.begin(), d.end());
  std::vector<int64_t> listed = distinctAxes(im, n, axes, 4);
  for (size_t i = 0; i < listed.size(); ++i) {
    if (scales.empty())
      fullSizes[static_cast<size_t>(listed[i])] = sizes[i];
    else
      fullScales[static_cast<size_t>(listed[i])] = scales[i];
  }
  // keep_aspect_ratio_policy (opset 18) with sizes: one scale for the listed axes, the
  // largest (not_smaller) or smallest (not_larger) of their sizes' ratios, each size then
  // rounded from it; the coordinates use that scale.
  std::string policy = im.attrString(n, "keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail(im.where(n), ": keep_aspect_ratio_policy ", policy,
         " is not one of stretch, not_larger, not_smaller");
  std::optional<double> kept;
  if (!sizes.empty() && policy != "stretch") {
    for (int64_t a : listed) {
      double r = static_cast<double>(fullSizes[static_cast<size_t>(a)]) /
                 static_cast<double>(d[static_cast<size_t>(a)]);
      kept = !kept ? r : policy == "not_larger" ? std::min(*kept, r) : std::max(*kept, r);
    }
    for (int64_t a : listed)
      fullSizes[static_cast<size_t>(a)] = static_cast<int64_t>(
          std::floor(*kept * static_cast<double>(d[static_cast<size_t>(a)]) + 0.5));
  }
  if (scales.empty())
    sizes = fullSizes;
  else
    scales = fullScales;
  for (double v : scales)
    if (!(v > 0 && v <= 1e6))
      fail(im.where(n), ": scales must be positive and at most 1e6");
  auto sized = [&](size_t k) {
    if (!sizes.empty())
      return sizes[k];
    double out = std::floor(static_cast<double>(d[k]) * scales[k]);
    if (out >= static_cast<double>(kMaxElements))
      fail(im.where(n), ": the output size along axis ", k, " would be ", out);
    return static_cast<int64_t>(out);
  };
  for (size_t k : {0, 1})
    if (sized(k) != d[k])
      fail(im.where(n), ": only H and W can be resized (axes 2 and 3)");
  int64_t oh = sized(2), ow = sized(3);
  if (oh <= 0 || ow <= 0)
    fail(im.where(n), ": the output size (", oh, ", ", ow, ") must be positive");
  auto scaleText = [&](size_t k) {
    return floatText(sizes.empty() ? scales[k]
                     : kept && std::count(listed.begin(), listed.end(), static_cast<int64_t>(k))
                         ? *kept
                         : 0.0);
  };
  AttrDict cubic;
  if (mode == "cubic")
    cubic = {{"cubic_alpha", floatText(im.attrFloat(n, "cubic_coeff_a", -0.75))},
             {"cubic_exclude", std::to_string(im.attrInt(n, "exclude_outside", 0) ? 1 : 0)}};
  AttrDict a = {{"size", tupleText({oh, ow})},
                {"method", mode == "nearest" ? "nearest_neighbor" : mode},
                {"coordinate_transformation_mode", coords},
                {"rounding_method", rounding},
                {"scale_h", scaleText(2)},
                {"scale_w", scaleText(3)}};
  a.insert(a.end(), cubic.begin(), cubic.end());
  return {im.op(n, "resize2d", a, {x})};
}

// The shape of input `k`, which these conversions need now (to size a constant or a reshape).
Shape shapeNow(Importer &im, const onnx::NodeProto &n, int k, size_t minRank) {
  std::optional<Shape> s = im.inferredShape(im.input(n, k));
  if (!s || s->size() < minRank)
    fail(im.where(n), ": the shape of input ", k, " must be known and of rank ", minRank,
         " or more");
  return *s;
}

// DepthToSpace and SpaceToDepth: a reshape to 6-D, a transpose that moves the block between
// the channels and the spatial axes, and a reshape back (ONNX's own definition).
Converter depthSpace(bool toSpace) {
  return [toSpace](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"blocksize", "mode"});
    Shape d = shapeNow(im, n, 0, 4);
    if (d.size() != 4)
      fail(im.where(n), ": the data must be 4-D (N, C, H, W)");
    int64_t b = im.attrInt(n, "blocksize", 0), N = d[0], C = d[1], H = d[2], W = d[3];
    if (b <= 0)
      fail(im.where(n), ": blocksize must be positive");
    // The products below stay within int64: b*b divides C (toSpace) or b divides H and W, and
    // the result's element count is the input's.
    if (toSpace ? b > C / b : b > H || b > W)
      fail(im.where(n), ": blocksize ", b, " is too large for ", shapeToList(d));
    Shape first, last;
    std::vector<int64_t> perm;
    if (toSpace) {
      if (C % (b * b) != 0)
        fail(im.where(n), ": the channels (", C, ") must divide by blocksize² (", b * b, ")");
      bool crd = im.attrString(n, "mode", "DCR") == "CRD";
      first = crd ? Shape{N, C / (b * b), b, b, H, W} : Shape{N, b, b, C / (b * b), H, W};
      perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
      last = {N, C / (b * b), H * b, W * b};
    } else {
      if (H % b != 0 || W % b != 0)
        fail(im.where(n), ": H and W (", H, ", ", W, ") must divide by blocksize (", b, ")");
      first = {N, C, H / b, b, W / b, b};
      perm = {0, 3, 5, 1, 2, 4};
      last = {N, C * b * b, H / b, W / b};
    }
    NodeEntry x = im.op(n, "reshape", {{"shape", tupleText(first)}}, {im.input(n, 0)}, "_split");
    x = im.op(n, "transpose", {{"axes", tupleText(perm)}}, {x}, "_move");
    return std::vector<NodeEntry>{im.op(n, "reshape", {{"shape", tupleText(last)}}, {x})};
  };
}

// InstanceNormalization: instance_norm, each image's channel normalised by its own mean and
// variance, then the per-channel scale and bias.
std::vector<NodeEntry> instanceNorm(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"epsilon"});
  shapeNow(im, n, 0, 3);
  return {im.op(n, "instance_norm", {{"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
                {im.input(n, 0), im.input(n, 1), im.input(n, 2)})};
}

// BatchNormalization's training_mode (opset 14): x normalised by the batch's own mean and
// (biased) variance over every axis but the channels, as ONNX's reference computes them; the
// second and third outputs are the running mean and variance updated with momentum.
std::vector<NodeEntry> batchNormTraining(Importer &im, const onnx::NodeProto &n) {
  Shape d = shapeNow(im, n, 0, 2);
  double momentum = im.attrFloat(n, "momentum", 0.9);
  auto [mean, dev, var] = momentsOf(im, n, im.input(n, 0),
                                    {{"axis", "(1,)"}, {"exclude", "True"}, {"keepdims", "True"}});
  NodeEntry sd =
      im.op(n, "sqrt", {},
            {im.op(n, "__add_scalar__", {{"scalar", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
                   {var}, "_var_eps")},
            "_std");
  NodeEntry y = im.op(n, "broadcast_div", {}, {dev, sd}, "_normalized");
  y = im.op(n, "broadcast_mul", {}, {y, alongChannels(im, n, im.input(n, 1), d.size(), "_scale")},
            "_scaled");
  y = im.op(n, "broadcast_add", {}, {y, alongChannels(im, n, im.input(n, 2), d.size(), "_bias")});
  std::vector<NodeEntry> outs = {y};
  // running = running * momentum + batch * (1 - momentum), per channel: the batch's statistics
  // are the ones y used, (1, C, 1, …) read as (C).
  for (int k : {1, 2}) {
    std::string what = k == 1 ? "_running_mean" : "_running_var";
    NodeEntry batch = im.op(n, "reshape", {{"shape", tupleText({d[1]})}}, {k == 1 ? mean : var},
                            k == 1 ? "_batch_mean" : "_batch_var");
    NodeEntry old = im.op(n, "__mul_scalar__", {{"scalar", floatText(momentum)}},
                          {im.input(n, 2 + k)}, what + "_kept");
    NodeEntry add =
        im.op(n, "__mul_scalar__", {{"scalar", floatText(1 - momentum)}}, {batch}, what + "_added");
    outs.push_back(im.op(n, "elemwise_add", {}, {old, add}, what));
  }
  return outs;
}

// MeanVarianceNormalization: (x - mean) / (std + 1e-9) over `axes` (default N, H and W), as
// ONNX's function body defines it (the epsilon added to the deviation, not the variance); the
// variance as the mean squared deviation, which equals its E[x^2] - E[x]^2.
std::vector<NodeEntry> meanVarianceNorm(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axes"});
  std::vector<int64_t> axes = im.attrInts(n, "axes");
  if (!im.attr(n, "axes"))
    axes = {0, 2, 3};
  auto [mean, dev, var] =
      momentsOf(im, n, im.input(n, 0), {{"axis", tupleText(axes)}, {"keepdims", "True"}});
  NodeEntry sd = im.op(n, "__add_scalar__", {{"scalar", "1e-09"}},
                       {im.op(n, "sqrt", {}, {var}, "_std")}, "_std_eps");
  return {im.op(n, "broadcast_div", {}, {dev, sd})};
}

// GroupNormalization: group_norm over num_groups groups of channels. Opset 18 gave scale and
// bias one value per group (opset 21 one per channel): each is repeated for its group's
// channels, (G) -> (G, 1) -> (G, C/G) -> (C).
std::vector<NodeEntry> groupNorm(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"epsilon", "num_groups", "stash_type"});
  if (im.attrInt(n, "stash_type", 1) != 1)
    fail(im.where(n), ": stash_type ", im.attrInt(n, "stash_type", 1),
         " is not supported (1, statistics in float32, is)");
  Shape d = shapeNow(im, n, 0, 2);
  int64_t groups = im.attrInt(n, "num_groups", 0), channels = d[1];
  if (groups <= 0 || channels % groups != 0)
    fail(im.where(n), ": num_groups ", groups, " does not divide the ", channels, " channels");
  NodeEntry scale = im.input(n, 1), bias = im.input(n, 2);
  if (im.opset() < 21) {
    Shape perChannel{groups, channels / groups}, flat{channels};
    auto spread = [&](const NodeEntry &v, const char *suffix) {
      NodeEntry col = im.op(n, "expand_dims", {{"axis", "1"}}, {v}, std::string(suffix) + "_col");
      NodeEntry wide = im.op(n, "broadcast_to", {{"shape", tupleText(perChannel)}}, {col},
                             std::string(suffix) + "_wide");
      return im.op(n, "reshape", {{"shape", tupleText(flat)}}, {wide}, suffix);
    };
    scale = spread(scale, "_scale");
    bias = spread(bias, "_bias");
  }
  return {im.op(n, "group_norm",
                {{"num_groups", std::to_string(groups)},
                 {"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
                {im.input(n, 0), scale, bias})};
}

// Hardmax: 1 where an element is the first maximum along the axis, else 0 — argmax compared
// with the axis's positions (a constant). Before opset 13 the input counts as 2-D, flattened
// at the axis.
std::vector<NodeEntry> hardmax(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"axis"});
  Shape d = shapeNow(im, n, 0, 1);
  auto rank = static_cast<int64_t>(d.size());
  int64_t axis = axisOf(im, n, im.attrInt(n, "axis", im.opset() >= 13 ? -1 : 1), rank);
  NodeEntry x = im.input(n, 0);
  Shape work = d;
  if (im.opset() < 13) {
    checkedNumElements(d); // so that its parts' products cannot overflow
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? outer : inner) *= d[static_cast<size_t>(i)];
    work = {outer, inner};
    x = im.op(n, "reshape", {{"shape", tupleText(work)}}, {x}, "_2d");
    axis = 1;
  }
  Shape at(work.size(), 1);
  at[static_cast<size_t>(axis)] = work[static_cast<size_t>(axis)];
  Tensor positions(at, kInt64);
  for (size_t i = 0; i < positions.data.size(); ++i)
    positions.data[i] = static_cast<double>(i);
  NodeEntry arg =
      im.op(n, "argmax", {{"axis", std::to_string(axis)}, {"keepdims", "True"}}, {x}, "_argmax");
  NodeEntry hit = im.op(n, "broadcast_equal", {},
                        {arg, im.constantParam(n, "_positions", std::move(positions))}, "_hit");
  NodeEntry y =
      im.op(n, "where", {},
            {hit, im.op(n, "ones_like", {}, {x}, "_one"), im.op(n, "zeros_like", {}, {x}, "_zero")},
            im.opset() < 13 ? "_2d_hardmax" : "");
  if (im.opset() < 13)
    y = im.op(n, "reshape", {{"shape", tupleText(d)}}, {y});
  return {y};
}

// Trilu: the upper (or lower) triangle of the last two axes from diagonal k, the rest zero — a
// constant mask chosen by where.
std::vector<NodeEntry> trilu(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"upper"});
  Shape d = shapeNow(im, n, 0, 2);
  int64_t k = 0;
  if (im.hasInput(n, 1)) {
    std::vector<int64_t> ks = im.constInts(n, 1, "k");
    if (ks.size() != 1)
      fail(im.where(n), ": k must hold one value");
    k = ks[0];
  }
  bool upper = im.attrInt(n, "upper", 1) != 0;
  int64_t rows = d[d.size() - 2], cols = d.back();
  Tensor mask({rows, cols}, kBoolean);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      // j - i compared in double: k may be any int64 (a saturated constant).
      double diagonal = static_cast<double>(j) - static_cast<double>(i);
      mask.data[static_cast<size_t>(i * cols + j)] =
          upper ? diagonal >= static_cast<double>(k) : diagonal <= static_cast<double>(k);
    }
  NodeEntry x = im.input(n, 0);
  return {im.op(n, "where", {},
                {im.constantParam(n, "_mask", std::move(mask)), x,
                 im.op(n, "zeros_like", {}, {x}, "_zero")})};
}

// Einsum as transposes, sums and batch_matmuls (the tensordot rule): an index only one operand
// has and nothing later needs is summed there; two operands are contracted by moving their
// shared kept indices (batch), own indices (free) and shared summed indices (contracted) into
// place, a batch_matmul of (batch, free, contracted) by (batch, contracted, free), and a
// reshape back; operands are contracted left to right, and the result transposed to the output's
// order. An ellipsis stands for the same leading axes in every operand; a repeated index in one
// operand (a diagonal) is refused.
struct EinsumTerm {
  NodeEntry value;
  std::string labels; // one character per axis
  Shape shape;
};

std::vector<NodeEntry> einsum(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"equation"});
  std::string eq;
  for (char c : im.attrString(n, "equation", ""))
    if (c != ' ')
      eq += c;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> specs = {""};
  for (char c : lhs)
    c == ',' ? specs.push_back("") : void(specs.back() += c);
  if (static_cast<int>(specs.size()) != n.input_size())
    fail(im.where(n), ": the equation '", eq, "' has ", specs.size(), " operands, the node ",
         n.input_size(), " inputs");
  // Each operand's labels, an ellipsis expanded to the upper-case letters A, B, … of the axes it
  // covers, counted from the right so that operands of different ranks line up.
  std::vector<EinsumTerm> terms;
  size_t ellipsis = 0;
  auto expand = [&](std::string spec, size_t rank) {
    size_t at = spec.find("...");
    if (at == std::string::npos)
      return spec;
    size_t covered = rank + 3 - spec.size();
    std::string dims;
    for (size_t i = 0; i < covered; ++i)
      dims += static_cast<char>('A' + (ellipsis - covered) + i);
    return spec.substr(0, at) + dims + spec.substr(at + 3);
  };
  for (size_t k = 0; k < specs.size(); ++k) {
    Shape shape = shapeNow(im, n, static_cast<int>(k), 0);
    if (specs[k].find("...") != std::string::npos)
      ellipsis = std::max(ellipsis, shape.size() + 3 - specs[k].size());
    terms.push_back({im.input(n, static_cast<int>(k)), specs[k], shape});
  }
  for (EinsumTerm &t : terms) {
    for (char c : t.labels)
      if (c != '.' && !std::islower(static_cast<unsigned char>(c)))
        fail(im.where(n), ": index '", std::string(1, c), "' is not a lower-case letter");
    t.labels = expand(t.labels, t.shape.size());
    if (t.labels.size() != t.shape.size())
      fail(im.where(n), ": the equation's term '", t.labels, "' does not match rank ",
           t.shape.size());
    for (size_t i = 0; i < t.labels.size(); ++i)
      if (t.labels.find(t.labels[i], i + 1) != std::string::npos)
        fail(im.where(n), ": the repeated index '", std::string(1, t.labels[i]),
             "' (a diagonal) is not supported");
  }
  // The output: as written, or every index that appears once, ellipsis axes first, in order.
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    if (out.find("...") != std::string::npos)
      out = expand(out, ellipsis + out.size() - 3); // every ellipsis axis
  } else {
    for (size_t i = 0; i < ellipsis; ++i)
      out += static_cast<char>('A' + i);
    std::string once;
    for (char c = 'a'; c <= 'z'; ++c) {
      size_t count = 0;
      for (const EinsumTerm &t : terms)
        count += static_cast<size_t>(std::count(t.labels.begin(), t.labels.end(), c));
      if (count == 1)
        once += c;
    }
    out += once;
  }
  std::map<char, int64_t> size;
  for (const EinsumTerm &t : terms)
    for (size_t i = 0; i < t.labels.size(); ++i) {
      auto [it, fresh] = size.insert({t.labels[i], t.shape[i]});
      if (!fresh && it->second != t.shape[i])
        fail(im.where(n), ": index '", std::string(1, t.labels[i]), "' has sizes ", it->second,
             " and ", t.shape[i]);
    }
  for (char c : out)
    if (!size.count(c))
      fail(im.where(n), ": output index '", std::string(1, c), "' is in no operand");
  int step = 0;
  auto name = [&] { return "_" + std::to_string(step++); };
  auto tuple = [](const std::vector<int64_t> &v) { return tupleText(v); };
  auto shapeOf = [&](const std::string &labels) {
    Shape s;
    for (char c : labels)
      s.push_back(size.at(c));
    return s;
  };
  // Where each of `to`'s labels stands in `from`: the axes of a transpose from one to the other.
  auto permutation = [](const std::string &from, const std::string &to) {
    std::vector<int64_t> perm;
    for (char c : to)
      perm.push_back(static_cast<int64_t>(from.find(c)));
    return perm;
  };
  // Sums the axes of `t` whose labels nothing else needs (not in `keep`).
  auto sumUnneeded = [&](EinsumTerm t, const std::string &keep) {
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t i = 0; i < t.labels.size(); ++i) {
      if (keep.find(t.labels[i]) == std::string::npos)
        axes.push_back(static_cast<int64_t>(i));
      else
        kept += t.labels[i];
    }
    if (axes.empty())
      return t;
    t.value = im.op(n, "sum", {{"axis", tuple(axes)}}, {t.value}, name());
    // A sum over every axis leaves one element, shape (1,), labelled by nothing.
    return EinsumTerm{t.value, kept, kept.empty() ? Shape{1} : shapeOf(kept)};
  };
  // `t` with its axes in the order of `labels` (a permutation of its own).
  auto arrange = [&](EinsumTerm t, const std::string &labels) {
    if (t.labels != labels)
      t.value = im.op(n, "transpose", {{"axes", tuple(permutation(t.labels, labels))}}, {t.value},
                      name());
    return EinsumTerm{t.value, labels, shapeOf(labels)};
  };
  auto reshape = [&](const NodeEntry &v, const Shape &to) {
    return im.op(n, "reshape", {{"shape", tuple(to)}}, {v}, name());
  };
  auto needed = [&](size_t from) { // labels of the output and of terms from `from` on
    std::string keep = out;
    for (size_t k = from; k < terms.size(); ++k)
      keep += terms[k].labels;
    return keep;
  };
  EinsumTerm acc = sumUnneeded(terms[0], needed(1));
  for (size_t k = 1; k < terms.size(); ++k) {
    EinsumTerm b = sumUnneeded(terms[k], needed(k + 1) + acc.labels);
    acc = sumUnneeded(acc, needed(k + 1) + b.labels);
    std::string keep = needed(k + 1), batch, freeA, freeB, contracted;
    for (char c : acc.labels)
      (b.labels.find(c) == std::string::npos ? freeA
       : keep.find(c) != std::string::npos   ? batch
                                             : contracted) += c;
    for (char c : b.labels)
      if (acc.labels.find(c) == std::string::npos)
        freeB += c;
    auto prod = [&](const std::string &labels) { return numElements(shapeOf(labels)); };
    EinsumTerm a2 = arrange(acc, batch + freeA + contracted),
               b2 = arrange(b, batch + contracted + freeB);
    NodeEntry lhs = reshape(a2.value, {prod(batch), prod(freeA), prod(contracted)}),
              rhs = reshape(b2.value, {prod(batch), prod(contracted), prod(freeB)});
    NodeEntry product = im.op(n, "batch_matmul", {}, {lhs, rhs}, name());
    std::string labels = batch + freeA + freeB;
    Shape shape = labels.empty() ? Shape{1} : shapeOf(labels);
    acc = {reshape(product, shape), labels, shape};
  }
  acc = sumUnneeded(acc, out);
  if (out.empty())
    return {im.op(n, "copy", {}, {acc.value})};
  return {im.op(n, "transpose", {{"axes", tuple(permutation(acc.labels, out))}}, {acc.value})};
}

Converter pool(const char *op, bool isMax) {
  return [op, isMax](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"kernel_shape", "strides", "pads", "ceil_mode", "auto_pad",
                isMax ? "storage_order" : "count_include_pad", "dilations"});
    // Dilations (MaxPool's since opset 10, AveragePool's since 19) of 1 are the plain window.
    for (int64_t d : im.attrInts(n, "dilations"))
      if (d != 1)
        fail(im.where(n), ": dilations other than 1 are not supported, got ",
             tupleText(im.attrInts(n, "dilations")));
    if (n.output_size() > 1 && !n.output(1).empty())
      fail(im.where(n), ": the Indices output is not supported");
    std::vector<int64_t> k = im.attrInts(n, "kernel_shape");
    std::string ceil = im.attrInt(n, "ceil_mode", 0) ? "True" : "False",
                includePad = im.attrInt(n, "count_include_pad", 0) ? "True" : "False";
    if (k.size() == 3) {
      std::vector<int64_t> s = windowAttr(im, n, "strides", 3);
      AttrDict a = {{"pool_size", tupleText(k)},
                    {"strides", tupleText(s)},
                    {"padding", volumePadding(windowPads(im, n, k, s, {1, 1, 1}))},
                    {"ceil_mode", ceil}};
      if (!isMax)
        a.push_back({"count_include_pad", includePad});
      return std::vector<NodeEntry>{
          im.op(n, isMax ? "max_pool3d" : "avg_pool3d", a, {im.input(n, 0)})};
    }
    bool oneD = k.size() == 1;
    if (oneD)
      k = {1, k[0]};
    need2d(im, n, k);
    std::vector<int64_t> s = lifted(im.attrInts(n, "strides"), oneD, 1);
    std::vector<int64_t> p = pads2d(im, n, k, s, {1, 1}, oneD);
    AttrDict a = {{"pool_size", tupleText(k)},
                  {"strides", tupleText(s)},
                  {"padding", tupleText(p)},
                  {"ceil_mode", ceil}};
    if (!isMax)
      a.push_back({"count_include_pad", includePad});
    if (!oneD)
      return std::vector<NodeEntry>{im.op(n, op, a, {im.input(n, 0)})};
    NodeEntry y = im.op(n, op, a, {liftTo2d(im, n, im.input(n, 0), "_2d")}, "_pool2d");
    return std::vector<NodeEntry>{im.op(n, "squeeze", {{"axis", "2"}}, {y})};
  };
}

Converter reduce(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axes", "keepdims", "noop_with_empty_axes"});
    std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
    if (axes.empty() && im.attrInt(n, "noop_with_empty_axes", 0))
      return std::vector<NodeEntry>{im.op(n, "copy", {}, {im.input(n, 0)})};
    return std::vector<NodeEntry>{im.op(
        n, op,
        {{"axis", tupleText(axes)}, {"keepdims", im.attrInt(n, "keepdims", 1) ? "True" : "False"}},
        {im.input(n, 0)})};
  };
}

// ReduceSumSquare, ReduceL2, ReduceLogSum, ReduceLogSumExp: an elementwise step before the
// sum ("square" or "exp") and one after it ("sqrt" or "log"), each named after the ONNX node.
Converter composedSum(const char *before, const char *after) {
  std::string pre = before ? before : "", post = after ? after : "";
  return [pre, post](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axes", "keepdims", "noop_with_empty_axes"});
    std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
    NodeEntry x = im.input(n, 0);
    // Opset 18: with no axes and noop_with_empty_axes the input passes through untouched
    // (not even squared: ONNX's reference returns the data as it is).
    if (axes.empty() && im.attrInt(n, "noop_with_empty_axes", 0))
      return std::vector<NodeEntry>{im.op(n, "copy", {}, {x})};
    if (pre == "square")
      x = im.op(n, "elemwise_mul", {}, {x, x}, "_square");
    else if (!pre.empty())
      x = im.op(n, pre, {}, {x}, "_" + pre);
    NodeEntry y = im.op(
        n, "sum",
        {{"axis", tupleText(axes)}, {"keepdims", im.attrInt(n, "keepdims", 1) ? "True" : "False"}},
        {x}, post.empty() ? "" : "_sum");
    if (!post.empty())
      y = im.op(n, post, {}, {y});
    return std::vector<NodeEntry>{y};
  };
}

// ConvTranspose: conv2d_transpose, whose padding is symmetric; asymmetric pads (given, or from
// output_shape or auto_pad SAME, which fix the output size instead) take the smaller side's
// padding there and a slice crops the rest.
std::vector<NodeEntry> convTranspose(Importer &im, const onnx::NodeProto &n) {
  im.only(n, {"kernel_shape", "strides", "pads", "dilations", "group", "output_padding", "auto_pad",
              "output_shape"});
  const Shape *w = im.knownShape(n, 1);
  if (!w || (w->size() != 4 && w->size() != 3))
    fail(im.where(n), ": the weight's shape must be known and 3-D or 4-D (an initializer or a "
                      "graph input)");
  // A 1-D one runs as a 2-D one on (N, C, 1, L), as Conv does.
  bool oneD = w->size() == 3;
  std::vector<int64_t> k = im.attrInts(n, "kernel_shape");
  if (k.empty())
    k = std::vector<int64_t>(w->begin() + 2, w->end());
  if (oneD && k.size() == 1)
    k = {1, k[0]};
  need2d(im, n, k);
  std::vector<int64_t> s = lifted(im.attrInts(n, "strides"), oneD, 1),
                       d = lifted(im.attrInts(n, "dilations"), oneD, 1),
                       op = lifted(im.attrInts(n, "output_padding"), oneD, 0),
                       out = im.attrInts(n, "output_shape");
  if (oneD && out.size() == 1)
    out = {1, out[0]};
  if (s.size() != 2 || d.size() != 2 || op.size() != 2)
    fail(im.where(n), ": strides, dilations and output_padding need 2 values each");
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  std::vector<int64_t> p; // (top, left, bottom, right)
  if (!out.empty() || same) {
    // The output size decides the total padding, split as ONNX's spec splits it: SAME_UPPER
    // puts the odd cell at the end, anything else at the start.
    Shape x = shapeNow(im, n, 0, oneD ? 3 : 4);
    if (oneD)
      x.insert(x.begin() + 2, 1);
    if (out.size() > 2)
      out.erase(out.begin(), out.end() - 2);
    if (out.empty())
      out = {x[2] * s[0], x[3] * s[1]};
    if (out.size() != 2)
      fail(im.where(n), ": output_shape needs the 2 spatial sizes, got ", tupleText(out));
    p.assign(4, 0);
    for (size_t i = 0; i < 2; ++i) {
      int64_t total = s[i] * (x[2 + i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - out[i];
      // Python's floor division, as ONNX's reference splits a negative total (an output larger
      // than the full convolution's) too.
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      p[i] = autoPad == "SAME_UPPER" ? half : total - half;
      p[i + 2] = total - p[i];
      // Cells past the full output's end are what output_padding adds; before its start there
      // are none to add.
      if (p[i] < 0)
        fail(im.where(n), ": output_shape ", tupleText(out),
             " would add cells before the convolution's output");
      if (p[i + 2] < 0) {
        op[i] -= p[i + 2];
        p[i + 2] = 0;
      }
    }
  } else {
    if (autoPad != "NOTSET" && autoPad != "VALID")
      fail(im.where(n), ": auto_pad ", autoPad,
           " is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER");
    p = pads2d(im, n, k, {1, 1}, {1, 1}, oneD);
  }
  int64_t group = im.attrInt(n, "group", 1);
  bool bias = im.hasInput(n, 2);
  std::vector<NodeEntry> ins = {im.input(n, 0), im.input(n, 1)};
  if (oneD)
    ins = {liftTo2d(im, n, ins[0], "_2d"), liftTo2d(im, n, ins[1], "_weight_2d")};
  if (bias)
    ins.push_back(im.input(n, 2));
  int64_t ph = std::min(p[0], p[2]), pw = std::min(p[1], p[3]);
  bool crop = p[0] != p[2] || p[1] != p[3];
  // ONNX's weight is (C_in, C_out / group, kh, kw), as conv2d_transpose's.
  NodeEntry y = im.op(n, "conv2d_transpose",
                      {{"channels", std::to_string((*w)[1] * group)},
                       {"kernel_size", tupleText(k)},
                       {"strides", tupleText(s)},
                       {"padding", tupleText({ph, pw})},
                       {"output_padding", tupleText(op)},
                       {"dilation", tupleText(d)},
                       {"groups", std::to_string(group)},
                       {"use_bias", bias ? "True" : "False"}},
                      ins,
                      crop   ? "_full"
                      : oneD ? "_2d_out"
                             : "");
  if (crop) {
    std::optional<Shape> full = im.inferredShape(y);
    if (!full)
      fail(im.where(n), ": the output's shape must be known to crop its asymmetric pads");
    y = im.op(n, "strided_slice",
              {{"begin", tupleText({p[0] - ph, p[1] - pw})},
               {"end", tupleText({(*full)[2] - (p[2] - ph), (*full)[3] - (p[3] - pw)})},
               {"axes", "(2, 3)"}},
              {y}, oneD ? "_cropped" : "");
  }
  if (oneD)
    y = im.op(n, "squeeze", {{"axis", "2"}}, {y});
  return {y};
}

Converter softmax(const char *op) {
  return [op](Importer &im, const onnx::NodeProto &n) {
    im.only(n, {"axis"});
    int64_t axis = im.attrInt(n, "axis", im.opset() >= 13 ? -1 : 1);
    // Before opset 13 the input was flattened to 2-D at `axis`; that equals a softmax over the
    // last axis only when `axis` is the last one, which InferShape confirms below.
    AttrDict a = {{"axis", std::to_string(im.opset() >= 13 ? axis : -1)}};
    NodeEntry e = im.op(n, op, a, {im.input(n, 0)});
    std::string notLast = im.where(n) + ": before opset 13 this softmax runs over the axes from " +
                          std::to_string(axis) + " on, flattened; only the last axis is supported";
    // A huge axis is out of range (axis + 1 overflowed; found by fuzzing); a negative one other
    // than -1 is not the last.
    if (im.opset() < 13 && axis > 1 << 20)
      fail(im.where(n), ": axis ", axis, " is out of range");
    if (im.opset() < 13 && axis < -1)
      fail(notLast);
    if (im.opset() < 13 && axis != -1)
      im.requireRank(e, 0, static_cast<size_t>(axis + 1), notLast);
    return std::vector<NodeEntry>{e};
  };
}

const std::map<std::string, Converter> &converters() {
  static const std::map<std::string, Converter> table = {
      {"Relu", unary("relu")},
      {"Sigmoid", unary("sigmoid")},
      {"Tanh", unary("tanh")},
      {"Exp", unary("exp")},
      {"Log", unary("log")},
      {"Sqrt", unary("sqrt")},
      {"Neg", unary("negative")},
      {"Identity", unary("copy")},
      {"Add", binary("broadcast_add")},
      {"Sub", binary("broadcast_sub")},
      {"Mul", binary("broadcast_mul")},
      {"Div", binary("broadcast_div")},
      {"Pow", binary("broadcast_pow")},
      {"Mod",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"fmod"});
         // fmod=0: the sign of the divisor (Python's %), integers only; fmod=1: C's fmod.
         const char *op = im.attrInt(n, "fmod", 0) ? "broadcast_mod" : "broadcast_floor_mod";
         return std::vector<NodeEntry>{im.op(n, op, {}, {im.input(n, 0), im.input(n, 1)})};
       }},
      {"Equal", binary("broadcast_equal")},
      {"Greater", binary("broadcast_greater")},
      {"Less", binary("broadcast_less")},
      {"GreaterOrEqual", binary("broadcast_greater_equal")},
      {"LessOrEqual", binary("broadcast_less_equal")},
      {"And", binary("logical_and")},
      {"Or", binary("logical_or")},
      {"Xor", binary("logical_xor")},
      {"Not", unary("logical_not")},
      {"Where",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {});
         return std::vector<NodeEntry>{im.op(
             n, "where", {},
             {im.broadcastInput(n, 0), im.broadcastInput(n, 1), im.broadcastInput(n, 2)})};
       }},
      {"Abs", unary("abs")},
      {"Sign", unary("sign")},
      {"Floor", unary("floor")},
      {"Ceil", unary("ceil")},
      {"Round", unary("round")},
      {"QuantizeLinear",
       [](Importer &im, const onnx::NodeProto &n) {
         // y = saturate(round(x / y_scale) + y_zero_point), halves to even, in y_zero_point's
         // type (uint8 without one). Opset 19's saturate is for float8 targets only.
         im.only(n, {"axis", "saturate"});
         Quantized q = quantizedType(im, n);
         NodeEntry x = im.input(n, 0);
         if (int dt = im.knownDType(n, 0); dt != kFloat32 && dt != kFloat64 && dt != -1)
           x = im.op(n, "cast", {{"dtype", "float32"}}, {x}, "_float");
         std::optional<NodeEntry> zero = zeroPointAsFloat(im, n);
         return std::vector<NodeEntry>{quantized(im, n, x, quantizationOperand(im, n, 1, "_scale"),
                                                 zero ? &*zero : nullptr, q)};
       }},
      {"DynamicQuantizeLinear",
       [](Importer &im, const onnx::NodeProto &n) {
         // uint8 with a scale and zero point from x's range stretched to hold 0: scale =
         // (max(0, max x) - min(0, min x)) / 255, zero point = saturate(round(-min / scale)).
         // The scale and zero point are rank 0 in ONNX: one element each here.
         im.only(n, {});
         NodeEntry x = im.input(n, 0);
         NodeEntry lo = im.op(n, "clip", {{"a_min", "-3.4e38"}, {"a_max", "0"}},
                              {im.op(n, "min", {}, {x}, "_min")}, "_low");
         NodeEntry hi = im.op(n, "clip", {{"a_min", "0"}, {"a_max", "3.4e38"}},
                              {im.op(n, "max", {}, {x}, "_max")}, "_high");
         NodeEntry scale = im.op(n, "__div_scalar__", {{"scalar", "255"}},
                                 {im.op(n, "broadcast_sub", {}, {hi, lo}, "_range")}, "_scale");
         Quantized u8{kUint8, 0, 255};
         NodeEntry zero = quantized(im, n, im.op(n, "negative", {}, {lo}, "_negated_low"), scale,
                                    nullptr, u8, "_zero_point");
         NodeEntry zeroFloat = im.op(n, "cast", {{"dtype", "float32"}}, {zero}, "_zero_float");
         return std::vector<NodeEntry>{quantized(im, n, x, scale, &zeroFloat, u8), scale, zero};
       }},
      {"DequantizeLinear",
       [](Importer &im, const onnx::NodeProto &n) {
         // y = (x - x_zero_point) * x_scale, in float32.
         im.only(n, {"axis"});
         NodeEntry y = im.op(n, "cast", {{"dtype", "float32"}}, {im.input(n, 0)}, "_float");
         if (std::optional<NodeEntry> zero = zeroPointAsFloat(im, n))
           y = im.op(n, "broadcast_sub", {}, {y, *zero}, "_centred");
         return std::vector<NodeEntry>{
             im.op(n, "broadcast_mul", {}, {y, quantizationOperand(im, n, 1, "_scale")})};
       }},
      {"Erf", unary("erf")},
      {"Sin", unary("sin")},
      {"Cos", unary("cos")},
      {"Tan", unary("tan")},
      {"Asin", unary("asin")},
      {"Acos", unary("acos")},
      {"Atan", unary("atan")},
      {"Sinh", unary("sinh")},
      {"Cosh", unary("cosh")},
      {"Asinh", unary("asinh")},
      {"Acosh", unary("acosh")},
      {"Atanh", unary("atanh")},
      {"Softsign", unary("softsign")},
      {"HardSwish", unary("hard_swish")},
      {"Mish", unary("mish")},
      {"IsNaN", unary("isnan")},
      {"Elu", unaryWith("elu", {{"alpha", "alpha", 1.0}})},
      {"Celu", unaryWith("celu", {{"alpha", "alpha", 1.0}})},
      {"ThresholdedRelu", unaryWith("thresholded_relu", {{"alpha", "alpha", 1.0}})},
      {"Selu", unaryWith("selu", {{"alpha", "alpha", 1.67326319217681884765625},
                                  {"gamma", "gamma", 1.05070102214813232421875}})},
      {"IsInf",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"detect_positive", "detect_negative"});
         AttrDict a = {{"detect_positive", im.attrInt(n, "detect_positive", 1) ? "True" : "False"},
                       {"detect_negative", im.attrInt(n, "detect_negative", 1) ? "True" : "False"}};
         return std::vector<NodeEntry>{im.op(n, "isinf", a, {im.input(n, 0)})};
       }},
      {"Gelu",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"approximate"});
         return std::vector<NodeEntry>{im.op(
             n, "gelu", {{"approximate", im.attrString(n, "approximate", "none")}}, {im.input(n, 0)})};
       }},
      {"PRelu",
       [](Importer &im, const onnx::NodeProto &n) {
         // x where x >= 0, slope * x elsewhere, the slope broadcast to x (ONNX's PRelu is
         // broadcast from the slope's side only; NNVM's prelu takes one channel axis): relu(x)
         // + slope * (x - relu(x)), which fuses into one kernel.
         im.only(n, {});
         NodeEntry x = im.input(n, 0), slope = im.input(n, 1);
         // Before opset 7 a slope of C values is per channel (axis 1), not broadcast from
         // the right: it gets unit axes for the ones after the channels.
         if (im.opset() < 7) {
           Shape xs = shapeNow(im, n, 0, 1), ss = shapeNow(im, n, 1, 1);
           if (ss.size() == 1 && ss[0] != 1)
             slope = alongChannels(im, n, slope, xs.size(), "_per_channel");
         }
         NodeEntry pos = im.op(n, "relu", {}, {x}, "_pos");
         NodeEntry neg = im.op(n, "elemwise_sub", {}, {x, pos}, "_neg");
         NodeEntry scaled = im.op(n, "broadcast_mul", {}, {neg, slope}, "_scaled");
         NodeEntry y = im.op(n, "broadcast_add", {}, {pos, scaled});
         return std::vector<NodeEntry>{y};
       }},
      {"Conv", conv},
      {"MaxPool", pool("max_pool2d", true)},
      {"AveragePool", pool("avg_pool2d", false)},
      {"GlobalAveragePool", unary("global_avg_pool2d")},
      {"GlobalMaxPool", unary("global_max_pool2d")},
      {"ReduceSum", reduce("sum")},
      {"ReduceMean", reduce("mean")},
      {"ReduceMax", reduce("max")},
      {"ReduceMin", reduce("min")},
      {"ReduceProd", reduce("prod")},
      {"ReduceSumSquare", composedSum("square", nullptr)},
      {"ReduceL2", composedSum("square", "sqrt")},
      {"ReduceLogSum", composedSum(nullptr, "log")},
      {"ReduceLogSumExp", composedSum("exp", "log")},
      {"ReduceL1", composedSum("abs", nullptr)},
      {"Gather", indexing("take")},
      {"DepthToSpace", depthSpace(true)},
      {"SpaceToDepth", depthSpace(false)},
      {"InstanceNormalization", instanceNorm},
      {"GroupNormalization", groupNorm},
      {"MeanVarianceNormalization", meanVarianceNorm},
      {"Hardmax", hardmax},
      {"Trilu", trilu},
      {"Einsum", einsum},
      {"Resize", resize},
      {"Upsample", resize},
      {"Tile",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {});
         return std::vector<NodeEntry>{im.op(
             n, "tile", {{"reps", tupleText(im.constInts(n, 1, "repeats"))}}, {im.input(n, 0)})};
       }},
      {"CastLike",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"saturate"});
         int dt = im.knownDType(n, 1);
         if (dt < 0)
           fail(im.where(n), ": the dtype of input 1 must be known (a graph input or initializer)");
         return std::vector<NodeEntry>{
             im.op(n, "cast", {{"dtype", std::string(dtypeName(dt))}}, {im.input(n, 0)})};
       }},
      {"ConstantOfShape",
       [](Importer &im, const onnx::NodeProto &n) {
         // A constant: the shape must be known now, and the result becomes a param.
         im.only(n, {"value"});
         Shape shape;
         for (int64_t d : im.constInts(n, 0, "shape"))
           shape.push_back(d);
         Tensor value(Shape{1}, kFloat32);
         if (const auto *a = im.attr(n, "value"))
           value = toTensor(a->t(), im.where(n) + ": value");
         if (value.data.size() != 1)
           fail(im.where(n), ": value must hold one element");
         for (int64_t d : shape)
           if (d <= 0)
             fail(im.where(n), ": shape ", shapeToList(shape),
                  " must have positive dimensions (0 means unknown here)");
         requireConstantSize(im, n, shape);
         Tensor t(shape, value.dtype);
         std::fill(t.data.begin(), t.data.end(), value.data[0]);
         return im.constantOutput(n, std::move(t));
       }},
      {"Expand",
       [](Importer &im, const onnx::NodeProto &n) {
         // NumPy's two-way broadcasting of x and the shape: x reshaped to the result's rank
         // (leading 1s) and broadcast_to the result — which needs x's shape now.
         im.only(n, {});
         NodeEntry x = im.input(n, 0);
         std::optional<Shape> xs = im.inferredShape(x);
         if (!xs)
           fail(im.where(n), ": the input's shape must be known");
         std::vector<int64_t> want = im.constInts(n, 1, "shape");
         size_t rank = std::max(xs->size(), want.size());
         Shape a(rank - xs->size(), 1), b(rank - want.size(), 1), out(rank);
         a.insert(a.end(), xs->begin(), xs->end());
         b.insert(b.end(), want.begin(), want.end());
         for (size_t d = 0; d < rank; ++d) {
           if (a[d] != b[d] && a[d] != 1 && b[d] != 1)
             fail(im.where(n), ": cannot broadcast ", shapeToList(*xs), " with ", tupleText(want));
           out[d] = a[d] == 1 ? b[d] : a[d];
         }
         if (a.size() != xs->size())
           x = im.op(n, "reshape", {{"shape", tupleText(a)}}, {x}, "_rank");
         return std::vector<NodeEntry>{im.op(n, "broadcast_to", {{"shape", tupleText(out)}}, {x})};
       }},
      {"Slice",
       [](Importer &im, const onnx::NodeProto &n) {
         // Opset 10 moved starts, ends, axes and steps from attributes to (constant) inputs.
         im.only(n, {"starts", "ends", "axes"});
         std::vector<int64_t> starts = im.intsInputOrAttr(n, 1, "starts"),
                              ends = im.intsInputOrAttr(n, 2, "ends"),
                              axes = im.intsInputOrAttr(n, 3, "axes"),
                              steps = im.hasInput(n, 4) ? im.constInts(n, 4, "steps")
                                                        : std::vector<int64_t>{};
         return std::vector<NodeEntry>{im.op(n, "strided_slice",
                                             {{"begin", tupleText(starts)},
                                              {"end", tupleText(ends)},
                                              {"strides", tupleText(steps)},
                                              {"axes", tupleText(axes)}},
                                             {im.input(n, 0)})};
       }},
      {"GatherElements", indexing("gather_elements")},
      {"NegativeLogLikelihoodLoss", nllLossOf(false)},
      {"CumSum", cumSum},
      {"OneHot", oneHot},
      {"TopK", topK},
      {"GatherND",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"batch_dims"});
         return std::vector<NodeEntry>{
             im.op(n, "gather_nd", {{"batch_dims", std::to_string(im.attrInt(n, "batch_dims", 0))}},
                   {im.input(n, 0), im.input(n, 1)})};
       }},
      {"ScatterElements", scatter(false)},
      {"Scatter", scatter(false)},
      {"ScatterND", scatter(true)},
      {"EyeLike", eyeLike},
      {"Shrink", shrink},
      {"Range", range},
      {"HannWindow", window(0.5, 0.5, 0)},
      {"HammingWindow", window(25.0 / 46.0, 21.0 / 46.0, 0)},
      {"BlackmanWindow", window(0.42, 0.5, 0.08)},
      {"LRN", lrn},
      {"SoftmaxCrossEntropyLoss", nllLossOf(true)},
      {"LayerNormalization",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"axis", "epsilon", "stash_type"});
         if (im.attrInt(n, "stash_type", 1) != 1)
           fail(im.where(n), ": stash_type ", im.attrInt(n, "stash_type", 1),
                " is not supported (statistics are computed in the input's type)");
         NodeEntry scale = im.input(n, 1);
         // Without B, a zero bias of the scale's shape.
         NodeEntry bias = im.hasInput(n, 2) ? im.input(n, 2)
                                            : im.op(n, "zeros_like", {}, {scale}, "_zero_bias");
         AttrDict a = {{"axis", std::to_string(im.attrInt(n, "axis", -1))},
                       {"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}};
         return im.opOutputs(n, "layer_norm", a, {im.input(n, 0), scale, bias});
       }},
      {"ArgMax", argReduce("argmax")},
      {"ArgMin", argReduce("argmin")},
      {"Shape",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"start", "end"});
         AttrDict a = {{"start", std::to_string(im.attrInt(n, "start", 0))},
                       {"end", std::to_string(im.attrInt(n, "end", INT32_MAX))}};
         NodeEntry e = im.op(n, "shape_of", a, {im.input(n, 0)});
         // Known now (the usual case) it becomes a param, so the chains after it fold too.
         im.bindOutput(n, 0, e);
         if (im.fold(n.output(0)))
           return std::vector<NodeEntry>{im.valueOf(n.output(0))};
         return std::vector<NodeEntry>{e};
       }},
      {"ConvTranspose", convTranspose},
      {"Reciprocal",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {});
         return std::vector<NodeEntry>{
             im.op(n, "__rdiv_scalar__", {{"scalar", "1"}}, {im.input(n, 0)})};
       }},
      {"Softplus",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {});
         NodeEntry e = im.op(n, "exp", {}, {im.input(n, 0)}, "_exp");
         e = im.op(n, "__add_scalar__", {{"scalar", "1"}}, {e}, "_plus1");
         return std::vector<NodeEntry>{im.op(n, "log", {}, {e})};
       }},
      {"HardSigmoid",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"alpha", "beta"});
         NodeEntry e =
             im.op(n, "__mul_scalar__", {{"scalar", floatText(im.attrFloat(n, "alpha", 0.2))}},
                   {im.input(n, 0)}, "_alpha");
         e = im.op(n, "__add_scalar__", {{"scalar", floatText(im.attrFloat(n, "beta", 0.5))}}, {e},
                   "_beta");
         return std::vector<NodeEntry>{im.op(n, "clip", {{"a_min", "0"}, {"a_max", "1"}}, {e})};
       }},
      {"Softmax", softmax("softmax")},
      {"LogSoftmax", softmax("log_softmax")},
      {"Sum", variadic("broadcast_add")},
      {"Max", variadic("broadcast_max")},
      {"Min", variadic("broadcast_min")},
      {"Mean", variadic("broadcast_add", true)},
      {"Dropout",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"ratio", "seed", "is_test"});
         // Inference: the identity. Opset 12's training_mode input, when given, must be a
         // constant false (training drops elements at random).
         if (im.hasInput(n, 2)) {
           const Tensor *training = im.constant(n, 2);
           if (!training || training->data.size() != 1)
             fail(im.where(n), ": training_mode must be a constant scalar");
           if (training->data[0] != 0)
             fail(im.where(n), ": training mode is not supported (inference only)");
         }
         std::vector<NodeEntry> outs = {im.op(n, "copy", {}, {im.input(n, 0)})};
         // The mask of what was kept: everything, in inference.
         if (n.output_size() > 1 && !n.output(1).empty())
           outs.push_back(im.op(n, "cast", {{"dtype", "bool"}},
                                {im.op(n, "ones_like", {}, {im.input(n, 0)}, "_ones")}, "_mask"));
         return outs;
       }},
      {"LeakyRelu",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"alpha"});
         return std::vector<NodeEntry>{im.op(n, "leaky_relu",
                                             {{"alpha", floatText(im.attrFloat(n, "alpha", 0.01))}},
                                             {im.input(n, 0)})};
       }},
      {"Clip",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"min", "max"});
         double lo = im.attrFloat(n, "min", -3.4028234663852886e38),
                hi = im.attrFloat(n, "max", 3.4028234663852886e38);
         if (const Tensor *t = im.constant(n, 1))
           lo = t->data.at(0);
         else if (im.hasInput(n, 1))
           fail(im.where(n), ": min must be a constant");
         if (const Tensor *t = im.constant(n, 2))
           hi = t->data.at(0);
         else if (im.hasInput(n, 2))
           fail(im.where(n), ": max must be a constant");
         return std::vector<NodeEntry>{im.op(
             n, "clip", {{"a_min", floatText(lo)}, {"a_max", floatText(hi)}}, {im.input(n, 0)})};
       }},
      {"BatchNormalization",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"epsilon", "momentum", "spatial", "is_test", "consumed_inputs",
                     "training_mode"});
         if (im.attrInt(n, "training_mode", 0))
           return batchNormTraining(im, n);
         // Opset 1-6's is_test: 1 is inference (what this conversion is), 0 training.
         if (n.output_size() > 1 || im.attrInt(n, "is_test", 1) == 0)
           fail(im.where(n), ": training-mode outputs are not supported");
         return std::vector<NodeEntry>{im.op(
             n, "batch_norm", {{"epsilon", floatText(im.attrFloat(n, "epsilon", 1e-5))}},
             {im.input(n, 0), im.input(n, 1), im.input(n, 2), im.input(n, 3), im.input(n, 4)})};
       }},
      {"Gemm",
       [](Importer &im, const onnx::NodeProto &n) {
         // broadcast (before opset 7): C broadcasts, as it always does since.
         im.only(n, {"alpha", "beta", "transA", "transB", "broadcast"});
         double alpha = im.attrFloat(n, "alpha", 1), beta = im.attrFloat(n, "beta", 1);
         bool hasC = im.hasInput(n, 2);
         // The last node of the chain takes the ONNX node's name.
         bool last = !hasC && alpha == 1;
         NodeEntry y = im.op(n, "matmul",
                             {{"transpose_a", im.attrInt(n, "transA", 0) ? "True" : "False"},
                              {"transpose_b", im.attrInt(n, "transB", 0) ? "True" : "False"}},
                             {im.input(n, 0), im.input(n, 1)}, last ? "" : "_matmul");
         if (alpha != 1)
           y = im.op(n, "__mul_scalar__", {{"scalar", floatText(alpha)}}, {y},
                     hasC ? "_alpha" : "");
         if (!hasC)
           return std::vector<NodeEntry>{y};
         NodeEntry c = im.broadcastInput(n, 2);
         if (beta != 1)
           c = im.op(n, "__mul_scalar__", {{"scalar", floatText(beta)}}, {c}, "_beta");
         return std::vector<NodeEntry>{im.op(n, "broadcast_add", {}, {y, c})};
       }},
      {"MatMul",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {});
         NodeEntry a = im.input(n, 0), b = im.input(n, 1);
         std::optional<Shape> sa = im.inferredShape(a), sb = im.inferredShape(b);
         // A product with a constant matrix (a linear layer's weight, as PyTorch exports it) is
         // dense over the last axis, as Relay's importer makes it, with the matrix transposed
         // here: dense's epilogue (the bias add, an activation) fuses into it.
         if (const Tensor *w = im.constant(n, 1); w && w->shape.size() == 2 && sa && sa->size() >= 2) {
           int64_t k = w->shape[0], units = w->shape[1];
           Tensor t({units, k}, w->dtype);
           for (int64_t i = 0; i < k; ++i)
             for (int64_t j = 0; j < units; ++j)
               t.data[j * k + i] = w->data[i * units + j];
           NodeEntry wt = im.constantParam(n, "_weight", std::move(t));
           return std::vector<NodeEntry>{im.op(
               n, "dense", {{"units", std::to_string(units)}, {"use_bias", "False"}}, {a, wt})};
         }
         // N-D: batch_matmul, the batch axes broadcast; a 1-D operand gets the unit axis NumPy
         // gives it, removed from the result.
         if (sa && sb && (sa->size() > 2 || sb->size() > 2)) {
           bool va = sa->size() == 1, vb = sb->size() == 1;
           if (va)
             a = im.op(n, "expand_dims", {{"axis", "0"}}, {a}, "_row");
           if (vb)
             b = im.op(n, "expand_dims", {{"axis", "1"}}, {b}, "_column");
           if (!va && !vb)
             return std::vector<NodeEntry>{im.op(n, "batch_matmul", {}, {a, b})};
           NodeEntry p = im.op(n, "batch_matmul", {}, {a, b}, "_product");
           return std::vector<NodeEntry>{
               im.op(n, "squeeze", {{"axis", va ? "(-2,)" : "(-1,)"}}, {p})};
         }
         NodeEntry e = im.op(n, "matmul", {}, {a, b});
         for (uint32_t k : {0u, 1u})
           im.requireRank(e, k, 2, im.where(n) + ": 1-D operands are supported only with N-D ones");
         return std::vector<NodeEntry>{e};
       }},
      {"Concat",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"axis"});
         std::vector<NodeEntry> ins;
         for (int k = 0; k < n.input_size(); ++k)
           ins.push_back(im.input(n, k));
         return std::vector<NodeEntry>{
             im.op(n, "concatenate", {{"axis", std::to_string(im.attrInt(n, "axis", 1))}}, ins)};
       }},
      {"Flatten",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"axis"});
         int64_t axis = im.attrInt(n, "axis", 1);
         if (axis == 1)
           return std::vector<NodeEntry>{im.op(n, "flatten", {}, {im.input(n, 0)})};
         // Other axes: a reshape to (prod(dims before axis), prod(dims from axis on)), which
         // needs the input's shape now.
         const Shape *x = im.knownShape(n, 0);
         if (!x)
           fail(im.where(n), ": axis ", axis, " needs the input's shape (a graph input)");
         int64_t rank = static_cast<int64_t>(x->size());
         if (axis < 0)
           axis += rank;
         if (axis < 0 || axis > rank)
           fail(im.where(n), ": axis ", im.attrInt(n, "axis", 1), " is out of range for rank ",
                rank);
         // Checked products: the declared shape can hold any dimensions.
         int64_t outer = numElements(Shape(x->begin(), x->begin() + axis)),
                 inner = numElements(Shape(x->begin() + axis, x->end()));
         return std::vector<NodeEntry>{
             im.op(n, "reshape", {{"shape", tupleText({outer, inner})}}, {im.input(n, 0)})};
       }},
      {"Reshape",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"shape", "allowzero"});
         if (im.attrInt(n, "allowzero", 0))
           fail(im.where(n), ": allowzero is not supported");
         std::vector<int64_t> s = im.intsInputOrAttr(n, 1, "shape");
         return std::vector<NodeEntry>{
             im.op(n, "reshape", {{"shape", tupleText(s)}}, {im.input(n, 0)})};
       }},
      {"Transpose",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"perm"});
         std::vector<int64_t> p = im.attrInts(n, "perm");
         AttrDict a;
         if (!p.empty())
           a.push_back({"axes", tupleText(p)});
         return std::vector<NodeEntry>{im.op(n, "transpose", a, {im.input(n, 0)})};
       }},
      {"Squeeze",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"axes"});
         std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
         AttrDict a;
         if (!axes.empty())
           a.push_back({"axis", tupleText(axes)});
         return std::vector<NodeEntry>{im.op(n, "squeeze", a, {im.input(n, 0)})};
       }},
      {"Unsqueeze",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"axes"});
         std::vector<int64_t> axes = im.intsInputOrAttr(n, 1, "axes");
         std::sort(axes.begin(), axes.end());
         if (!axes.empty() && axes[0] < 0)
           fail(im.where(n), ": negative axes are not supported");
         // A scalar constant (a dimension read from a shape) becomes a tensor of ones' shape.
         if (const Tensor *c = im.constant(n, 0); c && c->shape.empty()) {
           Tensor t = *c;
           t.shape = Shape(axes.size(), 1);
           return std::vector<NodeEntry>{im.constantParam(n, "", std::move(t))};
         }
         NodeEntry x = im.input(n, 0);
         // Inserting in increasing order gives each axis its final position.
         for (size_t i = 0; i < axes.size(); ++i)
           x = im.op(n, "expand_dims", {{"axis", std::to_string(axes[i])}}, {x},
                     i + 1 < axes.size() ? "_" + std::to_string(i) : "");
         return std::vector<NodeEntry>{x};
       }},
      {"Split",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"axis", "split", "num_outputs"});
         std::vector<int64_t> sizes = im.intsInputOrAttr(n, 1, "split");
         std::string sections;
         if (const auto *a = im.attr(n, "num_outputs"); a && sizes.empty()) {
           // Opset 18: num_outputs parts of ceil(d / num_outputs), the last one smaller.
           int64_t parts = a->i();
           Shape d = shapeNow(im, n, 0, 1);
           int64_t len = d[static_cast<size_t>(
               axisOf(im, n, im.attrInt(n, "axis", 0), static_cast<int64_t>(d.size())))];
           if (parts <= 0 || parts > len || parts != n.output_size())
             fail(im.where(n), ": num_outputs ", parts, " must be the number of outputs (",
                  n.output_size(), ") and at most the axis's length ", len);
           int64_t each = (len + parts - 1) / parts;
           if ((parts - 1) * each >= len)
             fail(im.where(n), ": ", len, " cannot split into ", parts, " parts of ", each,
                  " and a smaller last one");
           sizes.assign(static_cast<size_t>(parts - 1), each);
           sizes.push_back(len - (parts - 1) * each);
         }
         if (sizes.empty()) {
           sections = std::to_string(n.output_size());
         } else {
           std::vector<int64_t> at;
           int64_t sum = 0;
           for (size_t i = 0; i + 1 < sizes.size(); ++i)
             at.push_back(sum += sizes[i]);
           sections = tupleText(at);
         }
         return im.opOutputs(n, "split",
                             {{"indices_or_sections", sections},
                              {"axis", std::to_string(im.attrInt(n, "axis", 0))}},
                             {im.input(n, 0)});
       }},
      {"Pad",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"mode", "pads", "value"});
         std::string mode = im.attrString(n, "mode", "constant");
         if (mode != "constant" && mode != "edge" && mode != "reflect")
           fail(im.where(n), ": mode ", mode, " is not supported (constant, edge and reflect are)");
         std::vector<int64_t> p = im.intsInputOrAttr(n, 1, "pads");
         if (im.hasInput(n, 3)) {
           // Opset 18: the pads are for these axes only (begins, then ends); the others get 0.
           std::vector<int64_t> axes = im.constInts(n, 3, "axes");
           Shape d = shapeNow(im, n, 0, 1);
           auto rank = static_cast<int64_t>(d.size());
           if (p.size() != 2 * axes.size())
             fail(im.where(n), ": pads has ", p.size(), " values for ", axes.size(),
                  " axes (it needs two per axis)");
           std::vector<int64_t> full(2 * d.size(), 0), at = distinctAxes(im, n, axes, rank);
           for (size_t i = 0; i < at.size(); ++i) {
             full[static_cast<size_t>(at[i])] = p[i];
             full[static_cast<size_t>(at[i] + rank)] = p[i + at.size()];
           }
           p = full;
         }
         double value = im.attrFloat(n, "value", 0);
         if (const Tensor *t = im.constant(n, 2))
           value = t->data.at(0);
         size_t nd = p.size() / 2;
         std::string width = "(";
         for (size_t d = 0; d < nd; ++d)
           width +=
               (d ? ", (" : "(") + std::to_string(p[d]) + ", " + std::to_string(p[d + nd]) + ")";
         width += nd == 1 ? ",)" : ")";
         AttrDict a = {{"pad_width", width}, {"pad_value", floatText(value)}};
         if (mode != "constant")
           a.push_back({"pad_mode", mode});
         return std::vector<NodeEntry>{im.op(n, "pad", a, {im.input(n, 0)})};
       }},
      {"Size",
       [](Importer &im, const onnx::NodeProto &n) {
         // The element count, a scalar known once the input's shape is.
         im.only(n, {});
         Tensor count(Shape{}, kInt64);
         count.data = {static_cast<double>(checkedNumElements(shapeNow(im, n, 0, 1)))};
         return im.constantOutput(n, std::move(count));
       }},
      {"Cast",
       [](Importer &im, const onnx::NodeProto &n) {
         im.only(n, {"to", "saturate"}); // saturate (opset 19) is for float8 targets only
         int dt = dtypeOf(static_cast<int32_t>(im.attrInt(n, "to", 1)), im.where(n));
         // A constant scalar (an epsilon cast to the input's type) stays one, converted now.
         if (const Tensor *t = im.constant(n, 0); t && t->shape.empty()) {
           Tensor cast(Shape{}, dt);
           cast.data = {roundToDType(t->data.at(0), dt)};
           return im.constantOutput(n, std::move(cast));
         }
         return std::vector<NodeEntry>{
             im.op(n, "cast", {{"dtype", std::string(dtypeName(dt))}}, {im.input(n, 0)})};
       }},
      {"Constant",
       [](Importer &im, const onnx::NodeProto &n) {
         // A tensor, or (opset 12) a float or int64 scalar or list.
         im.only(n, {"value", "value_float", "value_floats", "value_int", "value_ints"});
         if (n.attribute_size() != 1)
           fail(im.where(n), ": needs exactly one of value, value_float, value_floats, "
                             "value_int, value_ints");
         const onnx::AttributeProto &a = n.attribute(0);
         if (a.name() == "value") {
           im.addParam(n.output(0), toTensor(a.t(), im.where(n)));
           return std::vector<NodeEntry>{}; // the output is now a param
         }
         bool isFloat = a.name().rfind("value_float", 0) == 0;
         bool list = a.name().back() == 's';
         std::vector<double> v;
         if (!list)
           v = {isFloat ? static_cast<double>(a.f()) : static_cast<double>(a.i())};
         else if (isFloat)
           v.assign(a.floats().begin(), a.floats().end());
         else
           v.assign(a.ints().begin(), a.ints().end());
         if (list && v.empty())
           fail(im.where(n), ": ", a.name(), " is empty");
         Tensor t(list ? Shape{static_cast<int64_t>(v.size())} : Shape{},
                  isFloat ? kFloat32 : kInt64);
         t.data = std::move(v);
         if (isFloat)
           for (double &x : t.data)
             x = roundToDType(x, kFloat32);
         im.addParam(n.output(0), std::move(t));
         return std::vector<NodeEntry>{};
       }},
  };
  return table;
}

} // namespace

OnnxModel importOnnx(const std::string &path, const DimSizes &dims) {
  return importOnnxBytes(readFile(path), path, dims);
}

OnnxModel importOnnxBytes(const std::string &bytes, const std::string &path, const DimSizes &dims) {
  registerAllOps();
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes))
    fail(path, ": not an ONNX model (the protobuf does not parse)");
  if (!m.has_graph())
    fail(path, ": not an ONNX model (it has no graph)");
  for (const auto &o : m.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() > kNewestOpset)
      fail(path, ": opset ", o.version(), " is newer than this importer knows (up to ",
           kNewestOpset, ")");
  return Importer(m, path, dims).run();
}

Tensor parseTensorProto(const std::string &bytes, const std::string &source) {
  onnx::TensorProto t;
  if (!t.ParseFromString(bytes))
    fail(source, ": not an ONNX TensorProto file");
  return toTensor(t, source);
}

Tensor readTensorProto(const std::string &path) { return parseTensorProto(readFile(path), path); }

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> v;
  for (const auto &[k, f] : converters())
    v.push_back(k);
  return v;
}

} // namespace loupe::frontend
