// OpHelpers: shape rules and kernel builders shared by the op families (like NNVM's
// elemwise_op_common.h), so each op's registration stays a few lines.
#pragma once

#include "core/Error.h"
#include "core/Graph.h"
#include "core/Op.h"

#include <functional>
#include <optional>

namespace loupe::ops {

/// Every input and output has the same shape (merged both ways, so a known output fills
/// unknown inputs).
void sameShapeRule(ShapeCtx &c);

/// NumPy broadcasting of two shapes (right-aligned, 1 stretches); nullopt when they conflict.
std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b);

/// The symbolic rule of sameShapeRule: every output has input 0's dimensions.
std::vector<SymDims> symSameShape(const SymShapeCtx &c);

/// NumPy broadcasting of symbolic dimensions: equal, or one of them 1; a symbol against another
/// constant takes the constant (the run checks the symbol's size); two different symbolic
/// dimensions are an error through `c`.
SymDims symBroadcast(const SymShapeCtx &c, const SymDims &a, const SymDims &b);

/// The symbolic rule of broadcastBinaryShape.
std::vector<SymDims> symBroadcastBinary(const SymShapeCtx &c);

/// Symbolic rule of the gradient ops and the `_like` ops: output k takes the dimensions of input
/// `inputs[k]` (the tensor it is the gradient of; the `_like` ops' rhs); a further output, a
/// convolution's bias gradient, is (channels).
SymShapeFn symLikeInputs(std::vector<size_t> inputs);

/// broadcastShapes's result, or an error through `c` when the shapes conflict.
Shape broadcastShape(ShapeCtx &c, const Shape &a, const Shape &b);

/// Registers a unary elementwise op computing f (pattern ElemWise, same shape and type, any
/// layout, in place): the caller adds the lowering and gradient.
OpDef &unaryOp(const char *name, const char *doc, std::function<double(double)> f);

/// An element's lowering: the expression of one output element from the input element x.
using ElementLower = std::function<loop::Expr(const loop::Expr &, const Attrs &)>;

/// A unary op (as unaryOp) whose reference kernel is `ref` and whose lowering applies `f` to
/// each element: the caller adds the gradient.
OpDef &unaryMathOp(const char *name, const char *doc, std::function<double(double)> ref,
                   ElementLower f);

/// The same for an op with attributes, which both `ref` and `f` read (the caller declares them).
OpDef &unaryMathAttrOp(const char *name, const char *doc,
                       std::function<double(double, const Attrs &)> ref, ElementLower f);

/// The gradient of an op whose output does not depend on its inputs' values (or only
/// piecewise-constantly): zeros for every input.
std::vector<NodeEntry> zeroGrad(const NodePtr &n, const std::vector<NodeEntry> &);

/// A binary op's output shape: its two inputs broadcast together (waits for both).
void broadcastBinaryShape(ShapeCtx &c);

/// Checks the `layout` attribute is NCHW and, once input 0 is known, that it is 4-D. Returns
/// false while input 0 is still unknown (the rule should wait).
bool nchwInput(ShapeCtx &c);

/// Inputs (data, weight, bias), or (data, weight) when `use_bias` is False: conv2d, dense, ….
std::vector<std::string> dataWeightBias(const Attrs &a);

/// Kernel applying f to every element of input 0.
ComputeFn unaryKernel(std::function<double(double)> f);

/// Kernel applying f(x, attrs) to every element of input 0.
ComputeFn unaryAttrKernel(std::function<double(double, const Attrs &)> f);

/// Kernel applying f elementwise to inputs 0 and 1 with NumPy broadcasting into output 0.
ComputeFn binaryBroadcastKernel(std::function<double(double, double)> f);

/// Lowering of an op applying `f` to every element of input 0 (a "compute" stage over i0, i1, …
/// tagged `tag`).
LowerFn elementwiseLower(ElementLower f, const std::string &tag = "elemwise");

/// Lowering of a binary op with NumPy broadcasting of its two inputs.
LowerFn broadcastLower(std::function<loop::Expr(const loop::Expr &, const loop::Expr &)> f,
                       const std::string &tag = "broadcast");

