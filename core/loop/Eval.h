// Eval: an interpreter for lowered loop IR, to check lowering and schedules against the
// reference interpreter without LLVM.
#pragma once

#include "core/loop/LoopIR.h"

#include <map>

namespace loupe::loop {

/// A flat buffer: its dtype and its elements (held as doubles, rounded to the dtype on store).
struct Buffer {
  int dtype = 0;
  std::vector<double> data;
};

using Buffers = std::map<std::string, Buffer>;

/// Runs a lowered statement. Argument buffers must be present in `buffers`; Allocate adds
/// (zeroed) buffers for its body. Float arithmetic is rounded to the expression's dtype after
/// every operation, as compiled float32 code computes. Throws Error on a load or store out of
/// bounds, an unknown buffer or variable, or a construct that lowering should have removed.
void run(const Stmt &s, Buffers &buffers);

} // namespace loupe::loop
