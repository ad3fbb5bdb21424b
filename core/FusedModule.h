// FusedModule: the fused functions behind a deploy graph's tvm_op nodes, as sub-graphs the
// reference interpreter can run (the LLVM backend compiles the same functions).
#pragma once

#include "core/Graph.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace loupe {

/// One fused function: its body is a graph over placeholder variables `input0`, `input1`, …
/// carrying `shape` and `dtype`; its outputs are the group root's outputs.
struct FusedFunction {
  std::string name;
  Graph body;
  /// Placeholder names in function-argument order (the tvm_op's input order).
  std::vector<std::string> argNames;
  bool flattenData = false;      ///< arguments arrive flattened to 1-D
  uint32_t root = 0;             ///< node id of the group root in the partitioned graph
  std::vector<uint32_t> members; ///< node ids of the group in the partitioned graph
  /// The opt level it was made at: 3 lowers with the fast schedules (blocked, register-tiled
  /// kernels, FMA contraction); below 3 the seed-era schedules, printed as the seeds show.
  int optLevel = 2;
  /// The target it was made for ("llvm -mcpu=NAME"): opt level 3's schedules size their vectors
  /// and register tiles by its vector unit (core/Target.h).
  std::string target = "llvm";
};

/// The functions of a compiled graph by name (graph attribute `module`).
struct FusedModule {
  std::map<std::string, std::shared_ptr<const FusedFunction>> functions;
  /// The partitioned graph the functions were made from (its `group_root`, `group_master` and
  /// `pattern`), so that `:groups` and `:why` on a built step answer for the partition that build
  /// used, and a kernel can name the nodes it fused.
  std::shared_ptr<const Graph> partition;
  /// What that partition was made with: opt level, fusion rule set and the ops kept unfused.
  int partitionOptLevel = 2;
  std::string fusionRules = "A";
  std::set<std::string> noFuse;
  /// After `build`: the backend's compiled library (backend::BuiltLibrary). Core only carries
  /// it, so a snapshot and its machine code live and die together.
  std::shared_ptr<const void> compiled;
};

} // namespace loupe
