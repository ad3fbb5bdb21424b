// QuantSteps: what a node's integer steps stand for — its scale and zero point, and a
// requantize's fixed-point multiplier and shift — as :nodes, :ir quantization, the inspector and
// the SVG pictures say it.
#pragma once

#include "core/Buffers.h"
#include "core/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loupe {

/// Lines saying what node `nid`'s integer steps stand for: "steps of scale 0.0235, zero point
/// 66 (/conv1/QuantizeLinear)", per channel "scales along axis 0 (64): 0.00121 to 0.00513, zero
/// point 0"; for a qnn.requantize also its ratio in fixed point ("multiplier 1518500250, shift
/// -7", per channel their ranges). The parameters are read where they are constants — params
/// bound in `params`, `const` nodes — else named. Empty for a node of no known quantization.
std::vector<std::string> quantizationLines(const Graph &g, uint32_t nid,
                                           const StoredTensors &params);

} // namespace loupe
