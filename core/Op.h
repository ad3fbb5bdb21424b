// Op: the operator registry. One OpDef holds everything about an op, registered in one place.
#pragma once

#include "core/Attrs.h"
#include "core/Shape.h"
#include "core/Tensor.h"
#include "core/loop/Compute.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loupe {

/// Fusion patterns, with NNVM's numeric values (TOpPattern).
enum OpPattern : int {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kOpaque = 8,
};

/// Name of a pattern ("ElemWise", "Broadcast", …).
const char *patternName(int p);

/// What a shape rule sees: the node, its parsed attributes and the input/output shapes known
/// so far. A rule fills in what it can (outputs, and inputs such as weights, backwards) through
/// assignIn/assignOut, which merge partially known shapes and throw Error naming the node on a
/// conflict.
struct ShapeCtx {
  const std::string &node;
  const std::string &op;
  const Attrs &attrs;
  std::vector<Shape> &in;
  std::vector<Shape> &out;
  const std::vector<std::string> &argNames;

  /// Merges `s` into input i (0 dims are unknown); throws on a conflict.
  void assignIn(size_t i, const Shape &s);
  /// Merges `s` into output i; throws on a conflict.
  void assignOut(size_t i, const Shape &s);
  /// Throws an Error prefixed with the node and op name.
  [[noreturn]] void error(const std::string &msg) const;
};

/// What a symbolic shape rule sees: the node, its attributes and every input's dimensions as
/// expressions of size symbols (each input's rank known; `()` is no dimensions).
struct SymShapeCtx {
  const std::string &node;
  const std::string &op;
  const Attrs &attrs;
  const std::vector<SymDims> &in;
  size_t numOutputs;
  /// Throws an Error prefixed with the node and op name.
  [[noreturn]] void error(const std::string &msg) const;
};

/// What a type rule sees; dtype codes with -1 for unknown.
struct TypeCtx {
  const std::string &node;
  const std::string &op;
  const Attrs &attrs;
  std::vector<int> &in;
  std::vector<int> &out;
  void assignIn(size_t i, int t);
  void assignOut(size_t i, int t);
};

/// NNVM's rule for ops without a type function: the first known output or input dtype is every
/// input's and output's.
void sameTypeRule(TypeCtx &c);

struct Node;
struct NodeEntry;

using InferShapeFn = std::function<void(ShapeCtx &)>;
using InferTypeFn = std::function<void(TypeCtx &)>;
/// A symbolic shape rule: each output's dimensions from the inputs' (InferShape runs it where an
/// input's shape is symbolic; the concrete rule does the rest).
using SymShapeFn = std::function<std::vector<SymDims>(const SymShapeCtx &)>;
/// What a symbolic rule assumes of the sizes: pairs (size, limit) that must hold size ≤ limit at
/// every binding (a slice to `seq` of a table of 512 rows: seq ≤ 512), given the inputs' dims.
using SizeLimitsFn = std::function<std::vector<std::pair<SymExpr, SymExpr>>(
    const Attrs &, const std::vector<SymDims> &)>;
/// Reference kernel: inputs are read-only; outputs arrive shaped and typed (zero-filled) from
/// shape/type inference and are filled in place.
using ComputeFn =
    std::function<void(const Attrs &, const std::vector<const Tensor *> &, std::vector<Tensor> &)>;

/// FCorrectLayout: given the layouts the inputs arrive in (`in`, "__undef__" = unknown) and the
/// ones the previous CorrectLayout run chose (`last`), sets the layouts the op requests for its
/// inputs and the ones it produces (`out`). Throws Error on incompatible layouts.
using CorrectLayoutFn =
    std::function<void(const Attrs &, std::vector<std::string> &in,
                       const std::vector<std::string> &last, std::vector<std::string> &out)>;

/// FGradient: given the forward node and the gradients of its outputs, the gradient entries of
/// each of its inputs (new nodes built from ops, as NNVM's rewrites did).
using GradientFn = std::function<std::vector<NodeEntry>(const std::shared_ptr<const Node> &,
                                                        const std::vector<NodeEntry> &)>;

