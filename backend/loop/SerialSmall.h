// SerialSmall: a kernel too small to share between cores runs on the calling thread — its
// parallel loops made serial (opt_level 3, after lowering).
#pragma once

#include "core/loop/LoopIR.h"

namespace loupe::loop {

/// A function that executes fewer than a few thousand element statements runs on the calling
/// thread (its parallel loops become serial), since another core costs more than it gains at
/// that size.
Stmt runSmallOnCaller(const Stmt &body);

} // namespace loupe::loop
