// Export: a built graph written out for deployment — deploy graph JSON, shared library, C
// header and params — as NNVM's users did with graph.json(), lib.export_library and params.
#pragma once

#include "core/Graph.h"
#include "core/SymExpr.h"

#include <string>
#include <vector>

namespace loupe::backend {

/// Writes into `dir` (created if needed): `deploy.json` (the deploy graph without compiled
/// objects), `deploy.so` (the functions, linked by the system C compiler: $CC or cc), `deploy.h`
/// (their C declarations) and `params/NAME.npy` per param. Everything is made in a scratch
/// directory first, so on any failure `dir` holds nothing new. Returns the files written,
/// relative to `dir`. Throws Error when the graph was not built or a step fails. A dynamic build
/// (or a variant of one) exports a variant per size into the one library: those `sizes` names
/// (each built now if it was not), or with none, every size built so far.
std::vector<std::string> exportBuild(const Graph &deploy, const std::string &dir,
                                     const std::vector<SymBindings> &sizes = {});

} // namespace loupe::backend
