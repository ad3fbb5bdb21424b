// NetworkCheck: the tuned points measured where they run — the whole built graph at its rules
// and at its best records, run in turns — so that a point that is faster alone but slower among
// the network's other kernels (which evict its operands from the caches) is not applied.
#pragma once

#include "backend/Build.h"
#include "backend/schedule/Space.h"
#include "core/Tensor.h"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace loupe::backend {

/// One function whose best record the tuned build applies, against its rule in the network.
struct NetworkCheckRow {
  std::string function;
  Config point;       ///< the applied point
  int calls = 0;      ///< calls per run of the graph
  double ruleMs = 0;  ///< per call: the median over the runs of the rule's build
  double tunedMs = 0; ///< per call: the median over the runs of the tuned build
  /// Whether the point stays applied: it ran no slower than the rule in the network.
  bool kept() const { return tunedMs <= ruleMs; }
};

/// What a network check measured.
struct NetworkCheck {
  std::vector<NetworkCheckRow> rows; ///< heaviest first (calls x rule time)
  int runs = 0;                      ///< runs of each build measured (fewer when interrupted)
  double ruleTotalMs = 0, tunedTotalMs = 0; ///< each build's kernels summed, medians per kernel
};

/// Compiles the built `deploy` graph at its rules and at the best records of `tuning` (a log
/// file or folder, as BuildOptions::tuning), and, when the second applies any point, runs both
/// on `inputs` `runs` times, in turns after a warm-up run each. With `log` non-empty, appends two
/// network records per row (the rule's and the point's time per call; TuningRecord::network),
/// which `:build` then reads. Ctrl-C stops the runs: the finished ones are compared and
/// recorded, and Interrupted is thrown when none finished. Throws Error for a graph that was not
/// built or inputs that do not fit it.
NetworkCheck checkInNetwork(const Graph &deploy, const std::map<std::string, Tensor> &inputs,
                            const std::filesystem::path &tuning, std::shared_ptr<KernelCache> cache,
                            int runs, const std::filesystem::path &log);

} // namespace loupe::backend
