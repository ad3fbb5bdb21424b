// QuantSteps: a node's quantization parameters as text.
#include "passes/QuantSteps.h"

#include "core/Error.h"
#include "core/Quantize.h"
#include "core/Text.h"
#include "passes/Layerwise.h"
#include "passes/PatternUtil.h"

#include <algorithm>
#include <optional>

namespace loupe {

namespace {

// The value of input entry `e` when it is a constant (constantValue); a `const` node that does
// not evaluate is shown by name, as a computed one is.
std::optional<Tensor> constantOf(const NodeEntry &e, const StoredTensors &params) {
  try {
    return constantValue(e.node, &params);
  } catch (const Error &) {
    return std::nullopt;
  }
}

// "scale 0.0235" or "scales along axis 1 (64): 0.00121 to 0.00513"; `what` is the noun.
std::string valuesText(const Tensor &t, const std::string &what, int64_t axis) {
  if (t.size() == 1)
    return what + " " + significant(t.data[0]);
  auto [lo, hi] = std::minmax_element(t.data.begin(), t.data.end());
  return what + "s along axis " + std::to_string(axis) + " (" + std::to_string(t.size()) + "): " +
         (*lo == *hi ? "all " + significant(*lo) : significant(*lo) + " to " + significant(*hi));
}

} // namespace

std::vector<std::string> quantizationLines(const Graph &g, uint32_t nid,
                                           const StoredTensors &params) {
  const IndexedGraph &idx = g.index();
  const Node &n = *idx.nodes[nid].node;
  std::vector<std::string> lines;
  if (n.isVariable())
    return lines;
  std::optional<StepQuantization> q = stepQuantization(idx, n);
  if (!q)
    return lines;
  const NodeEntry &scale = q->source->inputs[q->scale], &zero = q->source->inputs[q->zeroPoint];
  std::optional<Tensor> s = constantOf(scale, params), z = constantOf(zero, params);
  bool accumulator = n.op->name == "qnn.conv2d" || n.op->name == "qnn.dense";
  std::string line = accumulator ? "int32 sums in steps of " : "steps of ";
  line += s ? valuesText(*s, "scale", q->axis) : "scale " + scale.node->name;
  line += ", " + (z ? valuesText(*z, "zero point", q->axis) : "zero point " + zero.node->name);
  if (q->source != &n)
    line += " (" + (accumulator ? "the input of " : std::string()) + q->source->name + ")";
  lines.push_back(line);
  if (n.op->name == "qnn.requantize") {
    std::optional<Tensor> from = constantOf(n.inputs[1], params),
                          to = constantOf(n.inputs[3], params);
    if (from && to && n.parsed.getStr("compute_dtype") == "float32") {
      try {
        std::vector<float> r = floatScaleRatios(*from, *to, n.name);
        auto [m0, m1] = std::minmax_element(r.begin(), r.end());
        lines.push_back(r.size() == 1
                            ? "requantized in float32: multiplier " + significant(r[0])
                            : "requantized in float32 per channel (" + std::to_string(r.size()) +
                                  "): multipliers " + significant(*m0) + " to " + significant(*m1));
      } catch (const Error &e) {
        lines.push_back(e.what());
      }
    } else if (from && to) {
      try {
        std::vector<FixedPoint> r = scaleRatios(*from, *to, n.name);
        auto [m0, m1] =
            std::minmax_element(r.begin(), r.end(), [](const FixedPoint &a, const FixedPoint &b) {
              return a.multiplier < b.multiplier;
            });
        auto [s0, s1] =
            std::minmax_element(r.begin(), r.end(), [](const FixedPoint &a, const FixedPoint &b) {
              return a.shift < b.shift;
            });
        if (r.size() == 1)
          lines.push_back("requantized in fixed point: multiplier " +
                          std::to_string(r[0].multiplier) + ", shift " +
                          std::to_string(r[0].shift));
        else
          lines.push_back("requantized in fixed point per channel (" + std::to_string(r.size()) +
                          "): multipliers " + std::to_string(m0->multiplier) + " to " +
                          std::to_string(m1->multiplier) + ", shifts " + std::to_string(s0->shift) +
                          " to " + std::to_string(s1->shift));
      } catch (const Error &e) {
        lines.push_back(e.what());
      }
    }
  }
  return lines;
}

} // namespace loupe
