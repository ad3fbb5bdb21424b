// Fusion: reading the groups GraphFusePartition wrote — members, argument order and names —
// shared by GraphFuseCompile, `:groups` and the viewer so they can never disagree.
#pragma once

#include "core/Graph.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// GraphFusePartition's answer for a graph, with the reason behind every edge.
struct PartitionResult {
  std::vector<int> root, master, pattern; ///< per node: group_root, group_master, pattern
  /// (producer, consumer) → why the edge was fused or cut, in the words of the rules.
  std::map<std::pair<uint32_t, uint32_t>, std::string> why;
};

/// Runs the partition (nnvm-spec §5) on a graph with `shape`; `rules` is "A", "B" or "C";
/// ops in `noFuse` are treated as opaque.
PartitionResult partitionGraph(const Graph &g, int optLevel, const std::string &rules,
                               const std::set<std::string> &noFuse);

/// One fused group of op nodes (nnvm-spec §6.1).
struct FusedGroup {
  uint32_t root = 0;
  /// Op members in sub-graph order: post-order DFS from the root, inputs left to right.
  std::vector<uint32_t> members;
  int pattern = 0; ///< the root's derived pattern
  int master = -1; ///< group_master of the root
  /// External entries in function-argument order (first reached by the DFS from the root).
  std::vector<IndexedGraph::Entry> arguments;
  /// External entries in placeholder-name order (`input0`, `input1`, … by an id-order scan).
  std::vector<IndexedGraph::Entry> placeholders;
  bool flattenData = false; ///< pattern ElemWise (inputs passed flattened to 1-D)
};

/// The op groups of a partitioned graph, by ascending root id. Throws Error if the graph has
/// no `group_root`/`group_master`/`pattern` attributes.
std::vector<FusedGroup> fusedGroups(const Graph &g);

/// "fuse_conv2d_relu": `fuse` plus `_op` for every member in sub-graph order.
std::string readableName(const IndexedGraph &idx, const FusedGroup &grp);

/// A key equal for groups that compile to the same kernel: member ops with all parameters
/// (defaults included) and wiring, argument shapes and dtypes, and the target.
std::string kernelKey(const Graph &g, const FusedGroup &grp, const std::string &target);

/// GraphFuseCompile's name table (NNVM's compile engine): an identical kernel keeps its first
/// name; a new kernel takes its readable name, or `name_1`, `name_2`, … when taken. It lives as
/// long as the workbench session, as in NNVM.
class FunctionNames {
public:
  /// Names a kernel, recording the choice. (To predict names without recording them, call
  /// this on a copy.)
  std::string assign(const std::string &key, const std::string &readable);

private:
  std::string fresh(const std::string &readable, std::map<std::string, int> &counters,
                    const std::map<std::string, bool> &taken) const;
  std::map<std::string, std::string> byKey_;
  std::map<std::string, int> counters_;
  std::map<std::string, bool> taken_;
};

} // namespace loupe
