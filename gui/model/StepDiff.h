// StepDiff: what changed between two graph snapshots, node by node (for colouring the graph
// view) and as the textual IR diff shown under it.
#pragma once

#include "core/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace loupe::view {

enum class Change { Same, Added, Removed, Changed };

/// One node's change; nodes are matched by name (and, for repeated names, occurrence).
struct NodeChange {
  std::string name;
  Change change = Change::Same;
  /// For Changed: "op conv2d -> _contrib_conv2d_NCHWc", "attr layout: NCHW -> NCHW8c",
  /// "inputs: data, w -> data_NCHW8c, w".
  std::vector<std::string> details;
};

/// The differences between snapshots `a` (before) and `b` (after).
struct StepDiff {
  std::vector<NodeChange> nodes; ///< every added, removed and changed node
  std::string summary;           ///< the pass effect line (`:diff`'s first line)
  std::string irDiff;            ///< unified diff of the printed IR; empty when equal
  /// The change of a node of `b` (Added/Changed/Same) or of `a` (Removed) by node name.
  Change of(const std::string &name) const;
  std::map<std::string, size_t> index; ///< name -> position in `nodes`
};

StepDiff diffGraphs(const Graph &a, const Graph &b, const std::string &aName = "before",
                    const std::string &bName = "after");

} // namespace loupe::view