/// Lowering rule (TVM's FTVMCompute): the op's outputs as compute stages over its inputs'
/// stages, given the outputs' shapes and dtypes. Names its stages as TVM's topi did.
using LowerFn = std::function<std::vector<loop::ComputeRef>(
    const Attrs &, const std::vector<loop::ComputeRef> &inputs, const std::vector<Shape> &outShapes,
    const std::vector<int> &outTypes)>;

/// Everything about one operator. Built with the chainable setters in a registration file of
/// its family (core/ops/*.cpp).
struct OpDef {
  std::string name;
  std::string doc;
  std::vector<ParamSpec> params;
  /// Argument names, used for keyword inputs and implicit variables (`conv2d0_weight`).
  std::vector<std::string> args = {"data"};
  /// When set, overrides `args` from the attributes (conv2d drops `bias` when use_bias=False).
  std::function<std::vector<std::string>(const Attrs &)> argsFn;
  /// Variadic ops take any number (≥1) of positional inputs (concatenate, elemwise_sum).
  bool variadic = false;
  /// The fewest inputs a variadic op takes (a tvm_op of constants has none).
  size_t minInputs = 1;
  /// Attribute that records the number of variadic inputs (`num_args` for elemwise_sum).
  std::string keyVarNumArgs;
  std::function<int(const Attrs &)> numOutputsFn;
  std::function<int(const Attrs &)> numVisibleOutputsFn;
  InferShapeFn inferShape;
  SymShapeFn symShape;     ///< unset: the op takes no symbolic shapes (InferShape says so)
  SizeLimitsFn sizeLimits; ///< unset: its symbolic rule assumes nothing of the sizes
  InferTypeFn inferType;   ///< unset: the "same type everywhere" rule
  int pattern = kOpaque;
  bool scalars = false;          ///< scalar inputs allowed (acceptScalars)
  std::vector<int> mutateInputs; ///< FMutateInputs (batch_norm: 3, 4)
  /// FInplaceOption: (input, output) pairs whose buffers PlanMemory may share.
  std::vector<std::pair<int, int>> inplace;
  ComputeFn compute;
  GradientFn gradient;           ///< unset: not differentiable (Gradient reports it)
  CorrectLayoutFn correctLayout; ///< unset: inputs kept, outputs unknown
  LowerFn lowering;              ///< unset: the op cannot be compiled yet
  /// Whether `lowering` takes symbolic shapes: it reads no size of a symbolic dimension (an
  /// elementwise rule passes its shape through), so a body with size symbols lowers to a
  /// generic kernel (backend/LowerFunction) with it. Rules that compute with sizes (reshape's
  /// flat index, a window's bounds) are not, until they compute with the sizes' expressions.
  bool symbolicLowering = false;
  /// Whether `lowering` takes a symbolic leading axis (a batch) with the others constant: it
  /// reads the sizes of the other axes only (a window's height and width, a channel count) and
  /// carries the leading one through in the shapes it makes, as the convolutions and pools do.
  bool symbolicBatchLowering = false;
  /// Aliases that create this op under another name hint (`__add_symbol__` → broadcast_add).
  std::vector<std::string> aliases;

