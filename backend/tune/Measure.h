// Measure: a candidate point of a task's space compiled, run on this machine until its time is
// stable, and checked against the rule's output — in worker processes, so that a candidate that
// hangs or crashes is abandoned without harm; compiled in parallel, timed one at a time.
#pragma once

#include "backend/schedule/Space.h"
#include "backend/tune/Task.h"
#include "core/FusedModule.h"
#include "core/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace loupe::backend {

/// How a candidate is measured.
struct MeasureOptions {
  double minRepeatMs = 20; ///< each repeat calls the kernel until this much time has passed
  int repeats = 3;         ///< repeats; the fastest is the candidate's time
  /// A candidate whose compile, or whose measurement, takes longer is abandoned ("timeout").
  double timeoutSeconds = 10;
  /// The largest difference from the rule's outputs, relative to their largest magnitude,
  /// that still counts as the same computation (summation order and FMA contraction move the
  /// last bits).
  double tolerance = 1e-4;
};

/// One candidate measured.
struct Measurement {
  std::string status = "ok"; ///< ok, wrong (output differs), timeout or error
  double ms = 0;             ///< the fastest repeat's time per call
  double compileMs = 0;
  double relError = 0; ///< its largest difference from the rule's outputs, relative
  std::string message; ///< what went wrong, when not ok
};

/// How far `got` is from `reference`: the largest absolute difference of an element divided by
/// the largest magnitude in `reference` (0 when equal; infinity when their shapes differ or a NaN
/// appears on one side only). A candidate farther than MeasureOptions::tolerance is wrong.
double outputDifference(const std::vector<Tensor> &reference, const std::vector<Tensor> &got);

/// Measures points of one fused function in this process: the inputs are made once (seeded
/// random values), the rule's point is compiled and run once for the reference outputs. Throws
/// Error when the function cannot be lowered or compiled at its rule.
class CandidateRunner {
public:
  explicit CandidateRunner(const FusedFunction &f);
  ~CandidateRunner();
  /// Lowers the function at `c` and compiles it (the previous candidate is dropped). Throws
  /// Error when it cannot.
  void compile(const Config &c);
  /// Runs the compiled candidate: its output compared with the reference, then timed.
  Measurement measure(const MeasureOptions &o);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A tuning worker's main loop: requests as JSON lines on `in` (task, compile, measure), one
/// JSON line answer each on `out`, until end of input. What `loupe --tune-worker` runs.
int tuneWorkerMain();

/// Worker processes measuring candidates for the tuner.
class MeasurePool {
public:
  /// `workers` processes (at least one) of the command in $LOUPE_TUNE_WORKER, else of this
  /// executable, with `--tune-worker`.
  MeasurePool(int workers, MeasureOptions options);
  ~MeasurePool();
  MeasurePool(const MeasurePool &) = delete;
  MeasurePool &operator=(const MeasurePool &) = delete;

  /// Measures `configs` of `task`, one result each in order: up to `workers` compiled at once,
  /// then timed one at a time, so that timings do not share the machine. Ctrl-C (checked while
  /// waiting) throws Interrupted after stopping the workers.
  std::vector<Measurement> measure(const Task &task, const std::vector<Config> &configs);

  const MeasureOptions &options() const { return options_; }

private:
  struct Worker;
  MeasureOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

} // namespace loupe::backend
