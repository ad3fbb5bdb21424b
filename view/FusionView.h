// FusionView: the fusion groups of a snapshot as the viewer colours them — after
// GraphFusePartition from its attributes, and on a built deploy graph from the fused functions
// behind each tvm_op — with the same colour for the same group in both.
#pragma once

#include "core/Graph.h"
#include "view/GraphLayout.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace loupe {
struct GroupMatcher; // passes/Provenance.h
}

namespace loupe::gui {

/// One group as drawn.
struct GroupView {
  int index = 0;                        ///< position among the snapshot's groups (colour choice)
  std::vector<uint32_t> members;        ///< node ids in this snapshot (a deploy graph: its tvm_op)
  std::vector<std::string> memberNames; ///< source op names (for a tvm_op, its function's ops)
  uint32_t root = 0;                    ///< node id of the root in this snapshot
  std::string rootName, masterName;     ///< masterName empty when the group has no master
  std::string pattern;                  ///< the root's derived pattern name
  std::string function;                 ///< the fused function's name (`fuse_conv2d_relu`)
  uint32_t colour = 0;                  ///< RGBA (0xRRGGBBAA)
};

/// Whether a snapshot has groups to show (partition attributes or a compiled module).
bool hasGroups(const Graph &g);

/// The groups of a partitioned graph (group_root, group_master, pattern) or of a deploy graph
/// (tvm_op nodes and `module`), in root order; empty when there are none.
std::vector<GroupView> fusionGroups(const Graph &g);

/// Per node id of a graph of `numNodes` nodes, the GroupView::index of its group, or -1.
std::vector<int> nodeGroups(const std::vector<GroupView> &groups, size_t numNodes);

/// What a group's region tells on hover: its function, pattern, root and master ("None").
std::string groupSummary(const GroupView &g);

/// The badge in the corner of node `name`'s box: "R" for the group's root, "M" for its master,
/// "RM" for both, empty for neither.
std::string groupBadge(const GroupView &g, const std::string &name);

/// The region drawn around a group of two or more nodes: the bounding box of its members'
/// boxes in a layout, grown by `margin`.
struct GroupRegion {
  int group = 0; ///< GroupView::index
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// Regions of the groups with two or more members laid out in `layout`.
std::vector<GroupRegion> groupRegions(const std::vector<GroupView> &groups,
                                      const GraphLayout &layout, double margin);

/// The boxes of the groups of two or more nodes whose roots are named in `roots`, for
/// LayoutOptions::collapsed: members in id order (the root first), labelled with the function,
/// the group's pattern and its ops ("3 ops: conv2d, add, relu"), and the root's output shape
/// and dtype.
std::vector<CollapsedBox> collapsedBoxes(const Graph &g, const std::vector<GroupView> &groups,
                                         const std::set<std::string> &roots);

/// The nodes of `source`, the graph a deploy graph was built from, that tvm_op `nid` of
/// `deploy` computes: its fused function's ops matched to `source` from the node the tvm_op is
/// named after (its group's root) back through the function's inputs, op by op (same op or same
/// name), so a function shared by several groups maps each tvm_op to its own nodes. Ops the build
/// rewrote match nothing. Ids in increasing order; empty for a node that is not a tvm_op.
std::vector<uint32_t> sourceNodesOf(const Graph &deploy, uint32_t nid, const Graph &source);

/// The tvm_op of `deploy` whose sourceNodesOf contain node `nid` of `source`, or -1.
int kernelOf(const Graph &deploy, const Graph &source, uint32_t nid);

/// Two partitions of the same graph compared (GraphFusePartition under two settings: fusion
/// rules, opt levels, `nofuse`, two builds): the groups of each that the other has not, a group
/// being the same when the other has one of the same member names, or with `matcher` (made for
/// the two steps) by provenance as `:compare` decides. GroupView::index values.
struct PartitionDiff {
  std::set<int> onlyA, onlyB;
};
PartitionDiff comparePartitions(const std::vector<GroupView> &a, const std::vector<GroupView> &b,
                                const GroupMatcher *matcher = nullptr);

/// The colour of the `index`-th group: a palette of clearly different hues, repeated.
uint32_t groupColour(int index);
/// Number of colours in the palette.
int paletteSize();

} // namespace loupe::gui