/// The indices of an input of shape `in` read at output indices `out` under NumPy broadcasting
/// (right-aligned; size-1 axes read 0).
std::vector<loop::Expr> broadcastIndices(const Shape &in, const std::vector<loop::Expr> &out);

/// shape_of's dims [start, end) of a rank: ONNX's rule (negative counts from the end; both
/// clipped to [0, rank]). FoldShapeOf reads a shape with it too.
std::pair<int64_t, int64_t> shapeRange(const Attrs &a, size_t rank);

/// topi's pad: `name` over x padded by `before`/`after` per axis with `value`, reading x through
/// tvm_if_then_else under `(before <= i) && (i < before + n)` for each padded axis.
loop::ComputeRef padCompute(const loop::ComputeRef &x, const std::vector<int64_t> &before,
                            const std::vector<int64_t> &after, double value,
                            const std::string &name = "pad_temp");

/// A stage of `shape` reading x's elements in row-major order (reshape, flatten, …), called
/// `name`.
loop::ComputeRef reshapeCompute(const loop::ComputeRef &x, const Shape &shape,
                                const std::string &name = "compute");

/// `v / s` when `v` is a non-negative multiple of `s` below `s * n` — the output position a
/// gathering gradient (convolution, pooling) reads — as {position, condition}.
std::pair<loop::Expr, loop::Expr> exactQuotient(const loop::Expr &v, int64_t s, int64_t n);

/// 1 where `cond` holds, else 0, in `dtype` (comparison ops return numbers).
loop::Expr boolToValue(const loop::Expr &cond, int dtype);

/// Calls fn(base, stride, length) for every 1-D line along `axis` of `shape` (offsets in
/// elements, lines in row-major order of the other axes).
void forEachLine(const Shape &shape, int axis,
                 const std::function<void(int64_t, int64_t, int64_t)> &fn);

/// Calls fn(index) for every multi-index of `shape` in row-major order.
void forEachIndex(const Shape &shape, const std::function<void(const std::vector<int64_t> &)> &fn);

/// The tensor `t` (in layout `src`) rearranged into layout `dst` ("NCHW" → "NCHW8c", …).
Tensor transformLayout(const Tensor &t, const std::string &src, const std::string &dst);

/// Flat offset of a multi-index for a shape whose leading dims may be missing or 1
/// (broadcast): `idx` is right-aligned against `shape`.
int64_t broadcastOffset(const Shape &shape, const std::vector<int64_t> &idx);

/// Sorted, unique, normalised reduction axes for NNVM's (axis, exclude) convention:
/// an empty `axis` means every axis.
std::vector<int> reduceAxes(const std::vector<int64_t> &axis, bool exclude, int ndim,
                            const std::string &what);

/// Makes a node for a gradient rewrite and returns its output 0. Attributes are kept as
/// written in the given order (NNVM's gradient nodes carried attributes their ops do not parse).
NodeEntry mk(const std::string &op, const std::string &name, std::vector<NodeEntry> inputs,
             AttrDict attrs = {});

/// Output k of a node, as an entry.
inline NodeEntry outOf(const std::shared_ptr<const Node> &n, uint32_t k = 0) { return {n, k, 0}; }

/// Builds a gradient's nodes, named `<node>_sub<k>` after the node as the other ops' gradients
/// are, and its result `<node>_grad`.
struct GradBuilder {
  const NodePtr &n;
  int k = 0;
  NodeEntry op(const char *name, std::vector<NodeEntry> in, AttrDict a = {}) {
    return mk(name, n->name + "_sub" + std::to_string(k++), std::move(in), std::move(a));
  }
  /// A scalar op (`__mul_scalar__`, …) of x and v.
  NodeEntry scalar(const char *name, const NodeEntry &x, double v);
  /// A tensor like `like` filled with v.
  NodeEntry fill(const NodeEntry &like, double v);
  NodeEntry mul(const NodeEntry &a, const NodeEntry &b) { return op("elemwise_mul", {a, b}); }
  NodeEntry x() const { return n->inputs[0]; }
  NodeEntry y() const { return outOf(n); }
  /// The gradient g * d.
  std::vector<NodeEntry> times(const NodeEntry &g, const NodeEntry &d) {
    return {mk("elemwise_mul", n->name + "_grad", {g, d})};
  }
  /// The gradient g / d.
  std::vector<NodeEntry> over(const NodeEntry &g, const NodeEntry &d) {
    return {mk("elemwise_div", n->name + "_grad", {g, d})};
  }
};

