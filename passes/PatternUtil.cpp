// PatternUtil: per-channel axis matching, bias expansion and reference counts for the rewriting
// passes.
#include "passes/PatternUtil.h"

#include "core/Attrs.h"
#include "core/DType.h"
#include "core/ops/OpHelpers.h"

namespace loupe {

std::pair<int, int> matchBroadcast1DAxis(const Shape &oshape, const Shape &biasShape) {
  // The last axis of biasShape that is not 1.
  size_t last = biasShape.size();
  while (last > 0 && biasShape[last - 1] == 1)
    --last;
  int base = static_cast<int>(oshape.size()) - static_cast<int>(biasShape.size());
  if (last == 0)
    return {base, 0};
  size_t axisDim = last - 1;
  for (size_t i = 0; i < axisDim; ++i)
    if (biasShape[i] != 1)
      return {-1, -1};
  int axis = base + static_cast<int>(axisDim);
  if (axis < 0 || oshape[axis] != biasShape[axisDim])
    return {-1, -1};
  return {axis, static_cast<int>(axisDim)};
}

NodeEntry expandBiasToMatchAxis(NodeEntry bias, int outDim, int biasDim, int axis) {
  if (biasDim != 1)
    bias = ops::mk("squeeze", bias.node->name + "_sqz", {bias});
  int pad = outDim - axis - 1;
  if (pad <= 0)
    return bias;
  return ops::mk("expand_dims", bias.node->name + "_expand", {bias},
                 {{"axis", "1"}, {"num_newaxis", std::to_string(pad)}});
}

std::vector<uint32_t> nodeRefCounts(const IndexedGraph &idx) {
  std::vector<uint32_t> refs(idx.numNodes(), 0);
  for (const auto &n : idx.nodes)
    for (const auto &e : n.inputs)
      ++refs[e.nodeId];
  for (const auto &h : idx.heads)
    ++refs[h.nodeId];
  return refs;
}

NodePtr constantNode(const Tensor &t, const std::string &name) {
  AttrDict attrs;
  bool uniform = true;
  for (double v : t.data)
    uniform &= v == t.data[0];
  if (uniform && !t.data.empty()) {
    attrs.emplace_back("value", pyFloatRepr(t.data[0]));
  } else {
    std::string data = "[";
    for (size_t i = 0; i < t.data.size(); ++i)
      data += (i ? ", " : "") + pyFloatRepr(t.data[i]);
    attrs.emplace_back("data", data + "]");
  }
  attrs.emplace_back("shape", shapeToTuple(t.shape));
  attrs.emplace_back("dtype", std::string(dtypeName(t.dtype)));
  return makeOpNode(*OpRegistry::get().find("const"), name, attrs, {});
}

} // namespace loupe
