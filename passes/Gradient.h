// Gradient: builds the graph of d(ys)/d(xs) from every op's gradient rule (NNVM's Gradient pass).
#pragma once

#include "core/Graph.h"

#include <vector>

namespace loupe {

/// The gradient graph: its outputs are the gradients of `xs`, given the gradients flowing into
/// `ys` (`headGrads`, one per y; NNVM's Python helper used ones_like(y)). Walks the forward graph
/// in reverse topological order; gradients reaching one entry are summed by an `elemwise_sum`
/// named `grad_sum`, a missing one is `zeros_like` of the entry (`zero_grad`). Throws Error
/// "Operator X is non-differentiable because it didn't register FGradient attribute." for an op
/// without a gradient rule whose output gradients are not all zero.
Graph gradientGraph(const std::vector<NodeEntry> &ys, const std::vector<NodeEntry> &xs,
                    const std::vector<NodeEntry> &headGrads);

} // namespace loupe