/// NNVM's TShape text for a gradient attribute: "[]", "[1,2]".
std::string tshapeText(const std::vector<int64_t> &v);

/// NNVM's layout-rule families (FCorrectLayout), for CorrectLayout.
/// Arbitrary: every input and output takes the inputs' (single, agreed) layout.
void layoutArbitrary(const Attrs &, std::vector<std::string> &in,
                     const std::vector<std::string> &last, std::vector<std::string> &out);
/// KeepLeft (same-shape binary ops): an unknown side takes the other's layout; the output the
/// left's.
void layoutKeepLeft(const Attrs &, std::vector<std::string> &in,
                    const std::vector<std::string> &last, std::vector<std::string> &out);
/// Broadcast binary ops: equal layouts pass through; with one side unknown the output is unknown.
void layoutBroadcast(const Attrs &, std::vector<std::string> &in,
                     const std::vector<std::string> &last, std::vector<std::string> &out);
/// Fixed: the first `n` inputs take the last run's layout of the first input that had one, else
/// the first defined current layout (CorrectLayout transforms the others to it); the output copies
/// it (`copy`) or stays unknown.
CorrectLayoutFn layoutFixed(size_t n, bool copy);

/// Runs `part(first, last)` over [0, count) cut into contiguous parts, one per core, when
/// `work` (multiply-adds) is large enough to pay for threads, else once over the whole range.
/// The parts must be independent: the results are then those of one call over everything.
void parallelParts(int64_t count, int64_t work, const std::function<void(int64_t, int64_t)> &part);

/// On a reference kernel's hot loop: GCC builds it for AVX-512, AVX2 and the x86-64 baseline
/// and the loader picks the best this CPU has (an ifunc), so the reference check's loops run as
/// wide as the machine allows. The core is compiled without floating-point contraction, so the
/// versions differ in speed only, never in a bit of their results.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define LOUPE_REFERENCE_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define LOUPE_REFERENCE_CLONES
#endif
/// Concatenate: every input and the output take the first input's layout, unless `axis` names a
/// different dimension in it than in the last run's layout (then the last run's is kept).
void layoutConcatenate(const Attrs &a, std::vector<std::string> &in,
                       const std::vector<std::string> &last, std::vector<std::string> &out);

/// The size of the block after `axis` of shape `s` (element i's channel along `axis` is
/// (i / innerSize) % s[axis]).
int64_t innerSize(const Shape &s, int axis);
/// A (C)-shaped stage summing `term(i)` over every axis of `shape` except `axis` (i is the full
/// index): the per-channel sums of the batch_norm and prelu gradients.
loop::ComputeRef channelSum(const Shape &shape, int axis, int dtype,
                            const std::function<loop::Expr(const std::vector<loop::Expr> &)> &term);

/// Registration functions of each op family (called by registerAllOps).
/// The pad op's kernel: `out` (x's shape widened by pw's (before, after) per axis) gets x's
/// cells and, around them, `value` (mode "constant") or the cells mode "edge" or "reflect"
/// names.
void padInto(const Tensor &x, const std::vector<std::vector<int64_t>> &pw, const std::string &mode,
             double value, Tensor &out);

/// Refuses a dtype that is not an integer one of at most 32 bits for input k (`what` names it).
void requireInteger(const TypeCtx &c, size_t k, const char *what);

void registerElemwiseOps();
void registerBroadcastOps();
void registerLogicOps();
void registerUnaryMathOps();
void registerActivationOps();
void registerNormOps();
void registerIndexOps();
void registerScanOps();
void registerReduceOps();
void registerNnOps();
void registerBatchNormOps();
void registerPadOps();
void registerConvOps();
void registerConv3dOps();
void registerQnnOps();
void registerPoolOps();
void registerImageOps();
void registerTransformOps();
void registerInitOps();
void registerInternalOps();

} // namespace loupe::ops
