// BufferChart: PlanMemory's storage as a chart over execution order — one row per storage
// slot, one bar per entry from the node that makes it to the last node that reads it.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loupe::gui {

/// One entry's lifetime in its slot, in node ids (the execution order).
struct BufferBar {
  uint32_t entry = 0;
  std::string name; ///< "node" or "node.k"
  int64_t bytes = 0;
  uint32_t first = 0, last = 0;
};

/// One storage slot: its size is its largest entry.
struct BufferRow {
  int64_t storage = 0;
  int64_t bytes = 0;
  std::vector<BufferBar> bars; ///< by first use
};

struct BufferChart {
  std::vector<BufferRow> rows; ///< by storage id
  uint32_t steps = 0;          ///< number of nodes (the x axis)
  int64_t planned = 0;         ///< sum of the slots' sizes
  int64_t naive = 0;           ///< one buffer per entry
};

/// The chart of a graph with storage_id, shape and dtype (after PlanMemory or build). Throws
/// Error naming the missing attribute otherwise.
BufferChart bufferChart(const Graph &g);

} // namespace loupe::gui
