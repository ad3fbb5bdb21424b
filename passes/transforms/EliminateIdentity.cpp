// EliminateIdentity: removes no-op copies — `copy` (ONNX Identity), a reshape to the same shape,
// a transpose that keeps the axes in order, a cast to the dtype its input already has (the Cast
// to uint8 torch.onnx writes after a QuantizeLinear) — so each reader reads the value itself.
#include "passes/Pass.h"

#include "core/Attrs.h"
#include "core/DType.h"
#include "core/Rewrite.h"

namespace loupe {

namespace {

// True when the node (of source id `nid`) hands its input on unchanged.
bool isNoOp(const IndexedGraph &idx, const std::vector<Shape> *shapes,
            const std::vector<int64_t> *dtypes, uint32_t nid) {
  const Node &n = *idx.nodes[nid].node;
  if (n.isVariable() || !n.controlDeps.empty() || n.inputs.size() != 1)
    return false;
  const std::string &op = n.op->name;
  if (op == "copy")
    return true;
  if (op == "transpose") {
    const std::vector<int64_t> &axes = n.parsed.getTuple("axes");
    for (size_t d = 0; d < axes.size(); ++d)
      if (axes[d] != static_cast<int64_t>(d))
        return false;
    return !axes.empty(); // no axes means reversed
  }
  if (op == "cast" && dtypes) {
    int64_t in = (*dtypes)[idx.entryId(idx.nodes[nid].inputs[0])];
    std::optional<int> to = dtypeFromName(n.parsed.getStr("dtype"));
    return in != -1 && to && in == *to;
  }
  if (op == "reshape" && shapes) {
    const Shape &in = (*shapes)[idx.entryId(idx.nodes[nid].inputs[0])];
    return !in.empty() && in == (*shapes)[idx.entryId(nid, 0)];
  }
  return false;
}

Graph eliminateIdentity(const Graph &src, const PassContext &) {
  const IndexedGraph &idx = src.index();
  // PlaceDevice's copies move values between devices: they are not no-ops.
  if (src.attr("device"))
    return rewriteGraph(src, [](uint32_t, const NodePtr &) { return std::vector<NodeEntry>{}; });
  const GraphAttr *s = src.attr("shape");
  const std::vector<Shape> *shapes =
      s && s->shapes.size() == idx.numEntries() ? &s->shapes : nullptr;
  const GraphAttr *t = src.attr("dtype");
  const std::vector<int64_t> *dtypes = t && t->ints.size() == idx.numEntries() ? &t->ints : nullptr;
  // A graph output keeps its node, so that the output keeps its name.
  std::vector<bool> output(idx.numNodes(), false);
  for (const auto &h : idx.heads)
    output[h.nodeId] = true;
  return rewriteGraph(src, [&](uint32_t nid, const NodePtr &node) -> std::vector<NodeEntry> {
    if (output[nid] || !isNoOp(idx, shapes, dtypes, nid))
      return {};
    return {node->inputs[0]};
  });
}

} // namespace

void registerEliminateIdentityPass() {
  PassRegistry::get().add(
      {.name = "EliminateIdentity",
       .summary = "removes copies (ONNX Identity), reshapes to the same shape, identity "
                  "transposes, casts to the dtype a value has",
       .optLevel = 3,
       .changesGraph = true,
       .run = eliminateIdentity});
}

} // namespace loupe
