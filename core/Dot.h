// Dot: a graph as Graphviz DOT text (`:dot FILE`), for `dot -Tsvg` and the viewer.
#pragma once

#include "core/Graph.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace loupe {

/// Where a layout put a graph, in Graphviz's terms (points, y growing upwards): each node's
/// centre and size, and each edge's B-spline (1 + 3k control points) and arrowhead, keyed by
/// (producer, consumer, input index). graphToDot writes them as `pos`, so that
/// `neato -n2` draws that layout as it is (`:dot FILE placed`: the viewer's picture).
struct DotPlacement {
  struct Box {
    double x = 0, y = 0, w = 0, h = 0;
  };
  std::map<uint32_t, Box> nodes;
  struct Curve {
    std::vector<std::pair<double, double>> points;
    std::pair<double, double> head;
  };
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, Curve> edges;
  double width = 0, height = 0;
};

/// The graph in DOT: one node per graph node (variables as ellipses, ops as boxes labelled with
/// name and op — a tvm_op with its function — plus each output's shape and dtype once
/// inferred), an edge per input (labelled with the output index when the producer has several),
/// and, after GraphFusePartition, one cluster per fusion group of two or more nodes. With
/// `placed`, every node and edge it places carries its `pos` (and the graph its `bb`).
std::string graphToDot(const Graph &g, const DotPlacement *placed = nullptr);

} // namespace loupe
