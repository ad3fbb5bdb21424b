// FoldShapeOf: replaces every shape_of whose input's shape is known by a `const` of that shape
// (of a symbolic shape, when the dimensions it selects are constants),
// then runs FoldConstant, so the computations on shapes (the Shape -> Gather -> Concat chains
// of an export) become constants once the input shapes are given; :build runs it when the
// graph has a shape_of.
#include "passes/Pass.h"

#include "core/Attrs.h"
#include "core/Error.h"
#include "core/Rewrite.h"
#include "core/Text.h"
#include "core/ops/OpHelpers.h"
#include "passes/PatternUtil.h"

namespace loupe {

namespace {

Graph foldShapeOf(const Graph &src, const PassContext &ctx) {
  // The shapes from the graph's own inputs (a private, uninstrumented InferShape).
  Graph shaped = applyPasses(src, {"InferShape"});
  const IndexedGraph &idx = shaped.index();
  const auto &shapes = shaped.attr("shape")->shapes;
  // Each foldable shape_of's selected dimensions. Of a symbolic shape, the dimensions it selects
  // fold when they are constants (`shape_of(x, start=2)` of `(batch, seq, 768)`); one that
  // selects a symbol stays, computed at run time, and a remark says which.
  std::map<const Node *, std::vector<int64_t>> known;
  for (uint32_t nid = 0; nid < idx.nodes.size(); ++nid) {
    const Node &n = *idx.nodes[nid].node;
    if (n.isVariable() || n.op->name != "shape_of")
      continue;
    const Shape &in = shapes[idx.entryId(idx.nodes[nid].inputs[0])];
    if (!shapeDescribed(in))
      continue;
    auto [start, end] = ops::shapeRange(n.parsed, in.size());
    std::vector<int64_t> dims;
    std::vector<std::string> symbolic;
    for (int64_t d = start; d < end; ++d) {
      SymExpr e = in.dim(static_cast<size_t>(d));
      if (e.isConstant())
        dims.push_back(e.constant());
      else
        symbolic.push_back(e.str());
    }
    if (symbolic.empty())
      known[&n] = dims;
    else if (ctx.remarks)
      ctx.remarks->push_back(cat("FoldShapeOf: ", n.name, " reads ", joinNames(symbolic), " of ",
                                 shapeToTuple(in),
                                 ": computed when the sizes are "
                                 "bound"));
  }
  if (known.empty())
    return src;
  Graph out = rewriteGraph(src, [&](uint32_t, const NodePtr &node) -> std::vector<NodeEntry> {
    auto it = known.find(node.get());
    if (it == known.end())
      return {};
    Tensor dims({static_cast<int64_t>(it->second.size())}, kInt64);
    for (size_t d = 0; d < it->second.size(); ++d)
      dims.data[d] = static_cast<double>(it->second[d]);
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
