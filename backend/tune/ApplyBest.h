// ApplyBest: which point of a task's space a build applies from a tuning log (AutoTVM's
// ApplyHistoryBest), and for a size of a dynamic build never tuned, the point that won at the
// nearest size that was (DietCode's point: one tuned point serves a range of sizes).
#pragma once

#include "backend/tune/Records.h"
#include "core/SymExpr.h"

#include <optional>
#include <string>
#include <vector>

namespace loupe::backend {

/// What a log says to build for one task.
struct PointChoice {
  /// The point to build; empty: the rule.
  std::optional<Config> point;
  /// For a point, where it comes from ("record FILE:LINE (trial 12; 1.31x the rule's speed when
  /// measured)"); for the rule, why ("the rule (no record of this task in FILE)").
  std::string source;
  /// The log holds no record of the task measured at this thread count.
  bool unmeasured = false;
};

/// The point a build applies for `task` on `target` at `threads` threads, whose rule is `rule`:
/// the fastest record (of the confirmation records where the task has any), when it is not the
/// rule, ran in at most kApplyShare of the rule's time, and was no slower than the rule in the
/// network where `:tune`'s check measured both. `file` names the log in the source.
PointChoice choosePoint(const TuningLog &log, const std::string &file, const std::string &task,
                        const std::string &target, int threads, const Config &rule);

/// One size a family was tuned at, and what wins there.
struct SizeWinner {
  SymBindings sizes;
  std::string task;     ///< the family's task at these sizes
  std::string function; ///< its function's name
  Config rule;          ///< its rule (the record flagged `rule`)
  PointChoice choice;   ///< what a build of these sizes applies
};

/// Every size the log holds records of `family` at (on `target`, at `threads` threads) whose
/// rule was measured, in the order of their sizes, with the point that wins at each.
std::vector<SizeWinner> sizeWinners(const TuningLog &log, const std::string &file,
                                    const std::string &family, const std::string &target,
                                    int threads);

/// The size of `winners` nearest to `sizes`: the least sum over the symbols of |ln(a/b)| (a size
/// twice as large is as far as one half as large); on a tie, the larger. Null when `winners` is
/// empty or binds other symbols.
const SizeWinner *nearestSize(const std::vector<SizeWinner> &winners, const SymBindings &sizes);

/// For a function of `family` at `sizes` whose own task the log has no record of: the point that
/// won at the nearest size tuned, when it is not that size's rule; the source says so, naming
/// the sizes tuned. `unmeasured` when the family was tuned at no size.
PointChoice nearestPoint(const TuningLog &log, const std::string &file, const std::string &family,
                         const SymBindings &sizes, const std::string &target, int threads);

} // namespace loupe::backend
