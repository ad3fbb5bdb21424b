// Importer: an ONNX model read with protobuf (Debian's libonnx) and converted node by node,
// each operator by its converter in frontend/onnx/'s family files.
#include "frontend/onnx/Importer.h"

#include "core/DType.h"
#include "core/Error.h"
#include "core/File.h"
#include "core/Interpreter.h"
#include "core/Memory.h"
#include "core/Op.h"
#include "core/Shape.h"
#include "frontend/onnx/Converters.h"
#include "frontend/onnx/Tensors.h"
#include "passes/Pass.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>

namespace loupe::frontend {

namespace {

// The newest ai.onnx opset whose operator changes the converters know (opset 21, ONNX 1.16:
// PyTorch's exporters write 17 and 18). Newer models are refused rather than misread.
constexpr int64_t kNewestOpset = 21;

} // namespace

Importer::Importer(onnx::ModelProto &m, std::string path, const DimSizes &dims)
    : model_(m), path_(std::move(path)), dims_(dims) {
  for (const auto &o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset_ = o.version();
}

OnnxModel Importer::run() {
  const onnx::GraphProto &g = model_.graph();
  // All initializers at once, before the first is decoded (held in their own dtype); a
  // malformed one is left for its own decoding to name.
  double total = 0, bytes = 0;
  for (const auto &init : g.initializer()) {
    try {
      double n =
          static_cast<double>(checkedNumElements(Shape(init.dims().begin(), init.dims().end())));
      total += n;
      bytes += n * static_cast<double>(dtypeBytes(dtypeOf(init.data_type(), "")));
    } catch (const Error &) {
    }
  }
  requireMemory(path_ + ": loading its initializers", bytes,
                cat(static_cast<int64_t>(total), " values"));
  // Each initializer is stored in its own dtype as it is decoded and its bytes in the model
  // released, so a model is held about once, not twice, while it loads (and never as doubles).
  for (onnx::TensorProto &init : *model_.mutable_graph()->mutable_initializer()) {
    addParam(init.name(), toTensor(init, path_ + ": initializer " + init.name()));
    std::string().swap(*init.mutable_raw_data());
    init.clear_float_data();
    init.clear_double_data();
    init.clear_int32_data();
    init.clear_int64_data();
    init.clear_uint64_data();
  }
  for (const auto &in : g.input()) {
    if (values_.count(in.name()) || scalars_.count(in.name()))
      continue; // an initializer listed as an input too (older exporters did)
    const auto &tt = in.type().tensor_type();
    Shape shape;
    SymDims dims;
    for (const auto &d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        dims.push_back(d.dim_value());
        continue;
      }
      if (d.dim_param().empty())
        fail(path_, ": input ", in.name(), " has a dimension of unknown size");
      usedDims_.insert(d.dim_param());
      auto size = dims_.find(d.dim_param());
      if (size != dims_.end()) {
        dims.push_back(size->second);
        continue;
      }
      // Kept as a size symbol: the graph is symbolic, its sizes given at run time.
      if (!isSymbolName(d.dim_param()))
        fail(path_, ": input ", in.name(), " has a symbolic dimension '", d.dim_param(),
             "', which is no size symbol's name (a letter or _, then letters, digits, _); give "
             "its size (:load FILE ",
             d.dim_param(), "=N)");
      dims.push_back(SymExpr::symbol(d.dim_param()));
    }
    shape = Shape::symbolic(dims);
    // A scalar input is a variable of shape (): any op that takes scalars reads it.
    if (shape.isScalar()) {
      shape = Shape::scalar();
      scalarInputs_.insert(in.name());
      out_.scalarInputs.push_back(in.name());
    }
    int dt = dtypeOf(tt.elem_type(), path_ + ": input " + in.name());
    declared_[in.name()] = shape;
    out_.inputDTypes[in.name()] = dt;
    values_[in.name()] = {
        makeVariable(in.name(), {{"shape", shapeToTuple(shape)}, {"dtype", std::to_string(dt)}}), 0,
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
  // How many node inputs still read each param. A param whose readers are all converted and
  // that no node of the graph reads as it is (a MatMul's weight, which the graph reads
  // transposed, made from it) is released then, not at the end: a BERT-sized export held both
  // forms of its 302 MB of matrices at once while it loaded. Not with subgraphs (Loop, If), whose
  // nodes read the outer graph's values by name.
  std::map<std::string, int> readers;
  bool subgraphs = false;
  for (const onnx::NodeProto &n : g.node()) {
    for (const std::string &in : n.input())
      if (out_.params.count(in))
        ++readers[in];
    for (const onnx::AttributeProto &a : n.attribute())
      subgraphs |= a.has_g() || a.graphs_size() > 0;
  }
  for (const auto &o : g.output())
    ++readers[o.name()]; // never released
  const auto &table = converters();
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &n = g.node(i);
    // Nodes are named by their name or first named output (found by fuzzing: a node with
    // neither).
    if (n.name().empty() && std::all_of(n.output().begin(), n.output().end(),
                                        [](const std::string &o) { return o.empty(); }))
      fail(path_, ": node ", i, " (", n.op_type(), ") has no name and no named output");
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      fail(where(n), ": operator domain '", n.domain(), "' is not supported");
    auto it = table.find(n.op_type());
    if (it == table.end())
      fail(where(n), ": operator ", n.op_type(), " is not supported");
    if (!symValues_.empty() || !usedDims_.empty())
      if (foldSymbolic(n)) {
        loaded_.clear();
        continue;
      }
    std::vector<NodeEntry> outs = it->second(*this, n);
    loaded_.clear(); // the params the conversion read as values, held only while it ran
    for (int k = 0; k < n.output_size() && k < static_cast<int>(outs.size()); ++k)
      if (!n.output(k).empty())
        values_[n.output(k)] = outs[k];
    for (const std::string &in : n.input()) {
      auto r = readers.find(in);
      if (subgraphs || r == readers.end() || --r->second > 0)
        continue;
      // values_ holds the param's variable; any node made from it as a value holds it too.
      if (auto v = values_.find(in); v != values_.end() && v->second.node.use_count() == 1)
        out_.params.erase(in);
    }
  }
  std::vector<NodeEntry> heads;
  std::vector<size_t> declaredScalars;
  for (const auto &o : g.output()) {
    // A reduction to a scalar is (1,) here (NNVM's rule): a declared rank-0 output is that
    // one element (checked once shapes are known).
    const auto &ot = o.type().tensor_type();
    if (ot.has_shape() && ot.shape().dim_size() == 0)
      declaredScalars.push_back(heads.size());
    auto it = values_.find(o.name());
    // A scalar constant (Size of a known shape) as an output: a param of shape ().
    if (it == values_.end() && scalars_.count(o.name()))
      it = values_.find(scalarParamOf(o.name()));
    if (it == values_.end() && isEmpty(o.name()))
      fail(path_, ": graph output ", o.name(),
           " has no elements (a dimension of size 0), which static shapes cannot hold");
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
  for (size_t k : declaredScalars) {
    const Shape &s = shaped.attr("shape")->shapes[idx.entryId(idx.heads[k])];
    if (s.isScalar())
      continue;
    if (numElements(s) != 1)
      fail(path_, ": output ", g.output(static_cast<int>(k)).name(),
           " is declared a scalar (rank 0) but computes shape ", shapeToTuple(s));
    out_.scalarOutputs.push_back(k);
  }
  // Params the graph does not read are left out.
  std::set<std::string> used;
  for (uint32_t nid : out_.graph.index().argNodes)
    used.insert(out_.graph.index().nodes[nid].node->name);
  for (auto it = out_.params.begin(); it != out_.params.end();)
    it = used.count(it->first) ? std::next(it) : out_.params.erase(it);
  return std::move(out_);
}

std::string Importer::where(const onnx::NodeProto &n) const {
  return path_ + ": node " + nameOf(n) + " (" + n.op_type() + ")";
}

void Importer::bindOutput(const onnx::NodeProto &n, int k, const NodeEntry &e) {
  if (n.output_size() > k && !n.output(k).empty())
    values_[n.output(k)] = e;
}

std::string Importer::nameOf(const onnx::NodeProto &n, const std::string &suffix) const {
  if (!n.name().empty())
    return n.name() + suffix;
  for (const std::string &o : n.output())
    if (!o.empty())
      return o + suffix;
  return suffix; // not reached: run() refuses a node with neither
}

bool Importer::hasInput(const onnx::NodeProto &n, int k) const {
  return n.input_size() > k && !n.input(k).empty();
}

NodeEntry Importer::input(const onnx::NodeProto &n, int k) {
  if (!hasInput(n, k))
    fail(where(n), ": input ", k, " is missing");
  if (isEmpty(n.input(k)))
    fail(where(n), ": input ", k, " ('", n.input(k),
         "') has no elements (a dimension of size 0), which static shapes cannot hold");
  auto it = values_.find(n.input(k));
  // A scalar constant read as a value of the graph: a param of shape (). An op that takes no
  // scalars says so when shapes are inferred.
  if (it == values_.end() && scalars_.count(n.input(k)))
    it = values_.find(scalarParamOf(n.input(k)));
  if (it == values_.end() && symValues_.count(n.input(k)))
    fail(where(n), ": input '", n.input(k), "' is a size computed from size symbols (",
         symValueText(symValues_.at(n.input(k))), "), which ", n.op_type(),
         " cannot read as a tensor; give the sizes (:load FILE SYMBOL=N)");
  if (it == values_.end())
    fail(where(n), ": input '", n.input(k), "' is not defined before it");
  return it->second;
}

NodeEntry Importer::broadcastInput(const onnx::NodeProto &n, int k) {
  auto s = hasInput(n, k) ? scalars_.find(n.input(k)) : scalars_.end();
  if (s == scalars_.end())
    return input(n, k);
  // Every operand a scalar makes a scalar result: the scalars are then read as params of
  // shape () (input()); beside a tensor, a scalar constant is its one element as (1,). A value
  // computed from scalars (swin's window padding: (7 - 56 % 7) % 7) is a scalar operand too.
  bool tensorOperand = false;
  for (int i = 0; i < n.input_size() && !tensorOperand; ++i) {
    if (!hasInput(n, i) || scalars_.count(n.input(i)) || scalarInputs_.count(n.input(i)))
      continue;
    auto v = values_.find(n.input(i));
    std::optional<Shape> shape = v == values_.end() ? std::nullopt : inferredShape(v->second);
    tensorOperand = !shape || !shape->empty();
  }
  if (!tensorOperand)
    return input(n, k);
  return values_.at(oneElementOf(s->first));
}

std::string Importer::scalarParamOf(const std::string &scalar) {
  std::string name = scalar + "_scalar";
  if (!values_.count(name)) {
    Tensor t = scalars_.at(scalar);
    t.shape = Shape::scalar();
    bindParam(name, std::move(t));
  }
  return name;
}

std::string Importer::oneElementOf(const std::string &scalar) {
  std::string name = scalar + "_as_1d";
  if (!values_.count(name)) {
    Tensor t = scalars_.at(scalar);
    t.shape = {1};
    addParam(name, std::move(t));
  }
  return name;
}

namespace {

// The node `n` copies through Identity (`copy`) nodes, or `n` itself.
NodePtr throughCopies(NodePtr n) {
  while (!n->isVariable() && n->op->name == "copy" && n->controlDeps.empty())
    n = n->inputs[0].node;
  return n;
}

} // namespace

const Tensor *Importer::constant(const onnx::NodeProto &n, int k) {
  if (!hasInput(n, k))
    return nullptr;
  if (out_.params.count(n.input(k)))
    return &loaded(n.input(k));
  auto s = scalars_.find(n.input(k));
  return s != scalars_.end() ? &s->second : fold(n.input(k));
}

const std::pair<const std::string, StoredTensor> *Importer::paramInput(const onnx::NodeProto &n,
                                                                       int k) {
  if (!hasInput(n, k) || scalars_.count(n.input(k)))
    return nullptr;
  std::string name = n.input(k);
  if (!out_.params.count(name)) {
    // Through Identity copies of a param, else a computation fold() makes a param of.
    auto v = values_.find(name);
    if (v == values_.end())
      return nullptr;
    NodePtr at = throughCopies(v->second.node);
    if (at->isVariable())
      name = at->name;
    else if (!fold(name))
      return nullptr;
  }
  auto it = out_.params.find(name);
  return it == out_.params.end() ? nullptr : &*it;
}

const Tensor &Importer::loaded(const std::string &param) {
  auto it = loaded_.find(param);
  if (it == loaded_.end())
    it = loaded_.emplace(param, out_.params.at(param).load()).first;
  return it->second;
}

const Tensor *Importer::fold(const std::string &name) {
  auto v = values_.find(name);
  if (v == values_.end())
    return nullptr;
  // An Identity of a param (exporters share equal weights so) is that param: no copy of its
  // megabytes through the interpreter. So is a value bound to a param a converter made under
  // its node's name (constantParam: swin's Unsqueeze of a dimension read from a shape).
  NodePtr at = throughCopies(v->second.node);
  if (at->isVariable())
    return out_.params.count(at->name) ? &loaded(at->name) : nullptr;
  try {
    std::map<std::string, Tensor> inputs;
    std::map<const Node *, NodePtr> copies;
    size_t budget = 1000; // ops; a shape computation is a few dozen
    std::function<NodePtr(const NodePtr &)> copy = [&](const NodePtr &nd) -> NodePtr {
      if (auto it = copies.find(nd.get()); it != copies.end())
        return it->second;
      if (nd->isVariable()) {
        if (!out_.params.count(nd->name))
          throw Error("reads a graph input");
        inputs[nd->name] = loaded(nd->name);
        return copies[nd.get()] = nd;
      }
      if (--budget == 0)
        throw Error("too large");
      // A dequantized constant stays one (a QDQ export's weights): FakeQuantizationToInteger
      // reads the integers and their scale, as ONNX Runtime's constant folding keeps
      // DequantizeLinear.
      if (nd->op->name == "qnn.dequantize")
        throw Error("keeps its dequantization");
      std::vector<NodeEntry> ins;
      if (nd->op->name == "shape_of") {
        std::optional<Shape> known = inferredShape(nd->inputs[0]);
        if (!known || checkedNumElements(*known) > (1 << 22))
          throw Error("unknown shape");
        const Shape &s = *known;
        std::string placeholder = nd->name + "/shape_of_input";
        inputs[placeholder] = Tensor(s, kFloat32);
        ins.push_back({makeVariable(placeholder, {{"shape", tupleText(s)}, {"dtype", "0"}}), 0, 0});
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
    bool scalar = t.shape.empty(); // computed from scalars alone: a scalar constant
    addParam(name, std::move(t));
    return scalar ? &scalars_.at(name) : &loaded(name);
  } catch (const Error &) {
    return nullptr; // the converter asking says what it needed
  }
}

namespace {

// The shape InferShape infers of `e` from the graph so far, when `wanted` accepts it.
std::optional<Shape> inferredShapeIf(const NodeEntry &e, bool (*wanted)(const Shape &)) {
  try {
    Graph shaped = applyPasses(Graph({e}), {"InferShape"});
    const IndexedGraph &idx = shaped.index();
    const Shape &s = shaped.attr("shape")->shapes[idx.entryId(idx.heads[0])];
    if (wanted(s))
      return s;
  } catch (const Error &) {
  }
  return std::nullopt;
}

} // namespace

std::optional<Shape> Importer::inferredShape(const NodeEntry &e) const {
  return inferredShapeIf(e, shapeKnown);
}

std::optional<Shape> Importer::inferredSymbolicShape(const NodeEntry &e) const {
  return inferredShapeIf(e, [](const Shape &s) { return s.isSymbolic(); });
}

bool Importer::isScalar(const onnx::NodeProto &n, int k) const {
  return hasInput(n, k) && (scalars_.count(n.input(k)) || scalarInputs_.count(n.input(k)));
}

int Importer::inferredDType(const NodeEntry &e) const {
  try {
    Graph typed = applyPasses(Graph({e}), {"InferType"});
    const IndexedGraph &idx = typed.index();
    return static_cast<int>(typed.attr("dtype")->ints[idx.entryId(idx.heads[0])]);
  } catch (const Error &) {
    return -1;
  }
}

int Importer::knownDType(const onnx::NodeProto &n, int k) const {
  if (!hasInput(n, k))
    return -1;
  if (auto p = out_.params.find(n.input(k)); p != out_.params.end())
    return p->second.dtype();
  if (auto c = scalars_.find(n.input(k)); c != scalars_.end())
    return c->second.dtype;
  auto d = out_.inputDTypes.find(n.input(k));
  return d == out_.inputDTypes.end() ? -1 : d->second;
}

std::vector<NodeEntry> Importer::constantOutput(const onnx::NodeProto &n, Tensor t) {
  bool scalar = t.shape.empty();
  addParam(n.output(0), std::move(t));
  if (scalar)
    return {}; // read by constant() and broadcastInput(), not a graph value
  return {values_.at(n.output(0))};
}

const Shape *Importer::knownShape(const onnx::NodeProto &n, int k) {
  if (const Tensor *t = constant(n, k))
    return t->shape.empty() ? nullptr : &t->shape; // a scalar is no tensor's shape here
  auto it = hasInput(n, k) ? declared_.find(n.input(k)) : declared_.end();
  if (it != declared_.end())
    return &it->second;
  // A value computed from constants that stays computed (a dequantized weight): its inferred
  // shape, kept for as long as the import runs.
  if (!hasInput(n, k))
    return nullptr;
  std::optional<Shape> s = inferredShape(input(n, k));
  if (!s || !shapeKnown(*s) || s->empty())
    return nullptr;
  return &computedShapes_.insert_or_assign(n.input(k), *s).first->second;
}

std::vector<int64_t> Importer::constInts(const onnx::NodeProto &n, int k, const char *what) {
  const Tensor *t = constant(n, k);
  if (!t)
    notConstant(n, k, what);
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

std::vector<int64_t> Importer::intsInputOrAttr(const onnx::NodeProto &n, int k, const char *key) {
  return hasInput(n, k) ? constInts(n, k, key) : attrInts(n, key);
}

const onnx::AttributeProto *Importer::attr(const onnx::NodeProto &n, const std::string &key) const {
  for (const auto &a : n.attribute())
    if (a.name() == key)
      return &a;
  return nullptr;
}

int64_t Importer::attrInt(const onnx::NodeProto &n, const std::string &key, int64_t dflt) const {
  const auto *a = attr(n, key);
  return a ? a->i() : dflt;
}

double Importer::attrFloat(const onnx::NodeProto &n, const std::string &key, double dflt) const {
  const auto *a = attr(n, key);
  return a ? a->f() : dflt;
}

std::string Importer::attrString(const onnx::NodeProto &n, const std::string &key,
                                 const std::string &dflt) const {
  const auto *a = attr(n, key);
  return a ? a->s() : dflt;
}

std::vector<int64_t> Importer::attrInts(const onnx::NodeProto &n, const std::string &key) const {
  const auto *a = attr(n, key);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

void Importer::only(const onnx::NodeProto &n, const std::vector<const char *> &known) const {
  for (const auto &a : n.attribute()) {
    bool ok = false;
    for (const char *k : known)
      ok |= a.name() == k;
    if (!ok)
      fail(where(n), ": attribute '", a.name(), "' is not supported");
  }
}

NodeEntry Importer::op(const onnx::NodeProto &n, const std::string &opName, AttrDict attrs,
                       std::vector<NodeEntry> ins, const std::string &suffix) {
  const OpDef *def = OpRegistry::get().find(opName);
  try {
    return {makeOpNode(*def, nameOf(n, suffix), std::move(attrs), std::move(ins)), 0, 0};
  } catch (const Error &e) {
    fail(where(n), ": ", e.what());
  }
}

std::vector<NodeEntry> Importer::opOutputs(const onnx::NodeProto &n, const std::string &opName,
                                           AttrDict attrs, std::vector<NodeEntry> ins,
                                           const std::string &suffix) {
  NodeEntry e = op(n, opName, std::move(attrs), std::move(ins), suffix);
  return outputsOf(e.node);
}

void Importer::requireRank(const NodeEntry &e, uint32_t k, size_t rank, std::string message) {
  rankChecks_.push_back({e.node, k, rank, std::move(message)});
}

NodeEntry Importer::constantParam(const onnx::NodeProto &n, const std::string &suffix, Tensor t) {
  std::string name = nameOf(n, suffix);
  addParam(name, std::move(t));
  return values_.at(name);
}

NodeEntry Importer::derivedParam(const onnx::NodeProto &n, const std::string &suffix,
                                 const std::string &source, const std::function<Tensor()> &make) {
  auto key = std::make_pair(source, suffix);
  if (auto it = derived_.find(key); it != derived_.end())
    return it->second;
  return derived_[key] = constantParam(n, suffix, make());
}

void Importer::addParam(const std::string &name, Tensor t) {
  if (t.shape.empty()) {
    scalars_[name] = std::move(t);
    return;
  }
  bindParam(name, std::move(t));
}

void Importer::bindParam(const std::string &name, Tensor t) {
  values_[name] = {
      makeVariable(name, {{"shape", tupleText(t.shape)}, {"dtype", std::to_string(t.dtype)}}), 0,
      0};
  out_.params[name] = StoredTensor(t);
}

namespace {

onnx::ModelProto parseModel(const std::string &bytes, const std::string &path) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes))
    fail(path, ": not an ONNX model (the protobuf does not parse)");
  return m;
}

OnnxModel importModel(onnx::ModelProto &m, const std::string &path, const DimSizes &dims) {
  registerAllPasses(); // the ops, and the InferShape and InferType that folding asks
  if (!m.has_graph())
    fail(path, ": not an ONNX model (it has no graph)");
  for (const auto &o : m.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() > kNewestOpset)
      fail(path, ": opset ", o.version(), " is newer than this importer knows (up to ",
           kNewestOpset, ")");
  return Importer(m, path, dims).run();
}

} // namespace

OnnxModel importOnnx(const std::string &path, const DimSizes &dims) {
  // Parsed straight from the file: a model's weights are held once as the protobuf's bytes
  // (each dropped once decoded), not twice with the file's bytes beside them (a BERT-sized
  // export's :load peaked at 735 MB with its 340 MB of weights read into a string first).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    fail(path, ": is a folder, not a file");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path, ": cannot open: ", std::strerror(errno));
  onnx::ModelProto m;
  bool parsed;
  {
    google::protobuf::io::FileInputStream in(fd);
    in.SetCloseOnDelete(true);
    parsed = m.ParseFromZeroCopyStream(&in) && in.GetErrno() == 0;
  }
  if (!parsed)
    fail(path, ": not an ONNX model (the protobuf does not parse)");
  return importModel(m, path, dims);
}

OnnxModel importOnnxBytes(const std::string &bytes, const std::string &path, const DimSizes &dims) {
  onnx::ModelProto m = parseModel(bytes, path);
  return importModel(m, path, dims);
}

std::vector<std::string> supportedOnnxOps() {
  std::vector<std::string> v;
  for (const auto &[k, f] : converters())
    v.push_back(k);
  return v;
}

} // namespace loupe::frontend
