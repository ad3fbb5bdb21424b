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

/// The whole-network source of built graph `deploy`. Throws Error when it was not built.
DeploySource deploySource(const Graph &deploy);

} // namespace loupe::backend
