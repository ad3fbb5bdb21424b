// FoldShapeOf: replaces every shape_of whose input's shape is known by a `const` of that shape,
// then runs FoldConstant, so the computations on shapes (the Shape -> Gather -> Concat chains
// of an export) become constants once the input shapes are given; :build runs it when the
// graph has a shape_of.
#include "passes/Pass.h"

#include "core/Attrs.h"
#include "core/Error.h"
#include "core/Rewrite.h"
#include "core/ops/OpHelpers.h"
#include "passes/PatternUtil.h"

namespace loupe {

namespace {

Graph foldShapeOf(const Graph &src, const PassContext &ctx) {
  // The shapes from the graph's own inputs (a private, uninstrumented InferShape).
  Graph shaped = applyPasses(src, {"InferShape"});
  const IndexedGraph &idx = shaped.index();
  const auto &shapes = shaped.attr("shape")->shapes;
  std::map<const Node *, Shape> known;
  for (uint32_t nid = 0; nid < idx.nodes.size(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable() || n.op->name != "shape_of")
      continue;
    const Shape &in = shapes[idx.entryId(idx.nodes[nid].inputs[0])];
    if (shapeKnown(in))
      known[&n] = in;
  }
  if (known.empty())
    return src;
  Graph out = rewriteGraph(src, [&](uint32_t, const NodePtr &node) -> std::vector<NodeEntry> {
    auto it = known.find(node.get());
    if (it == known.end())
      return {};
    auto [start, end] = ops::shapeRange(node->parsed, it->second.size());
    Tensor dims({end - start}, kInt64);
    for (int64_t d = start; d < end; ++d)
      dims.data[d - start] = static_cast<double>(it->second[d]);
    return {{constantNode(dims, node->name), 0, 0}};
  });
  // What reads the shapes folds with them.
  return runPass(out, requirePass("FoldConstant"), ctx);
}

} // namespace

void registerFoldShapeOfPass() {
  PassRegistry::get().add({.name = "FoldShapeOf",
                           .summary =
                               "replaces shape_of of a known shape by a constant, then folds what "
                               "reads it (FoldConstant)",
                           .optLevel = 0,
                           .changesGraph = true,
                           .run = foldShapeOf});
}

} // namespace loupe
