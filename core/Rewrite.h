// Rewrite: rebuilding a graph node by node, sharing every node a change does not reach.
#pragma once

#include "core/Graph.h"

#include <functional>
#include <string>
#include <vector>

namespace loupe {

/// Called for node `nid` (its id in the source graph) with the node rebuilt over the rewritten
/// inputs — the very same object when no input changed. Returns the entries that stand for the
/// node's outputs from now on, or an empty vector to keep the node as it is.
using NodeRewrite = std::function<std::vector<NodeEntry>(uint32_t nid, const NodePtr &node)>;

/// Rebuilds `g` bottom-up in id order. Input versions and control dependencies are carried over;
/// the result has no graph attributes. Throws Error if a rewrite returns the wrong number of
/// outputs.
Graph rewriteGraph(const Graph &g, const NodeRewrite &rewrite);

/// The entry that now stands for output `index` of source node `nodeId` (a node before the one
/// being rewritten).
using RewrittenEntry = std::function<NodeEntry(uint32_t nodeId, uint32_t index)>;

/// As NodeRewrite, for passes that match a pattern on the source graph (where its shapes and
/// node ids are) and build the replacement over the rewritten inputs `now` gives.
using PatternRewrite = std::function<std::vector<NodeEntry>(uint32_t nid, const NodePtr &node,
                                                            const RewrittenEntry &now)>;

/// rewriteGraph with a PatternRewrite.
Graph rewritePatterns(const Graph &g, const PatternRewrite &rewrite);

/// The `pad_width` text of a `pad` that adds `after[d]` elements at the end of each axis d:
/// "((0, 0), (0, 3))", "((0, 3),)" for one axis.
std::string padAfterWidth(const std::vector<int64_t> &after);

} // namespace loupe