  OpDef &describe(std::string d) {
    doc = std::move(d);
    return *this;
  }
  OpDef &param(std::string n, ParamKind k, std::optional<std::string> dflt, std::string d = "",
               std::vector<std::string> choices = {}) {
    params.push_back({std::move(n), k, std::move(dflt), std::move(d), std::move(choices)});
    return *this;
  }
  OpDef &arguments(std::vector<std::string> a) {
    args = std::move(a);
    return *this;
  }
  /// Scalars (shape `()`) may be inputs: the ops NumPy applies to 0-d arrays (elementwise,
  /// broadcasting, reducing, reshaping). InferShape refuses a scalar input of any other op by
  /// name, so no rule or kernel that indexes an axis ever sees one.
  OpDef &acceptScalars() {
    scalars = true;
    return *this;
  }
  OpDef &setPattern(int p) {
    pattern = p;
    return *this;
  }
  OpDef &shape(InferShapeFn f) {
    inferShape = std::move(f);
    return *this;
  }
  /// The shape rule over symbolic dimensions, beside `shape`'s concrete one.
  OpDef &symbolic(SymShapeFn f) {
    symShape = std::move(f);
    return *this;
  }
  OpDef &limits(SizeLimitsFn f) {
    sizeLimits = std::move(f);
    return *this;
  }
  OpDef &type(InferTypeFn f) {
    inferType = std::move(f);
    return *this;
  }
  OpDef &kernel(ComputeFn f) {
    compute = std::move(f);
    return *this;
  }
  OpDef &inplaceWith(std::vector<std::pair<int, int>> pairs) {
    inplace = std::move(pairs);
    return *this;
  }
  OpDef &layout(CorrectLayoutFn f) {
    correctLayout = std::move(f);
    return *this;
  }
  OpDef &lower(LowerFn f) {
    lowering = std::move(f);
    return *this;
  }
  /// A lowering rule that takes symbolic shapes (see symbolicLowering).
  OpDef &lowerSymbolic(LowerFn f) {
    lowering = std::move(f);
    symbolicLowering = true;
    return *this;
  }
  /// A lowering rule that takes a symbolic leading axis (see symbolicBatchLowering).
  OpDef &lowerSymbolicBatch(LowerFn f) {
    lowering = std::move(f);
    symbolicBatchLowering = true;
    return *this;
  }
  OpDef &grad(GradientFn f) {
    gradient = std::move(f);
    return *this;
  }
  OpDef &alias(std::string a) {
    aliases.push_back(std::move(a));
    return *this;
  }
  OpDef &outputs(int n) {
    numOutputsFn = [n](const Attrs &) { return n; };
    return *this;
  }
  OpDef &visibleOutputs(int n) {
    numVisibleOutputsFn = [n](const Attrs &) { return n; };
    return *this;
  }

  /// Argument names for these attributes.
  std::vector<std::string> argNames(const Attrs &a) const { return argsFn ? argsFn(a) : args; }
  int numOutputs(const Attrs &a) const { return numOutputsFn ? numOutputsFn(a) : 1; }
  int numVisibleOutputs(const Attrs &a) const {
    return numVisibleOutputsFn ? numVisibleOutputsFn(a) : numOutputs(a);
  }
  /// Finds a declared parameter, or null.
  const ParamSpec *findParam(const std::string &n) const;
  /// Parses a dictionary against `params`. Unknown keys are an error when `strict` (graph
  /// language) and for ops that declare parameters (as dmlc::Parameter did); ops without
  /// parameters accept any key, as NNVM did for nodes made by passes. Keys starting with "__"
  /// are hidden attributes and always allowed. Throws Error("attribute 'x': …").
  Attrs parse(const AttrDict &dict, bool strict) const;
};

/// The process-wide op registry. Filled by registerAllOps(); read-only afterwards.
class OpRegistry {
public:
  static OpRegistry &get();
  /// Adds an op; the caller fills it in through the returned reference.
  OpDef &add(const std::string &name);
  /// Finds an op by its name or an alias; null if unknown.
  const OpDef *find(const std::string &name) const;
  /// All ops, sorted by name.
  std::vector<const OpDef *> all() const;
  /// Every callable name (op names and aliases), sorted.
  std::vector<std::string> names() const;

private:
  std::map<std::string, std::unique_ptr<OpDef>> ops_;
  std::map<std::string, const OpDef *> byName_;
};

/// Registers every op family once (idempotent).
void registerAllOps();

/// Up to three names from `candidates` closest to `name` (for "did you mean" hints).
std::vector<std::string> nearestNames(const std::string &name,
                                      const std::vector<std::string> &candidates);

/// " (did you mean 'a', 'b'?)" or "" when nothing is close.
std::string didYouMean(const std::string &name, const std::vector<std::string> &candidates);

} // namespace loupe
