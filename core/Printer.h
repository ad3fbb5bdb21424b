// Printer: PrintGraphIR's text form (nnvm-spec §3) and the Python view of graph.index.nodes.
#pragma once

#include "core/Graph.h"
#include "core/PyFormat.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace loupe {

/// The graph as NNVM's PrintGraphIR prints it, optionally with per-entry (or per-node)
/// graph attributes joined onto each line (`graph.ir(join_entry_attrs=[...])`). Node attributes
/// print in the order NNVM's hash map iterated them (nnvmOrdered). Throws Error for a join key
/// that is not a per-entry or per-node list attribute of the graph. `comment`, when set, gives a
/// node's comment (empty for none), printed after its line as "  # text".
std::string printGraphIR(const Graph &g, const std::vector<std::string> &joinAttrs = {},
                         const std::function<std::string(uint32_t nid)> &comment = {});

/// `graph_attr_keys = [k1, k2]` for a graph with attributes, "" without.
std::string graphAttrKeysLine(const Graph &g);

/// One node as Python's graph.index.nodes[i] shows it: {'op', 'name', 'attrs', 'inputs'}.
PyValue nodeToPy(const IndexedGraph &idx, uint32_t nid);

/// The whole graph.index.nodes list.
PyValue nodesToPy(const IndexedGraph &idx);

/// True for graph attributes that hold one value per node rather than per entry.
bool isPerNodeAttr(const std::string &key);

} // namespace loupe
