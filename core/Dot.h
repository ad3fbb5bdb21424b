// Dot: a graph as Graphviz DOT text (`:dot FILE`), for `dot -Tsvg` and the viewer.
#pragma once

#include "core/Graph.h"

#include <string>

namespace loupe {

/// The graph in DOT: one node per graph node (variables as ellipses, ops as boxes labelled with
/// name and op — a tvm_op with its function — plus each output's shape and dtype once
/// inferred), an edge per input (labelled with the output index when the producer has several),
/// and, after GraphFusePartition, one cluster per fusion group of two or more nodes.
std::string graphToDot(const Graph &g);

} // namespace loupe
