// Tuner: a model-guided search of each task's knob space (AutoTVM's XGBTuner: a cost model that
// learns from measurements steers a simulated-annealing search), with the time spread over the
// tasks by the gain each still promises (Ansor's task scheduler), every measurement logged.
#pragma once

#include "backend/tune/CostModel.h"
#include "backend/tune/Measure.h"
#include "backend/tune/Records.h"
#include "backend/tune/Task.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace loupe::backend {

/// What a tuning run may spend and where it writes.
struct TuneOptions {
  int trialsPerTask = 0; ///< most points measured per task; 0: no limit but the time
  double seconds = 60;   ///< the whole run's time
  int workers = 0;       ///< measuring processes; 0: one per hardware thread
  int batch = 8;         ///< points measured per round of a task
  uint64_t seed = 1;     ///< the search's random choices
  MeasureOptions measure;
  std::filesystem::path log; ///< where every measurement is appended ("" for nowhere)
  std::string target;        ///< targetDescription of the CPU the tasks are built for
  double peakGflops = 0;     ///< this machine's FP32 peak (for the status line), 0 if unknown
};

/// Where one task's search stands.
struct TaskResult {
  Task task;
  int trials = 0;         ///< points measured (the rule's included)
  int failures = 0;       ///< of them wrong, timed out or in error
  double ruleMs = 0;      ///< the rule's time (0 when it failed)
  double bestMs = 0;      ///< the fastest ok point's time
  Config best;            ///< that point
  int bestTrial = 0;      ///< its trial number
  bool exhausted = false; ///< every point within the limits measured
  /// After each round: (trials so far, best GFLOP/s so far), for the curve the viewer draws.
  std::vector<std::pair<int, double>> curve;
  std::vector<std::string> notes; ///< the failed candidates, a line each

  double bestGflops() const { return bestMs > 0 ? task.flops / bestMs / 1e6 : 0; }
  double gain() const { return bestMs > 0 && ruleMs > 0 ? ruleMs / bestMs : 0; }
  /// Whether the best is a point other than the rule.
  bool beatsRule() const { return !best.empty() && best != task.rule; }
};

/// What the tuner is doing, for a status line.
struct TuneStatus {
  size_t task = 0; ///< index into results()
  size_t tasks = 0;
  int trials = 0; ///< all tasks together
  double elapsed = 0;
  const TaskResult *result = nullptr; ///< the task just measured
};

/// Measures points of a task (a MeasurePool's, or a test's).
using MeasureFn =
    std::function<std::vector<Measurement>(const Task &, const std::vector<Config> &)>;

/// A tuning run over a set of tasks.
class Tuner {
public:
  /// With `measure` empty, points are measured by a MeasurePool of `options.workers`.
  Tuner(std::vector<Task> tasks, TuneOptions options, MeasureFn measure = {});
  ~Tuner();

  /// Tunes until the time or trials are spent or every space is exhausted. Ctrl-C stops it at
  /// the next check and returns normally with interrupted() set: what was measured is in the
  /// results and the log. `progress` is called after every round.
  void run(const std::function<void(const TuneStatus &)> &progress = {});

  const std::vector<TaskResult> &results() const { return results_; }
  bool interrupted() const { return interrupted_; }

private:
  void round(size_t t);
  /// Measures a task's best point and its rule twice more, alternately, and keeps the rule
  /// when it is as fast (a best found by one lucky measurement).
  void confirm(size_t t);
  TuningRecord recordOf(const TaskResult &r, const Config &c, const Measurement &m) const;
  std::vector<Config> proposals(size_t t, size_t count);

  TuneOptions options_;
  MeasureFn measure_;
  std::unique_ptr<MeasurePool> pool_;
  std::vector<TaskResult> results_;
  struct Search; ///< per task: measured points, the model
  std::vector<std::unique_ptr<Search>> searches_;
  uint64_t rng_;
  int totalTrials_ = 0;
  bool interrupted_ = false;
};

/// The record of measurement `m` of point `c` of task `t` on `target` (trial number `trial`),
/// as the log keeps it: the thread count, the time, whether `c` is the rule, the family and sizes
/// of a dynamic build's variant.
TuningRecord measurementRecord(const Task &t, const Config &c, const Measurement &m,
                               const std::string &target, int trial);

/// The next random number of a xorshift generator (the search's, so runs repeat for a seed).
uint64_t nextRandom(uint64_t &state);

} // namespace loupe::backend
