// Stages: what the schedule files share about a schedule's stages — the stage that computes
// each tensor, substitutions of axis variables, and inlined stages' bodies in place of reads.
#pragma once

#include "backend/schedule/Schedule.h"

#include <map>
#include <utility>
#include <vector>

namespace loupe::backend {

/// Axis variables and what they become.
using VarMap = std::vector<std::pair<const loop::ExprNode *, loop::Expr>>;

/// The stage computing each tensor.
using StageMap = std::map<const loop::Compute *, const Stage *>;

/// The StageMap of `stages`.
StageMap stageMap(const std::vector<Stage> &stages);

/// `e` with every read of an inlined stage replaced by that stage's body (recursively).
loop::Expr inlineStages(const loop::Expr &e, const StageMap &stageOf);

/// The loop of data axis `axis`, dimension `d` of `shape`: its size, or for a symbolic
/// dimension extent 0 and its expression (read through a const reference, which keeps a
/// symbolic shape's expressions).
Leaf axisLeaf(const loop::Expr &axis, const Shape &shape, size_t d);

/// `a - b` with equal terms cancelled: how far `a` lies past `b` (a local stage's index into
/// its region; Bounds.cpp).
loop::Expr offsetFrom(const loop::Expr &a, const loop::Expr &b);

} // namespace loupe::backend
