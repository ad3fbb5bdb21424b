// PatternUtil: small graph-pattern helpers shared by the rewriting passes (SimplifyInference,
// FoldScaleAxis, FoldConstant, FoldShapeOf), after NNVM's pattern_util.h.
#pragma once

#include "core/Graph.h"
#include "core/Tensor.h"

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

} // namespace loupe
