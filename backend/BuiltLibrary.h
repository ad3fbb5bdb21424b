// BuiltLibrary: what a build leaves — each function's loops, the machine code, the params the
// deploy graph reads and its outputs' names — and how a deploy graph is asked for it. Below the
// build driver (Build.h): the executor, :export, the tuner and the front ends read a build's
// output without including the pipeline that made it.
#pragma once

#include "backend/Codegen.h"
#include "backend/LowerFunction.h"
#include "core/Buffers.h"
#include "core/Graph.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loupe::backend {

/// The compiled side of a built module (FusedModule::compiled): each function's loops and the
/// machine code.
struct BuiltLibrary {
  std::map<std::string, LoweredFunction> lowered;
  std::unique_ptr<CompiledModule> code;
  /// The params the deploy graph reads (after precomputation), by variable name, in their own
  /// dtype.
  StoredTensors params;
  /// The outputs' names in the graph the build started from (a layout pass may have renamed a
  /// deploy graph's head "y_NCHW"): what `:outputs` and `:run save=` call them.
  std::vector<std::string> outputNames;
  /// Whether its kernels run with subnormals flushed to zero (the runtime sets the threads'
  /// floating-point environment around every run).
  bool flushDenormals = false;
};

/// The library of a built deploy graph, or null when the graph was not built.
std::shared_ptr<const BuiltLibrary> builtLibrary(const Graph &g);

} // namespace loupe::backend
