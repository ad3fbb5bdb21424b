// DeployGraph: the whole-network side of an export — C source that runs a built deploy graph
// (storage, params, the kernels in order, inputs and outputs by name) on the runtime's thread
// pool, and the declarations deploy.h gives it.
#pragma once

#include "core/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loupe::backend {

/// What deploy_graph.c and deploy.h are made of for one built graph.
struct DeploySource {
  std::string graphC;    ///< deploy_graph.c: the tables and the entry points
  std::string header;    ///< appended to deploy.h: the API and the inputs' and outputs' facts
  std::string paramsS;   ///< params.S: the params' bytes, `.incbin`'d from params.bin
  std::string paramsBin; ///< params.bin: every param's bytes, each 64-byte aligned
};

/// The whole-network source of built graphs `variants`: one, or a dynamic build's variants (the
/// same network built for several sizes; each a table the entry points pick by its sizes, the
/// params they share placed once). Throws Error when one was not built.
DeploySource deploySource(const std::vector<Graph> &variants);

} // namespace loupe::backend
