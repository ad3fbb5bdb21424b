// PartitionLoops: loops split where the bounds tests of their lazy selects are decided, and
// tests that do not change inside a loop body hoisted out of it (TVM's LoopPartition with
// Halide's loop unswitching), so the interior of a padded convolution runs without a branch.
#pragma once

#include "core/loop/LoopIR.h"

#include <cstdint>
#include <map>
#include <optional>

namespace loupe::loop {

/// An integer range [lo, hi], both included.
struct Interval {
  int64_t lo = 0, hi = 0;
};

/// Ranges of variables (by identity).
using VarRanges = std::map<const ExprNode *, Interval>;

/// The range of an integer expression given its variables' ranges (constants, + - *, division
/// and remainder by a positive constant, min, max), or nothing when it cannot be bounded.
std::optional<Interval> boundsOf(const Expr &e, const VarRanges &ranges);

/// Whether a condition holds for every value of its variables in `ranges` (true), for none
/// (false), or depends on them (nothing). Conjunctions, disjunctions, negations and integer
/// comparisons are decided part by part.
std::optional<bool> decide(const Expr &cond, const VarRanges &ranges);

/// The statement with
/// - every tvm_if_then_else whose condition its enclosing loops decide replaced by the side it
///   takes, and the parts of a condition they decide dropped;
/// - each serial loop whose lazy selects test its variable (x*28 + k >= 1 on a padded row)
///   split in up to three loops: the longest run of iterations where all those tests are
///   decided the same way, without them, and the iterations before and after it (when that
///   run is at least half the loop);
/// - in a loop's body, the tests that use the loop's variable but nothing the body binds
///   (the row's bounds test at one kernel tap) hoisted into one `if` around the body, which
///   then runs without them; the else branch is the body as it was.
/// The result computes the same values, in the same order of floating-point operations.
Stmt partitionLoops(const Stmt &s);

/// The statement with every integer division and remainder by a constant that the ranges of
/// its enclosing loops resolve rewritten (TVM's Simplify with its loops' ranges): (q·c + r) / c
/// is q and % c is r when r is known to lie in [0, c), as a blocked layout's index read through
/// a reshape leaves them, so that a vector's index is seen to be consecutive in its lanes.
Stmt simplifyIndices(const Stmt &s);

} // namespace loupe::loop
