// StepDiff: what changed between two graph snapshots, node by node (for colouring the graph
// view) and as the textual IR diff shown under it.
#pragma once

#include "core/Graph.h"

#include <map>
#include <string>
#include <vector>

namespace loupe::gui {

enum class Change { Same, Added, Removed, Changed };

/// One node's change; nodes are matched by name (and, for repeated names, occurrence).
struct NodeChange {
  std::string name;
  Change change = Change::Same;
  /// For Changed: "op conv2d -> _contrib_conv2d_NCHWc", "attr layout: NCHW -> NCHW8c",
  /// "inputs: data, w -> data_NCHW8c, w".
  std::vector<std::string> details;
};

/// What a row of the change list under the timeline's graphs is.
enum class RowKind {
  Added,
  Removed,
  Changed,
  Detail,
  None,
  Separator,
  DiffAdded,
  DiffRemoved,
  DiffSame
};

/// One row of that list: the changed nodes (each followed by its details), a separator, then the
/// IR diff's lines. Flat, so that the panel draws only the rows in view (densenet-201's
/// GraphFusePartition step has thousands).
struct ChangeRow {
  RowKind kind;
  std::string text;
};

/// The differences between snapshots `a` (before) and `b` (after).
struct StepDiff {
  std::vector<NodeChange> nodes; ///< every added, removed and changed node
  std::string summary;           ///< the pass effect line (`:diff`'s first line)
  std::string irDiff;            ///< unified diff of the printed IR; empty when equal
  /// The change of a node of `b` (Added/Changed/Same) or of `a` (Removed) by node name.
  Change of(const std::string &name) const;
  std::map<std::string, size_t> index; ///< name -> position in `nodes`
  std::vector<ChangeRow> rows;         ///< changeRows(*this), made once by diffGraphs
};

/// The rows of `d`'s change list: "added NAME" / "removed NAME" / "changed NAME" and details,
/// "No node changed." when none did, a separator, and one row per line of the IR diff.
std::vector<ChangeRow> changeRows(const StepDiff &d);

/// The node changes, pass effects, IR diff and rows from snapshot `a` to `b`, the diff's headers
/// naming them `aName` and `bName`.
StepDiff diffGraphs(const Graph &a, const Graph &b, const std::string &aName = "before",
                    const std::string &bName = "after");

} // namespace loupe::gui
