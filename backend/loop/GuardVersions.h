// GuardVersions: a generic kernel's tiles run without their bounds tests where the whole tile is
// in bounds — each parallel tile loop's body in two versions, chosen per iteration, and each
// serial loop over a symbolic extent split before its tail (opt_level 3, after lowering).
#pragma once

#include "core/loop/LoopIR.h"

namespace loupe::loop {

/// In each parallel loop, the guards `if (likely(a < n))` of its body that read a size symbol
/// (a generic kernel's tail tests) and whose `a` grows with the loops inside the body
/// (constant ranges, non-negative coefficients) are tested once per iteration at their largest
/// `a`: where all hold, the body runs a copy without them, its guarded vector loops vectorised
/// again; elsewhere (the last tiles) the guarded body. Kernels of fixed sizes have no such
/// guards and are returned unchanged. First, each serial loop over a symbolic extent whose body
/// tests `a < n` with `a` growing with it (a reduction along `seq` in vectors of 64, its last
/// vector's lanes tested) runs in two loops: the iterations where every such test holds, without
/// them, then the rest with them.
Stmt versionSymbolicGuards(const Stmt &body);

} // namespace loupe::loop
