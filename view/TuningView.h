// TuningView: what the Tuning panel shows of a build's tasks — each task's measurements in the
// tuning log as a best-so-far curve, its best point beside the rule's, and the best's loops.
#pragma once

#include "backend/tune/ApplyBest.h"
#include "backend/tune/Records.h"
#include "backend/tune/Task.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace loupe::gui {

/// One task of the build with what the log holds for it.
struct TaskTuning {
  backend::Task task;
  int trials = 0;    ///< records of this task on this target
  int failures = 0;  ///< of them wrong, timed out or in error
  double ruleMs = 0; ///< the rule's fastest ok record (0: not measured)
  double bestMs = 0; ///< the fastest ok record
  backend::Config best;
  size_t bestLine = 0; ///< its line in the log
  /// After each record, in log order: (trials so far, the best ok time so far in ms; 0 before
  /// the first ok one).
  std::vector<std::pair<int, double>> curve;
  /// On a dynamic build's variant: the sizes its function was tuned at, with the point that wins
  /// at each (sizeWinners), in order of sizes.
  std::vector<backend::SizeWinner> sizes;
  /// When this size was never measured and `best` is the point that won at the nearest size
  /// tuned (what its build applies): those sizes ("batch=4"); else "".
  std::string bestFrom;
  double gain() const { return ruleMs > 0 && bestMs > 0 ? ruleMs / bestMs : 0; }
  double bestGflops() const { return bestMs > 0 ? task.flops / bestMs / 1e6 : 0; }
  double ruleGflops() const { return ruleMs > 0 ? task.flops / ruleMs / 1e6 : 0; }
  /// The speed the panel plots for a time: GFLOP/s, or runs per millisecond for a kernel that
  /// only moves data (no flops).
  double speed(double ms) const {
    return ms <= 0 ? 0 : task.flops > 0 ? task.flops / ms / 1e6 : 1 / ms;
  }
  const char *speedUnit() const { return task.flops > 0 ? "GFLOP/s" : "runs/ms"; }
};

/// The Tuning panel's model: the tasks and the log they were read from.
struct TuningView {
  std::filesystem::path log;         ///< "" when tuning is off
  std::vector<TaskTuning> tasks;     ///< in the build's order
  std::vector<std::string> warnings; ///< the log's damaged lines
  std::uintmax_t logBytes = 0;       ///< the log's size when read (re-read when it grows)
};

/// The tasks with the records of `log` that match their keys and `target` (a missing log: none).
TuningView tuningView(const std::vector<backend::Task> &tasks, const std::string &target,
                      const std::filesystem::path &log);

/// One row of the knob table: name, the rule's value, the best point's value, what it decides.
struct KnobRow {
  std::string name;
  int64_t rule = 0, best = 0;
  std::string doc;
};

/// The task to show first: the one with the most work (calls x flops; the first of equals).
size_t heaviestTask(const TuningView &v);

/// The knobs of a task, the best point's values beside the rule's (the rule's where there is no
/// best yet).
std::vector<KnobRow> knobRows(const TaskTuning &t);

/// The loops of the task's function lowered at its best point (at the rule's without one), or
/// the error that lowering gave.
std::string bestLoops(const TaskTuning &t);

} // namespace loupe::gui
