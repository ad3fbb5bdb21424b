// Export: a built graph written out for deployment — deploy graph JSON, shared library, C
// header and params — as NNVM's users did with graph.json(), lib.export_library and params.
#pragma once

#include "core/Graph.h"

#include <string>
#include <vector>

namespace loupe::backend {

/// Writes into `dir` (created if needed): `deploy.json` (the deploy graph without compiled
/// objects), `deploy.so` (the functions, linked by the system C compiler: $CC or cc), `deploy.h`
/// (their C declarations) and `params/NAME.npy` per param. Everything is made in a scratch
/// directory first, so on any failure `dir` holds nothing new. Returns the files written,
/// relative to `dir`. Throws Error when the graph was not built or a step fails.
std::vector<std::string> exportBuild(const Graph &deploy, const std::string &dir);

/// exportBuild of a dynamic build's variants `variants` (built graphs of one DynamicBuild, in the
/// order their tables take), rather than every variant it has built.
std::vector<std::string> exportVariants(const std::vector<Graph> &variants, const std::string &dir);

} // namespace loupe::backend
