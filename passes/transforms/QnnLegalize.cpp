// QnnLegalize: qnn ops given the operand types the CPU's instructions take (Relay's
// qnn.transform.Legalize): a qnn.conv2d of int8 data and int8 weights becomes one of uint8 data,
// the data and its zero point both shifted by 128 — Σ((x + 128) − (zd + 128))·w is the same sum —
// because VNNI's vpdpbusd multiplies unsigned bytes by signed ones. QnnCanonicalize then writes
// it as the 8-bit convolution of the shifted data, the zero point's share through the bias.
#include "passes/Pass.h"
#include "passes/PatternUtil.h"

#include "core/DType.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"

namespace loupe {

namespace {

using Entry = IndexedGraph::Entry;
using ops::mk;

Graph qnnLegalize(const Graph &src, const PassContext &ctx) {
  PatternView v(src, ctx.params);
  const IndexedGraph &idx = src.index();
  // The convolutions to shift: int8 data and weights, a constant data zero point (which
  // QnnCanonicalize's 8-bit form takes through the bias). None: the graph as it is.
  auto signedData = [&](uint32_t nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable() || n.op->name != "qnn.conv2d")
      return false;
    Entry self{nid, 0, 0};
    return v.dtype(v.input(self, 0)) == kInt8 && v.dtype(v.input(self, 1)) == kInt8 &&
           v.uniform(v.input(self, 2)).has_value();
  };
  bool any = false;
  for (uint32_t nid = 0; nid < idx.numNodes() && !any; ++nid)
    any = signedData(nid);
  if (!any)
    return src;
  return rewritePatterns(
      src,
      [&](uint32_t nid, const NodePtr &node, const RewrittenEntry &now) -> std::vector<NodeEntry> {
        if (!signedData(nid))
          return {};
        Entry self{nid, 0, 0};
        const Entry &data = v.input(self, 0);
        std::optional<double> zd = v.uniform(v.input(self, 2));
        NodeEntry wide = mk("cast", node->name + "_data_int32", {now(data.nodeId, data.index)},
                            {{"dtype", "int32"}});
        NodeEntry shifted =
            mk("cast", node->name + "_data_uint8",
               {mk("__add_scalar__", node->name + "_data_plus_128", {wide}, {{"scalar", "128"}})},
               {{"dtype", "uint8"}});
        Tensor z({1}, kInt32);
        z.data[0] = *zd + 128;
        std::vector<NodeEntry> args;
        for (size_t k = 0; k < node->inputs.size(); ++k)
          args.push_back(k == 0 ? shifted
                         : k == 2
                             ? NodeEntry{constantNode(z, node->name + "_data_zero_uint8"), 0, 0}
                             : now(v.input(self, k).nodeId, v.input(self, k).index));
        return {mk("qnn.conv2d", node->name, args, node->attrs)};
      });
}

} // namespace

void registerQnnLegalizePass() {
  PassRegistry::get().add(
      {.name = "QnnLegalize",
       .summary = "qnn.conv2d of int8 data as one of uint8 data: data and zero point shifted by "
                  "128 (VNNI multiplies unsigned by signed bytes)",
       .optLevel = 0,
       .needs = {"dtype"},
       .changesGraph = true,
       .run = qnnLegalize});
}

} // namespace loupe
