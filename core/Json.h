// Json: NNVM's graph JSON (SaveJSON / LoadJSON, nnvm-spec §1.3), byte for byte.
#pragma once

#include "core/Graph.h"

#include <string>

namespace loupe {

/// The graph as NNVM's SaveJSON writes it (dmlc JSONWriter layout). Throws Error if a graph
/// attribute cannot be serialised (e.g. a compiled module).
std::string saveJSON(const Graph &g);

/// Parses NNVM graph JSON. `source` names the input in messages ("model.json"); malformed text
/// gives "source:LINE:COL: …", structural problems name the node. Unknown ops are errors.
Graph loadJSON(const std::string &text, const std::string &source = "<json>");

} // namespace loupe
