// Task: one tuning task — a fused function's computation on one target, with the knob space its
// schedule declares. The same layer in two networks (or twice in one) is one task.
#pragma once

#include "backend/LowerFunction.h"
#include "backend/schedule/Space.h"
#include "core/FusedModule.h"

#include <memory>
#include <string>
#include <vector>

namespace loupe::backend {

/// A task: what to tune, and what it is known by.
struct Task {
  std::string key;  ///< taskKey of its lowered function
  std::string name; ///< the first function that computes it
  std::shared_ptr<const FusedFunction> function;
  ConfigSpace space; ///< the knobs its schedule declares
  Config rule;       ///< the space's default point: the schedule's rules
  int64_t flops = 0; ///< per call
  int calls = 0;     ///< tvm_op nodes that call a function of this task
  /// On a variant of a dynamic build: the function's family across sizes (taskFamily) and the
  /// sizes bound ("batch=1, seq=64"); both empty on any other build.
  std::string family;
  std::string sizes;
};

/// The task a lowered function computes: a hash (16 hex digits) of its compute graph (shapes,
/// dtypes, bodies, tags; not its name), whether it is opt_level 3's, and the CPU its schedule
/// sizes for.
std::string taskKey(const LoweredFunction &f);

/// The family of a function of a dynamic build: the function that computes the same node (by
/// the name of the tvm_op node that first calls its task: a graph's nodes are named alike at every
/// size, its functions are not) of the same symbolic graph (`scope`, the build's fingerprint)
/// with the same knobs, at whatever sizes — what lets a point tuned at one size be tried at
/// another (16 hex digits).
std::string taskFamily(const std::string &scope, const std::string &node, const ConfigSpace &space);

/// The tasks of a built deploy graph: its functions whose schedules have knobs, grouped by task,
/// in the order the graph first calls them.
std::vector<Task> extractTasks(const Graph &built);

/// The loops of task `t`'s function at point `best` of its space (its schedule's rules when
/// empty), as `:lower` prints them: what the viewer's Tuning panel shows of the best point.
std::string taskLoops(const Task &t, const Config &best);

/// A fused function as JSON text (its body as NNVM graph JSON), for a measuring process.
std::string functionToJson(const FusedFunction &f);

/// The fused function functionToJson wrote; errors name `source`.
FusedFunction functionFromJson(const std::string &text, const std::string &source);

} // namespace loupe::backend
