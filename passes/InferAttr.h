// InferAttr: the sweep driver InferShape and InferType share (NNVM's InferAttr).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace loupe {

/// Alternates forward (ids ascending) and backward (descending) sweeps of `step` over
/// `numNodes` nodes until `countUnknown()` reaches 0 or a sweep makes no progress; returns the
/// number of entries still unknown.
size_t inferSweeps(uint32_t numNodes, const std::function<void(uint32_t)> &step,
                   const std::function<size_t()> &countUnknown);

} // namespace loupe
