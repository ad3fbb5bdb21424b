// Compute: the tensor-expression layer over the loop IR (TVM's te.compute): each tensor is a
// placeholder or a stage whose element at (i0, i1, …) is an expression of other tensors'
// elements. Ops describe their lowering with it (OpDef::lower); schedules turn it into loops.
#pragma once

#include "core/loop/LoopIR.h"

#include <functional>

namespace loupe::loop {

struct Compute {
  std::string name;
  Shape shape;
  int dtype = 0;
  bool placeholder = false;
  std::vector<Expr> axes; ///< one variable per output dimension
  Expr body;              ///< the element at `axes`; a Reduce only at the top
  std::string tag;        ///< what kind of stage: "elemwise", "broadcast", "injective", "pad",
                          ///< "conv2d", "reduce", … (schedules look at it)
  /// The graph node whose compute rule made the stage (provenance: `:lower FUNC nodes`, the
  /// comments of `:asm`, `:where`); empty for placeholders. Set by lowering once the rule has
  /// returned, which is why it may change on a stage already shared as const.
  mutable std::string node;
};

/// An input of a function: read, never computed.
ComputeRef placeholder(const std::string &name, const Shape &shape, int dtype);

using IndexFn = std::function<Expr(const std::vector<Expr> &)>;

/// A stage of `shape` whose element at the axes is `fn(axes)`. Axis variables are named
/// `<prefix>0`, `<prefix>1`, … (TVM's `lambda *i` gave i0, i1; topi's C++ ax0, ax1) unless
/// `axisNames` gives them.
ComputeRef compute(const Shape &shape, int dtype, const IndexFn &fn,
                   const std::string &name = "compute", const std::string &tag = "injective",
                   const std::string &prefix = "i", std::vector<std::string> axisNames = {});

/// A new reduction axis.
IterVar reduceAxis(int64_t extent, const std::string &name);

/// tensor(indices...) as an expression.
Expr read(const ComputeRef &t, std::vector<Expr> indices);

/// The tensors a stage reads, in order of first appearance.
std::vector<ComputeRef> inputsOf(const Compute &c);

/// The stages `outputs` depend on, producers before consumers, placeholders included.
std::vector<ComputeRef> topoOrder(const std::vector<ComputeRef> &outputs);

/// The element type's constant `v` (0.000000f for float32).
Expr constant(double v, int dtype);

} // namespace loupe::loop
